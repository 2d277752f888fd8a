package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.ManualClock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** envoyproxy/ratelimit's configuration cases as decisions, on a hand-moved clock. */
class PolicyLimiterTest {

    final ManualClock clock = Clocks.atHourStart();

    PolicyLimiter limiter(String yaml) {
        return PolicyLimiter.builder(Policies.parse("test.yaml", yaml))
                .clock(clock)
                .build();
    }

    static Verdict check(PolicyLimiter l, String... kv) {
        return l.check("test-domain", List.of(Descriptor.of(kv)), 1);
    }

    static int admitted(PolicyLimiter l, int attempts, String... kv) {
        int n = 0;
        for (int i = 0; i < attempts; i++) {
            if (check(l, kv).allowed()) {
                n++;
            }
        }
        return n;
    }

    /**
     * Two domains asked in turn, each by a constant and by a string made at every request (as the service's are), and
     * a domain with no rules: each check is answered by its own domain's rules, whichever string object names it.
     */
    @Test
    void eachDomainIsFoundWhateverStringNamesIt() {
        try (PolicyLimiter l = PolicyLimiter.builder(Policies.parse(Map.of(
                        "a.yaml",
                        "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 2}\n",
                        "b.yaml",
                        "domain: b\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 3}\n")))
                .clock(clock)
                .build()) {
            List<Descriptor> k = List.of(Descriptor.of("k", "v"));
            int a = 0;
            int b = 0;
            for (int i = 0; i < 5; i++) {
                a += l.check("a", k, 1).allowed() ? 1 : 0;
                b += l.check(new String(new char[] {'b'}), k, 1).allowed() ? 1 : 0;
                b += l.check("b", k, 1).allowed() ? 1 : 0;
                a += l.check(new String(new char[] {'a'}), k, 1).allowed() ? 1 : 0;
                assertTrue(l.check("c", k, 1).allowed(), "a domain with no rules limits nothing");
            }
            assertEquals(2, a, "domain a's limit, asked by a constant and by new strings");
            assertEquals(3, b, "domain b's limit");
        }
    }

    @Test
    void basicLimitsAnswerAsEnvoy() {
        PolicyLimiter l = limiter(EnvoyConfigTest.BASIC);
        assertEquals(5, admitted(l, 8, "key1", "value1", "subkey1", "something"));
        assertEquals(10, admitted(l, 12, "key1", "value1", "subkey1", "subvalue1"));
        assertEquals(5, admitted(l, 8, "key1", "value1", "subkey1", "other"), "each key-only value its own counter");
        assertEquals(30, admitted(l, 40, "key2", "value2"));
        assertEquals(20, admitted(l, 40, "key2", "anything"));
        assertEquals(1, admitted(l, 3, "key3", "foo"));

        Verdict v = check(l, "key1", "value1", "subkey1", "something");
        assertFalse(v.allowed());
        DescriptorVerdict d = v.descriptor(0);
        assertEquals(Outcome.DENIED, d.outcome());
        assertEquals("key1_value1.subkey1", d.rule().orElseThrow().path());
        LimitVerdict lv = d.limit().orElseThrow();
        assertEquals(5, lv.limit().requestsPerUnit());
        assertEquals(0, lv.remaining());
        assertEquals(Duration.ofSeconds(1), lv.retryAfter(), "a fixed window aligned to the second");
        assertEquals(Duration.ofSeconds(1), v.retryAfter());

        clock.advance(Duration.ofSeconds(1));
        Verdict next = check(l, "key1", "value1", "subkey1", "something");
        assertTrue(next.allowed());
        assertEquals(4, next.descriptor(0).remaining());
        assertEquals(Outcome.ALLOWED, next.descriptor(0).outcome());
    }

    @Test
    void noLimitAnswers() {
        PolicyLimiter l = limiter(EnvoyConfigTest.BASIC);
        Verdict unknownDomain = l.check("foo_domain", List.of(Descriptor.of("key1", "value1")), 1);
        assertTrue(unknownDomain.allowed());
        assertEquals(Outcome.NO_LIMIT, unknownDomain.descriptor(0).outcome());
        assertTrue(unknownDomain.descriptor(0).rule().isEmpty());
        assertEquals(Long.MAX_VALUE, unknownDomain.remaining());
        assertEquals(1000, admitted(l, 1000, "key2", "value3"), "whitelisted value");
        assertEquals(1000, admitted(l, 1000, "key1", "value1"), "placeholder without limit");
        Verdict unlimited = check(l, "key6", "foo");
        assertEquals(Outcome.UNLIMITED, unlimited.descriptor(0).outcome());
        assertEquals(1000, admitted(l, 1000, "key6", "foo"));
        assertEquals(9, l.engineForTest().limiterCount(), "one limiter per distinct shape; unlimited has none");
    }

    @Test
    void zeroRequestsPerUnitRefusesEverythingAndHitsAboveTheLimitNeverPass() {
        PolicyLimiter l = limiter(
                """
                domain: test-domain
                descriptors:
                  - {key: remote_address, rate_limit: {unit: second, requests_per_unit: 10}}
                  - {key: remote_address, value: 50.0.0.5, rate_limit: {unit: second, requests_per_unit: 0}}
                """);
        assertEquals(0, admitted(l, 5, "remote_address", "50.0.0.5"));
        Verdict big = l.check("test-domain", List.of(Descriptor.of("remote_address", "1.2.3.4")), 11);
        assertFalse(big.allowed());
        assertEquals(10, admitted(l, 12, "remote_address", "1.2.3.4"), "the refused 11 hits took nothing");
    }

