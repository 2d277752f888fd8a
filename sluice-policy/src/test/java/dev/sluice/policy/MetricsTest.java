package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.ManualClock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The meters of a policy limiter: per domain, rule and outcome; near-limit; detailed values, capped. */
class MetricsTest {

    final ManualClock clock = Clocks.atHourStart();
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    static final String YAML =
            """
            domain: oauth-token
            descriptors:
              - key: client_id
                detailed_metric: true
                rate_limit: {unit: second, requests_per_unit: 10}
              - key: client_id
                value: mobile-app
                rate_limit: {unlimited: true}
              - key: client_id
                value: trial
                mode: dry_run
                rate_limit: {unit: second, requests_per_unit: 2}
              - key: client_id
                value: scraper
                mode: shadow_ban
                rate_limit: {unit: second, requests_per_unit: 1}
              - key: client_id
                value: flood*
                detailed_metric: true
                rate_limit: {unlimited: true}
            """;

    PolicyLimiter limiter(int maxValues) {
        return PolicyLimiter.builder(Policies.parse("m.yaml", YAML))
                .clock(clock)
                .meterRegistry(registry)
                .maxDetailedValues(maxValues)
                .build();
    }

    void send(PolicyLimiter l, String client, int times) {
        for (int i = 0; i < times; i++) {
            l.check("oauth-token", List.of(Descriptor.of("client_id", client)), 1);
        }
    }

