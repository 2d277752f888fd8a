package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.server.StatsdMapper.Observer;
import dev.sluice.server.StatsdMapper.Result;
import dev.sluice.server.StatsdMapper.Type;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * statsd_exporter's mapping as envoyproxy/ratelimit's Prometheus sink applies it: its default mapping on the names
 * {@link EnvoyStats} counts, a mapping file's globs, regular expressions, substitutions, types and drops, and the
 * refusal of what is not implemented with its file and line.
 */
class StatsdMapperTest {
    private static final StatsdMapper DEFAULTS = StatsdMapper.defaults(false);

    private static Map<String, String> labels(String... pairs) {
        Map<String, String> m = new TreeMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put(pairs[i], pairs[i + 1]);
        }
        return m;
    }

    private static void assertMapped(Result r, String name, Map<String, String> labels) {
        assertEquals(name, r.name());
        assertEquals(labels, r.labels());
        assertTrue(r.mapped(), name);
    }

    /** The examples of envoyproxy/ratelimit's own sink tests, and each name EnvoyStats counts. */
    @Test
    void theDefaultMappingNamesEnvoyproxyRatelimitsStats() {
        assertMapped(
                DEFAULTS.map("ratelimit.service.rate_limit.mongo_cps.database_users.total_hits", Type.COUNTER),
                "ratelimit_service_rate_limit_total_hits",
                labels("domain", "mongo_cps", "key1", "database_users"));
        assertMapped(
                DEFAULTS.map("ratelimit.service.rate_limit.domain1.key1_val1.key2_val2.over_limit", Type.COUNTER),
                "ratelimit_service_rate_limit_over_limit",
                labels("domain", "domain1", "key1", "key1_val1", "key2", "key2_val2"));
        assertMapped(
                DEFAULTS.map(
                        "ratelimit.service.rate_limit.domain1.key3_val3.key4_val4.key5_val5.within_limit",
                        Type.COUNTER),
                "ratelimit_service_rate_limit_within_limit",
                labels("domain", "domain1", "key1", "key3_val3", "key2", "key4_val4"));
        for (String stat : new String[] {"near_limit", "shadow_mode"}) {
            assertMapped(
                    DEFAULTS.map("ratelimit.service.rate_limit.edge.k_v." + stat, Type.COUNTER),
                    "ratelimit_service_rate_limit_" + stat,
                    labels("domain", "edge", "key1", "k_v"));
        }
        assertMapped(
                DEFAULTS.map(EnvoyStats.TOTAL_REQUESTS, Type.COUNTER),
                "ratelimit_service_total_requests",
                labels("grpc_method", "ShouldRateLimit"));
        assertMapped(
                DEFAULTS.map(EnvoyStats.STORE_ERRORS, Type.COUNTER),
                "ratelimit_service_should_rate_limit_error",
                labels("err_type", "redis_error"));
        assertMapped(
                DEFAULTS.map(EnvoyStats.CONFIG_LOAD_SUCCESS, Type.COUNTER),
                "ratelimit_service_config_load_success",
                labels());
        assertMapped(
                DEFAULTS.map(EnvoyStats.CONFIG_LOAD_ERROR, Type.COUNTER),
                "ratelimit_service_config_load_error",
                labels());
        Result time = DEFAULTS.map(EnvoyStats.RESPONSE_TIME, Type.OBSERVER);
        assertMapped(time, "ratelimit_service_response_time_seconds", labels("grpc_method", "ShouldRateLimit"));
        assertEquals(Observer.HISTOGRAM, time.observer());
        assertEquals(0.001, time.scale());
        assertEquals(11, time.buckets().size());
        assertTrue(
                Double.isNaN(StatsdMapper.defaults(true)
                        .map(EnvoyStats.RESPONSE_TIME, Type.OBSERVER)
                        .scale()),
                "PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS: no scale");
    }

    @Test
    void aNameNoMappingMatchesIsEscaped() {
        Result r = DEFAULTS.map("ratelimit.service.call.should_rate_limit.redis_error", Type.OBSERVER);
        assertFalse(r.mapped(), "match_metric_type: counter does not match a timer");
        assertEquals("ratelimit_service_call_should_rate_limit_redis_error", r.name());
        assertEquals(Observer.SUMMARY, r.observer(), "statsd_exporter's default observer");
        assertEquals(
                "ratelimit_service_rate_limit_edge_total_hits",
                DEFAULTS.map("ratelimit.service.rate_limit.edge.total_hits", Type.COUNTER)
                        .name());
        assertEquals("_9lives_a_b_c__", StatsdMapper.escape("9lives.a--b-c/é"));
        assertEquals("ok_Name_1", StatsdMapper.escape("ok_Name_1"));
        assertEquals("", StatsdMapper.escape(""));
    }

    private static final String CUSTOM =
            """
            defaults:
              timer_type: histogram
              buckets: [1, 10, 100]
            mappings:
              # a regular expression before a glob that matches too: the glob wins, as statsd_exporter's do
              - match: 'ratelimit\\.service\\.rate_limit\\.([^.]+)\\.(.+)\\.(total_hits|over_limit)'
                match_type: regex
                name: "rl_${3}_by_rule"
                labels:
                  domain: "$1"
                  rule: "$2"
                  whole: "$0"
              - match: "ratelimit.service.rate_limit.*.*.total_hits"
                name: "rl_hits"
                help: "Hits per domain and key."
                labels:
                  domain: "$1"
                  key: "${2}!"
                  missing: "[$3]"
              - match: "ratelimit.service.rate_limit.*.*.total_hits"
                name: "never_used"
              - match: "ratelimit.service.rate_limit.*.*.near_limit"
                action: drop
                name: "dropped"
              - match: "ratelimit_server.*.*"
                match_metric_type: counter
                name: "server_$2"
                labels:
                  method: "$1"
              - match: "ratelimit_server.*.response_time"
                name: "latency_ms"
              - match: '(?P<first>[a-z]+)\\.odd'
                match_type: regex
                name: "odd"
                labels:
                  first: "${first}"
                  price: "$$5"
                  glued: "$1x"
            """;

    @Test
    void aMappingFileWithGlobsRegularExpressionsAndDrops() throws Exception {
        StatsdMapper m = StatsdMapper.parse("custom.yaml", CUSTOM);
        Result hits = m.map("ratelimit.service.rate_limit.edge.k_v.total_hits", Type.COUNTER);
        assertMapped(hits, "rl_hits", labels("domain", "edge", "key", "k_v!", "missing", "[]"));
        assertEquals("Hits per domain and key.", hits.help());
        assertMapped(
                m.map("ratelimit.service.rate_limit.edge.a_1.b_2.total_hits", Type.COUNTER),
                "rl_total_hits_by_rule",
                labels(
                        "domain", "edge",
                        "rule", "a_1.b_2",
                        "whole", "ratelimit.service.rate_limit.edge.a_1.b_2.total_hits"));
        assertMapped(
                m.map("ratelimit.service.rate_limit.edge.k_v.over_limit", Type.COUNTER),
                "rl_over_limit_by_rule",
                labels("domain", "edge", "rule", "k_v", "whole", "ratelimit.service.rate_limit.edge.k_v.over_limit"));
        assertTrue(m.map("ratelimit.service.rate_limit.edge.k_v.near_limit", Type.COUNTER)
                .drop());
        assertMapped(
                m.map("ratelimit_server.ShouldRateLimit.total_requests", Type.COUNTER),
                "server_total_requests",
                labels("method", "ShouldRateLimit"));
        Result time = m.map("ratelimit_server.ShouldRateLimit.response_time", Type.OBSERVER);
        assertMapped(time, "latency_ms", labels());
        assertEquals(Observer.HISTOGRAM, time.observer(), "timer_type from the defaults");
        assertEquals(3, time.buckets().size());
        assertTrue(Double.isNaN(time.scale()));
        assertMapped(m.map("abc.odd", Type.GAUGE), "odd", labels("first", "abc", "price", "$5", "glued", ""));
        assertMapped(m.map("xx.abc.odd.yy", Type.GAUGE), "odd", labels("first", "abc", "price", "$5", "glued", ""));
        assertFalse(m.map("ratelimit.service.rate_limit.edge.within_limit", Type.COUNTER)
                .mapped());
    }

    @Test
    void templatesAsStatsdExporterReadsThem() {
        String[] captures = {"a", "b"};
        assertEquals("a-b-", StatsdMapper.globFormat("$1-${2}-$3", captures));
        assertEquals("x_", StatsdMapper.globFormat("x_$1y", captures), "$1y names no capture: dropped");
        Matcher found = Pattern.compile("(a)(b)?(?<n>c)").matcher("zac");
        assertTrue(found.find());
        assertEquals("a|| c|c|$|$|${1", StatsdMapper.expand("$1|$2| ${3}|${n}|$$|$|${1", found));
    }

    private static String refusal(String text) {
        return assertThrows(StatsdMapper.MapperException.class, () -> StatsdMapper.parse("conf.yaml", text))
                .getMessage();
    }

    @Test
    void whatIsNotImplementedOrNotValidIsRefusedWithItsLine() {
        assertEquals(
                "conf.yaml:5: 'ttl' is a statsd_exporter feature Sluice does not implement (docs/envoy-ratelimit.md"
                        + " lists what it does)",
                refusal(
                        """
                        mappings:
                          - match: "a.*"
                            name: "a"
                          - match: "b.*"
                            ttl: 1m
                            name: "b"
                        """));
        assertTrue(
                refusal("defaults:\n  glob_disable_ordering: true\n")
                        .startsWith("conf.yaml:2: 'glob_disable_ordering'"),
                "defaults too");
        assertTrue(refusal("mappings:\n- match: a.*\n  name: a\n  summary_options: {}\n")
                .startsWith("conf.yaml:4: 'summary_options' is a statsd_exporter feature"));
        assertEquals("conf.yaml:3: unknown field 'nmae' in a mapping", refusal("mappings:\n- match: a.*\n  nmae: a\n"));
        assertEquals("conf.yaml:2: invalid match: a*b", refusal("mappings:\n- match: a*b\n  name: a\n"));
        assertTrue(refusal("mappings:\n- match: '(a'\n  match_type: regex\n  name: a\n")
                .startsWith("conf.yaml:2: invalid regex (a in mapping"));
        assertEquals(
                "conf.yaml:4: invalid label key: k", refusal("mappings:\n- match: a.*\n  name: a\n  labels: {k: v}\n"));
        assertEquals("conf.yaml:2: metric mapping didn't set a metric name", refusal("mappings:\n- match: a.*\n"));
        assertEquals(
                "conf.yaml:3: invalid action 'keep': expected map or drop",
                refusal("mappings:\n- match: a.*\n  action: keep\n  name: a\n"));
        assertTrue(refusal("mappings: [\n").startsWith("conf.yaml:"), "bad YAML names its file too");
    }
}
