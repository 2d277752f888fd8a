package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * envoyproxy/ratelimit's configuration cases: each descriptor gets the rule (and limit) its tests expect, including
 * none.
 */
class EnvoyConfigTest {

    static final String BASIC =
            """
            domain: test-domain
            descriptors:
              - key: key1
                value: value1
                descriptors:
                  - key: subkey1
                    rate_limit: {unit: second, requests_per_unit: 5}
                  - key: subkey1
                    value: subvalue1
                    rate_limit: {unit: second, requests_per_unit: 10}
              - key: key2
                rate_limit: {unit: minute, requests_per_unit: 20}
              - key: key2
                value: value2
                rate_limit: {unit: minute, requests_per_unit: 30}
              - key: key2
                value: value3
              - key: key3
                rate_limit: {unit: hour, requests_per_unit: 1}
              - key: key4
                rate_limit: {name: key4_rate_limit, unit: day, requests_per_unit: 1}
              - key: key5
                value: value5
                rate_limit: {unit: day, requests_per_unit: 15}
                descriptors:
                  - key: subkey5
                    value: subvalue5
                    rate_limit: {unit: day, requests_per_unit: 25}
              - key: key6
                rate_limit:
                  unlimited: true
              - key: key7
                detailed_metric: true
                rate_limit: {unit: minute, requests_per_unit: 70}
            """;

    static Optional<Rule> match(Policies p, String... kv) {
        return p.match("test-domain", Descriptor.of(kv));
    }

    static Limit limitOf(Policies p, String... kv) {
        Rule r = match(p, kv).orElseThrow(() -> new AssertionError("no rule for " + String.join(",", kv)));
        assertEquals(1, r.limits().size());
        return r.limits().get(0);
    }

    @Test
    void basic() {
        Policies p = Policies.parse("basic.yaml", BASIC);
        assertEquals(java.util.Set.of("test-domain"), p.domains());
        assertTrue(p.match("foo_domain", Descriptor.of("key1", "value1")).isEmpty(), "unknown domain");
        assertTrue(match(p, "key1", "something").isEmpty(), "no key-only rule for key1");
        assertTrue(match(p, "key1", "value1").isEmpty(), "key1=value1 has no limit of its own");
        assertTrue(match(p, "key2", "value2", "subkey", "subvalue").isEmpty(), "deeper than the tree");
        assertTrue(match(p, "key5", "value5", "subkey5", "subvalue").isEmpty(), "no subkey5 rule for that value");

        Limit l = limitOf(p, "key1", "value1", "subkey1", "something");
        assertEquals(5, l.requestsPerUnit());
        assertEquals("second", l.unit());
        assertEquals(Duration.ofSeconds(1), l.window());
        assertEquals(
                "key1_value1.subkey1",
                match(p, "key1", "value1", "subkey1", "something").get().path());

        assertEquals(10, limitOf(p, "key1", "value1", "subkey1", "subvalue1").requestsPerUnit());
        assertEquals(
                "key1_value1.subkey1_subvalue1",
                match(p, "key1", "value1", "subkey1", "subvalue1").get().path());
        assertEquals(20, limitOf(p, "key2", "something").requestsPerUnit());
        assertEquals(Duration.ofMinutes(1), limitOf(p, "key2", "something").window());
        assertEquals(30, limitOf(p, "key2", "value2").requestsPerUnit());
        assertTrue(match(p, "key2", "value3").isEmpty(), "a value with no limit and no children is let through");
        assertEquals(1, limitOf(p, "key3", "foo").requestsPerUnit());
        assertEquals(Duration.ofHours(1), limitOf(p, "key3", "foo").window());
        assertEquals("", limitOf(p, "key3", "foo").name());
        assertEquals("key4_rate_limit", limitOf(p, "key4", "foo").name());
        assertEquals(Duration.ofDays(1), limitOf(p, "key4", "foo").window());
        assertEquals(15, limitOf(p, "key5", "value5").requestsPerUnit());
        assertEquals(25, limitOf(p, "key5", "value5", "subkey5", "subvalue5").requestsPerUnit());
        assertTrue(match(p, "key6", "foo").get().unlimited());
        Rule key7 = match(p, "key7", "unspecified_value").get();
        assertTrue(key7.detailedMetric());
        assertEquals(70, key7.limits().get(0).requestsPerUnit());
        assertEquals(key7, match(p, "key7", "another_value").get(), "every value shares the key-only rule");
    }