    double requests(String rule, String outcome) {
        Counter c = registry.find(PolicyMetrics.REQUESTS)
                .tag("domain", "oauth-token")
                .tag("rule", rule)
                .tag("outcome", outcome)
                .counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void perRuleAndOutcome() {
        PolicyLimiter l = limiter(1000);
        send(l, "abc", 12);
        send(l, "mobile-app", 7);
        send(l, "trial", 5);
        send(l, "scraper", 3);
        assertEquals(10, requests("client_id", "allowed"));
        assertEquals(2, requests("client_id", "denied"));
        assertEquals(7, requests("client_id_mobile-app", "unlimited"));
        assertEquals(2, requests("client_id_trial", "allowed"));
        assertEquals(3, requests("client_id_trial", "would_deny"));
        assertEquals(1, requests("client_id_scraper", "allowed"));
        assertEquals(2, requests("client_id_scraper", "shadow_banned"));
        assertEquals(
                3,
                registry.get(PolicyMetrics.NEAR_LIMIT)
                        .tag("rule", "client_id")
                        .counter()
                        .count(),
                "requests 8, 9 and 10 of 10 leave the limit at least 80% used");
        assertEquals(
                10,
                registry.get(PolicyMetrics.REQUESTS_DETAILED)
                        .tag("value", "abc")
                        .tag("outcome", "allowed")
                        .counter()
                        .count());
        assertNull(
                registry.find(PolicyMetrics.REQUESTS_DETAILED)
                        .tag("rule", "client_id_trial")
                        .counter(),
                "no per-value breakdown without detailed_metric");
        assertEquals(
                27,
                registry.get(PolicyMetrics.CHECK)
                        .tag("domain", "oauth-token")
                        .timer()
                        .count());
        l.check("nope", List.of(Descriptor.of("a", "b")), 1);
        assertEquals(
                1,
                registry.get(PolicyMetrics.CHECK)
                        .tag("domain", "unknown")
                        .timer()
                        .count());
        assertEquals(
                1,
                registry.get(PolicyMetrics.UNMATCHED)
                        .tag("domain", "unknown")
                        .counter()
                        .count(),
                "a descriptor of an unknown domain, counted without its name");
        l.check("oauth-token", List.of(Descriptor.of("no_such_key", "x"), Descriptor.of("other", "y")), 1);
        assertEquals(
                2,
                registry.get(PolicyMetrics.UNMATCHED)
                        .tag("domain", "oauth-token")
                        .counter()
                        .count(),
                "two descriptors no rule of the domain matches");
        assertEquals(
                1,
                registry.get(PolicyMetrics.CONFIG_LOADS)
                        .tag("result", "success")
                        .counter()
                        .count());
        assertEquals(1, registry.get(PolicyMetrics.CONFIG_VERSION).gauge().value());
    }

    @Test
    void aMillionDistinctClientIdsStayWithinTheCap() {
        PolicyLimiter l = limiter(1000);
        for (int i = 0; i < 1_000_000; i++) {
            l.check("oauth-token", List.of(Descriptor.of("client_id", "flood-" + i)), 1);
        }
        List<Meter> detailed = registry.getMeters().stream()
                .filter(m -> m.getId().getName().equals(PolicyMetrics.REQUESTS_DETAILED))
                .toList();
        assertEquals(1001, detailed.size(), "1000 values and 'other'");
        assertEquals(
                999_000,
                registry.get(PolicyMetrics.REQUESTS_DETAILED)
                        .tag("value", "other")
                        .counter()
                        .count());
        assertTrue(
                registry.getMeters().size() < 1020,
                () -> "registry grew to " + registry.getMeters().size());
        send(l, "flood-5", 1);
        assertEquals(
                2,
                registry.get(PolicyMetrics.REQUESTS_DETAILED)
                        .tag("value", "flood-5")
                        .counter()
                        .count(),
                "a value admitted before the cap keeps its own meter");
    }

    /**
     * A descriptor seen before finds its detailed counter again, per outcome, from a descriptor made anew for each
     * request (as the service makes them), before and after a reload.
     */
    @Test
    void aDescriptorSeenBeforeIsCountedOnItsOwnCounterPerOutcome() {
        PolicyLimiter l = limiter(1000);
        send(l, "acme", 25); // 10 allowed, 15 denied in this second
        send(l, "other-co", 3);
        l.update(Policies.parse("m.yaml", YAML));
        send(l, "acme", 5); // denied: the counters are the store's, kept over the reload
        clock.advance(Duration.ofSeconds(2));
        send(l, "acme", 4);
        assertEquals(14, detailed("acme", "allowed"));
        assertEquals(20, detailed("acme", "denied"));
        assertEquals(3, detailed("other-co", "allowed"));
        String wide = "w".repeat(1 << 16); // too long to be kept: counted by its value each time, the same counter
        send(l, wide, 3);
        assertEquals(
                3,
                registry.get(PolicyMetrics.REQUESTS_DETAILED)
                        .tag("value", PolicyMetrics.label(wide))
                        .tag("outcome", "allowed")
                        .counter()
                        .count());
    }

    double detailed(String value, String outcome) {
        return registry.get(PolicyMetrics.REQUESTS_DETAILED)
                .tag("value", value)
                .tag("outcome", outcome)
                .counter()
                .count();
    }

    @Test
    void aLongValueIsTaggedWithItsStartAndAHash() {
        PolicyLimiter l = limiter(1000);
        String prefix = "x".repeat(PolicyMetrics.KEPT_PREFIX);
        String a = prefix + "a".repeat(1 << 20);
        String b = prefix + "b".repeat(1 << 20);
        send(l, a, 2);
        send(l, b, 1);
        send(l, "x".repeat(PolicyMetrics.MAX_VALUE_LENGTH), 1);
        List<String> tags = registry.find(PolicyMetrics.REQUESTS_DETAILED).counters().stream()
                .map(c -> c.getId().getTag("value"))
                .sorted()
                .toList();
        assertEquals(3, tags.size(), tags::toString);
        assertEquals("x".repeat(PolicyMetrics.MAX_VALUE_LENGTH), tags.get(0), "a value at the limit is kept whole");
        for (String tag : tags.subList(1, 3)) {
            assertEquals(PolicyMetrics.KEPT_PREFIX + 2 + 16, tag.length(), tag);
            assertTrue(tag.matches("x{" + PolicyMetrics.KEPT_PREFIX + "}…#[0-9a-f]{16}"), tag);
        }
        assertEquals(
                2,
                registry.get(PolicyMetrics.REQUESTS_DETAILED)
                        .tag("value", PolicyMetrics.label(a))
                        .counter()
                        .count(),
                "the same long value, the same counter");
        assertEquals(
                1,
                registry.get(PolicyMetrics.REQUESTS_DETAILED)
                        .tag("value", PolicyMetrics.label(b))
                        .counter()
                        .count(),
                "two long values with the same start stay apart");
    }

    @Test
    void aLongValueIsNotCutInsideACharacter() {
        String value = "x".repeat(PolicyMetrics.KEPT_PREFIX - 1) + "😀".repeat(100);
        String tag = PolicyMetrics.label(value);
        assertTrue(tag.startsWith("x".repeat(PolicyMetrics.KEPT_PREFIX - 1) + "…#"), tag);
    }
}
