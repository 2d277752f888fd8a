package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.sluice.policy.Descriptor;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.policy.Verdict;
import dev.sluice.testkit.ManualClock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The fields of verdicts the filter cannot easily be driven to over HTTP: odd names, global dry run, impossible costs. */
class RateLimitFieldsTest {

    final ManualClock clock = new ManualClock(Instant.parse("2026-03-02T10:00:00Z"));

    PolicyLimiter limiter(String yaml, boolean dryRun) {
        return PolicyLimiter.builder(Policies.parse("t.yaml", yaml))
                .clock(clock)
                .dryRun(dryRun)
                .build();
    }

    static final String ODD =
            """
            domain: d
            descriptors:
              - key: client_id
                value: "we\\"ird\\\\ünï"
                rate_limit: {window: 500ms, requests_per_unit: 2}
              - key: client_id
                value: twins
                rate_limits:
                  - {unit: minute, requests_per_unit: 10}
                  - {unit: hour, requests_per_unit: 100}
              - key: client_id
                value: same
                rate_limits:
                  - {unit: minute, requests_per_unit: 10, name: n}
                  - {unit: hour, requests_per_unit: 100, name: n2}
              - key: tenant
                rate_limit: {unit: minute, requests_per_unit: 10, name: n}
            """;

    @Test
    void namesAreSfStringsOfPrintableAsciiAndUniqueInAResponse() {
        try (PolicyLimiter l = limiter(ODD, false)) {
            Verdict v = l.check("d", List.of(Descriptor.of("client_id", "we\"ird\\ünï")), 1);
            RateLimitFields f = RateLimitFields.of(v, false, false);
            String policy = f.policyField();
            assertEquals("\"client_id_we\\\"ird\\\\%C3%BCn%C3%AF\";q=2;w=1", policy, "a 500 ms window is w=1");
            StructuredFields.Item item = StructuredFields.parseItems(policy).get(0);
            assertEquals("client_id_we\"ird\\%C3%BCn%C3%AF", item.value());

            Verdict twins = l.check("d", List.of(Descriptor.of("client_id", "twins")), 1);
            assertEquals(
                    "\"client_id_twins#0\";q=10;w=60, \"client_id_twins#1\";q=100;w=3600",
                    RateLimitFields.of(twins, false, false).policyField(),
                    "unnamed limits of one rule: the rule's path and the index");

            Verdict clash =
                    l.check("d", List.of(Descriptor.of("client_id", "same"), Descriptor.of("tenant", "acme")), 1);
            assertEquals(
                    "\"n\";q=10;w=60, \"n2\";q=100;w=3600, \"n#2\";q=10;w=60",
                    RateLimitFields.of(clash, false, false).policyField(),
                    "a name met twice in one response gets #2");
        }
    }

    @Test
    void aGlobalDryRunIsNotAdvertisedUnlessAsked() {
        try (PolicyLimiter l = limiter(ODD, true)) {
            Verdict v = l.check("d", List.of(Descriptor.of("tenant", "acme")), 1);
            RateLimitFields hidden = RateLimitFields.of(v, l.dryRun(), false);
            assertNull(hidden.policyField());
            assertNull(hidden.rateLimitField());
            RateLimitFields shown = RateLimitFields.of(v, l.dryRun(), true);
            assertEquals("\"n\";r=9;t=60", shown.rateLimitField());
        }
    }

    @Test
    void moreHitsThanTheLimitAllowsGetNoRetryAfter() {
        try (PolicyLimiter l = limiter(ODD, false)) {
            Verdict v = l.check("d", List.of(Descriptor.of("tenant", "acme")), 11);
            RateLimitFields f = RateLimitFields.of(v, false, false);
            assertEquals(-1, f.retryAfter(), "no wait lets 11 hits through a limit of 10");
            assertEquals("\"n\";r=0", f.rateLimitField(), "and no t");
            assertEquals(List.of("n"), f.violated());
        }
    }

    @Test
    void problemBodiesEscapeWhatJsonRequires() {
        String body = ProblemJson.quotaExceeded("a \"quoted\" \\ line\nbreak\u0001", List.of("x\"y", "z"));
        Map<String, Object> problem = Json.parseObject(body);
        assertEquals("a \"quoted\" \\ line\nbreak\u0001", problem.get("detail"));
        assertEquals(List.of("x\"y", "z"), problem.get("violated-policies"));
        assertEquals(429L, problem.get("status"));
    }

    @Test
    void roundingIsAlwaysUp() {
        assertEquals(0, RateLimitFields.ceilSeconds(0L));
        assertEquals(1, RateLimitFields.ceilSeconds(1L));
        assertEquals(1, RateLimitFields.ceilSeconds(1_000_000_000L));
        assertEquals(2, RateLimitFields.ceilSeconds(1_000_000_001L));
    }
}