    @Test
    void keyValueBeatsKeyOnlyWhicheverComesFirst() {
        Policies p = Policies.parse(
                "order.yaml",
                """
                domain: test-domain
                descriptors:
                  - key: remote_address
                    rate_limit: {unit: second, requests_per_unit: 10}
                  - key: remote_address
                    value: 50.0.0.5
                    rate_limit: {unit: second, requests_per_unit: 0}
                """);
        assertEquals(10, limitOf(p, "remote_address", "50.0.0.1").requestsPerUnit());
        assertEquals(0, limitOf(p, "remote_address", "50.0.0.5").requestsPerUnit());
    }

    @Test
    void aDescriptorOfNEntriesUsesTheRuleNLevelsDeep() {
        Policies flat = Policies.parse(
                "flat.yaml",
                """
                domain: test-domain
                descriptors:
                  - key: key
                    value: value
                    rate_limit: {requests_per_unit: 300, unit: second}
                """);
        assertTrue(match(flat, "key", "value", "subkey", "subvalue").isEmpty());
        Policies nested = Policies.parse(
                "nested.yaml",
                """
                domain: test-domain
                descriptors:
                  - key: key
                    value: value
                    descriptors:
                      - key: subkey
                        rate_limit: {requests_per_unit: 300, unit: second}
                """);
        assertEquals(300, limitOf(nested, "key", "value", "subkey", "subvalue").requestsPerUnit());
        assertTrue(match(nested, "key", "value").isEmpty());
    }

    @Test
    void wildcards() {
        Policies p = Policies.parse(
                "wildcard.yaml",
                """
                domain: test-domain
                descriptors:
                  - key: wild
                    value: foo*
                    rate_limit: {unit: minute, requests_per_unit: 20}
                  - key: noWild
                    value: foo
                    rate_limit: {unit: minute, requests_per_unit: 20}
                  - key: noVal
                    rate_limit: {unit: minute, requests_per_unit: 20}
                  - key: midWild
                    value: bar*b
                    rate_limit: {unit: minute, requests_per_unit: 20}
                  - key: multiWild
                    value: foo*bar*baz
                    rate_limit: {unit: minute, requests_per_unit: 10}
                  - key: nestedWild
                    value: val1
                    descriptors:
                      - key: wild
                        value: goo*
                        rate_limit: {unit: minute, requests_per_unit: 20}
                """);
        assertEquals(match(p, "noVal", "foo1"), match(p, "noVal", "foo2"));
        assertEquals("wild_foo*", match(p, "wild", "foo1").get().path());
        assertEquals(match(p, "wild", "foo1"), match(p, "wild", "foo2"));
        assertEquals(match(p, "wild", "foo1"), match(p, "wild", "foo"), "* matches the empty run");
        assertEquals(
                "nestedWild_val1.wild_goo*",
                match(p, "nestedWild", "val1", "wild", "goo2").get().path());
        assertTrue(match(p, "wild", "bar").isEmpty());
        assertTrue(match(p, "noWild", "foo1").isEmpty(), "a value without * matches only itself");
        assertEquals("midWild_bar*b", match(p, "midWild", "barab").get().path());
        assertTrue(match(p, "midWild", "bar123b").isPresent());
        assertTrue(match(p, "midWild", "barb").isPresent());
        assertTrue(match(p, "midWild", "bara").isEmpty());
        assertTrue(match(p, "midWild", "xbarb").isEmpty());
        assertEquals(10, limitOf(p, "multiWild", "foo123bar456baz").requestsPerUnit());
        assertTrue(match(p, "multiWild", "foobarbaz").isPresent());
        assertTrue(match(p, "multiWild", "foo123baz").isEmpty());
        assertTrue(match(p, "multiWild", "bar456baz").isEmpty());
    }