    @Test
    void replacesDropsTheReplacedLimitAndLeavesItsCounterAlone() {
        PolicyLimiter l = limiter(
                """
                domain: test-domain
                descriptors:
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
                          replaces: [{name: specific_limit}]
                          requests_per_unit: 10
                          unit: second
                """);
        List<Descriptor> both = List.of(
                Descriptor.of("key_1", "value_1", "user", "bkthomps"),
                Descriptor.of("key_2", "value_2", "user", "bkthomps"));
        int admitted = 0;
        Verdict last = null;
        for (int i = 0; i < 12; i++) {
            last = l.check("test-domain", both, 1);
            admitted += last.allowed() ? 1 : 0;
        }
        assertEquals(10, admitted, "10/s applies, the 5/s is replaced");
        assertEquals(Outcome.REPLACED, last.descriptor(0).outcome());
        assertEquals(Outcome.DENIED, last.descriptor(1).outcome());
        assertEquals(5, admitted(l, 7, "key_1", "value_1", "user", "bkthomps"), "the replaced limit was not touched");
    }

    @Test
    void shadowModeNeverRefusesAndCountsWouldDeny() {
        PolicyLimiter l = limiter(
                """
                domain: test-domain
                descriptors:
                  - key: key2
                    rate_limit: {unit: minute, requests_per_unit: 20}
                    shadow_mode: true
                  - key: key2
                    value: value2
                    rate_limit: {unit: minute, requests_per_unit: 30}
                """);
        int wouldDeny = 0;
        for (int i = 0; i < 25; i++) {
            Verdict v = check(l, "key2", "x");
            assertTrue(v.allowed());
            wouldDeny += v.descriptor(0).outcome() == Outcome.WOULD_DENY ? 1 : 0;
        }
        assertEquals(5, wouldDeny);
        assertEquals(30, admitted(l, 31, "key2", "value2"));
    }

    @Test
    void shareThresholdSharesOneCounterAcrossWildcardValues() {
        PolicyLimiter l = limiter(
                """
                domain: test-domain
                descriptors:
                  - key: files
                    value: files/*
                    share_threshold: true
                    rate_limit: {unit: hour, requests_per_unit: 10}
                  - key: files_no_share
                    value: files_no_share/*
                    share_threshold: false
                    rate_limit: {unit: hour, requests_per_unit: 10}
                """);
        assertEquals(5, admitted(l, 5, "files", "files/a.pdf"));
        assertEquals(5, admitted(l, 5, "files", "files/b.csv"));
        assertFalse(check(l, "files", "files/c.txt").allowed(), "the shared threshold of 10 is reached");
        assertEquals(10, admitted(l, 11, "files_no_share", "files_no_share/a.pdf"));
        assertEquals(10, admitted(l, 11, "files_no_share", "files_no_share/b.csv"), "isolated thresholds");
    }

    @Test
    void nestedDescriptorsCountPerValuePath() {
        PolicyLimiter l = limiter(
                """
                domain: test-domain
                descriptors:
                  - key: message_type
                    value: marketing
                    descriptors:
                      - key: to_number
                        rate_limit: {unit: day, requests_per_unit: 5}
                  - key: to_number
                    rate_limit: {unit: day, requests_per_unit: 100}
                """);
        assertEquals(5, admitted(l, 6, "message_type", "marketing", "to_number", "2061111111"));
        assertEquals(5, admitted(l, 6, "message_type", "marketing", "to_number", "2062222222"));
        assertEquals(100, admitted(l, 101, "to_number", "2061111111"));
    }

    @Test
    void counterKeysEscapeTheirSeparators() {
        try (PolicyLimiter l = PolicyLimiter.builder(
                        Policies.parse(
                                "d.yaml",
                                """
                                domain: d
                                descriptors:
                                  - key: a
                                    rate_limit: {unit: second, requests_per_unit: 1}
                                    descriptors:
                                      - key: c
                                        rate_limit: {unit: second, requests_per_unit: 1}
                                  - key: files
                                    value: files/*
                                    share_threshold: true
                                    rate_limit: {unit: second, requests_per_unit: 1}
                                """))
                .build()) {
            Engine e = l.engineForTest();
            assertEquals("d|a=b\\|c\\=d#0", e.keysForTest("d", Descriptor.of("a", "b|c=d"))[0]);
            assertEquals("d|a=b|c=d#0", e.keysForTest("d", Descriptor.of("a", "b", "c", "d"))[0]);
            assertEquals("d|files~files/*#0", e.keysForTest("d", Descriptor.of("files", "files/x"))[0]);
        }
    }

    @Test
    void argumentsAreChecked() {
        PolicyLimiter l = limiter(EnvoyConfigTest.BASIC);
        assertThrows(IllegalArgumentException.class, () -> l.check("test-domain", List.of(), 1));
        assertThrows(IllegalArgumentException.class, () -> l.check("test-domain", List.of(Descriptor.of("a", "b")), 0));
        l.close();
        l.close();
        assertThrows(IllegalStateException.class, () -> check(l, "key3", "x"));
        assertTrue(l.engineForTest() == null);
    }
}
