package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code serve}'s Prometheus listener options, from the command line and from envoyproxy/ratelimit's variables. */
class PrometheusOptionsTest {
    @TempDir
    Path dir;

    private static Stats.Prometheus prometheus(Map<String, String> env, String... args) {
        List<String> all = new ArrayList<>(EnvSettings.read(env).args());
        all.addAll(List.of(args));
        return Stats.prometheus(Options.parse("serve", all, ServeCommand.VALUED, ServeCommand.FLAGS));
    }

    @Test
    void aFlagWinsOverTheEnvironmentAndAnAbsentMappingFileFallsBackAloud() {
        String absent = dir.resolve("conf.yaml").toString();
        Stats.Prometheus p = prometheus(
                Map.of("USE_PROMETHEUS", "true", "PROMETHEUS_ADDR", ":19001", "PROMETHEUS_MAPPER_YAML", absent),
                "--prometheus-addr",
                "127.0.0.1:0",
                "--prometheus-path",
                "/prom");
        assertEquals(0, p.port());
        assertEquals("127.0.0.1", p.host().getHostAddress());
        assertEquals("/prom", p.path());
        assertEquals(StatsdMapper.DEFAULT_SOURCE, p.mapper().source());
        assertEquals(
                List.of("warning: the statsd_exporter mapping " + absent + " (--prometheus-mapper) does not exist:"
                        + " envoyproxy/ratelimit's default mapping is used instead"),
                p.notices());
        Stats.Prometheus defaults = prometheus(Map.of("USE_PROMETHEUS", "true"));
        assertEquals(9090, defaults.port());
        assertNull(defaults.host(), "the --bind address");
        assertEquals("/metrics", defaults.path());
        assertEquals(List.of(), defaults.notices());
        assertNull(prometheus(Map.of()));
    }

    @Test
    void aMappingFeatureNotImplementedStopsTheStartNamingFileAndLine() throws IOException {
        Path file = Files.writeString(
                dir.resolve("conf.yaml"),
                """
                mappings:
                  - match: "ratelimit.service.rate_limit.*.*.total_hits"
                    name: "hits"
                    observer_type: histogram
                    histogram_options:
                      native_histogram_bucket_factor: 1.1
                """);
        String m = assertThrows(
                        UsageException.class,
                        () -> prometheus(Map.of(), "--prometheus-addr", ":0", "--prometheus-mapper", file.toString()))
                .getMessage();
        assertEquals(
                "serve: the statsd_exporter mapping of --prometheus-mapper cannot be used: " + file + ":6:"
                        + " 'native_histogram_bucket_factor' is a statsd_exporter feature Sluice does not implement"
                        + " (docs/envoy-ratelimit.md lists what it does)",
                m);
        assertTrue(assertThrows(UsageException.class, () -> prometheus(Map.of(), "--prometheus-path", "/p"))
                .getMessage()
                .contains("--prometheus-path needs --prometheus-addr"));
        assertTrue(assertThrows(UsageException.class, () -> prometheus(Map.of(), "--prometheus-addr", "9090"))
                .getMessage()
                .contains("--prometheus-addr '9090' is not valid: expected [HOST]:PORT"));
    }

    @Test
    void aCustomMappingFileIsUsed() throws IOException {
        Path file = Files.writeString(
                dir.resolve("conf.yaml"),
                """
                mappings:
                  - match: "ratelimit.service.rate_limit.*.*.total_hits"
                    name: "hits"
                    labels: {domain: "$1"}
                """);
        Stats.Prometheus p = prometheus(Map.of(), "--prometheus-addr", ":0", "--prometheus-mapper", file.toString());
        assertEquals(file.toString(), p.mapper().source());
        assertEquals(
                "hits",
                p.mapper()
                        .map("ratelimit.service.rate_limit.d.k.total_hits", StatsdMapper.Type.COUNTER)
                        .name());
    }
}