    @Test
    void exactValueBeatsAWildcardAndTheFirstWildcardWins() {
        Policies p = Policies.parse(
                "precedence.yaml",
                """
                domain: test-domain
                descriptors:
                  - key: file
                    value: test*
                    share_threshold: true
                    rate_limit: {unit: minute, requests_per_unit: 100}
                  - key: file
                    value: test1
                    rate_limit: {unit: minute, requests_per_unit: 50}
                  - key: file
                    value: te*
                    rate_limit: {unit: minute, requests_per_unit: 7}
                  - key: file
                    rate_limit: {unit: minute, requests_per_unit: 1}
                """);
        assertEquals(50, limitOf(p, "file", "test1").requestsPerUnit());
        assertEquals(100, limitOf(p, "file", "test2").requestsPerUnit());
        assertEquals(7, limitOf(p, "file", "tea").requestsPerUnit());
        assertEquals(1, limitOf(p, "file", "other").requestsPerUnit());
    }

    @Test
    void shadowModeIsDryRun() {
        Policies p = Policies.parse(
                "shadow.yaml",
                """
                domain: test-domain
                descriptors:
                  - key: key1
                    value: value1
                    descriptors:
                      - key: subkey1
                        rate_limit: {unit: second, requests_per_unit: 5}
                      - key: subkey1
                        value: subvalue1
                        rate_limit: {unit: second, requests_per_unit: 10}
                        shadow_mode: true
                  - key: key2
                    rate_limit: {unit: minute, requests_per_unit: 20}
                    shadow_mode: true
                  - key: key2
                    value: value2
                    rate_limit: {unit: minute, requests_per_unit: 30}
                """);
        assertEquals(
                Mode.ENFORCE,
                match(p, "key1", "value1", "subkey1", "something").get().mode());
        assertEquals(
                Mode.DRY_RUN,
                match(p, "key1", "value1", "subkey1", "subvalue1").get().mode());
        assertEquals(Mode.DRY_RUN, match(p, "key2", "something").get().mode());
        assertEquals(Mode.ENFORCE, match(p, "key2", "value2").get().mode());
    }

    @Test
    void shareThresholdAndReplacesAreParsed() {
        Policies p = Policies.parse(
                "share.yaml",
                """
                domain: test-domain
                descriptors:
                  - key: files
                    value: files/*
                    share_threshold: true
                    rate_limit: {unit: minute, requests_per_unit: 100}
                  - key: key_1
                    value: value_1
                    descriptors:
                      - key: user
                        value: bkthomps
                        rate_limit: {name: specific_limit, requests_per_unit: 5, unit: second}
                  - key: key_2
                    value: value_2
                    descriptors:
                      - key: user
                        value: bkthomps
                        rate_limit:
                          replaces:
                            - name: specific_limit
                          requests_per_unit: 10
                          unit: second
                """);
        assertEquals(100, limitOf(p, "files", "files/a.pdf").requestsPerUnit());
        assertEquals(
                java.util.List.of("specific_limit"),
                limitOf(p, "key_2", "value_2", "user", "bkthomps").replaces());
        assertEquals(
                "specific_limit",
                limitOf(p, "key_1", "value_1", "user", "bkthomps").name());
    }

    @Test
    void envoyOnlyFieldsAreAccepted() {
        Policies p = Policies.parse(
                "extras.yaml",
                """
                domain: test-domain
                descriptors:
                  - key: route
                    value_to_metric: true
                    metadata:
                      anything: {goes: [here]}
                    rate_limit: {unit: MINUTE, requests_per_unit: 60}
                """);
        assertEquals("minute", limitOf(p, "route", "api").unit());
        assertFalse(match(p, "route", "api").get().unlimited());
    }
}
