package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Sluice's extensions of the format: algorithm, window, rate_limits, mode. */
class ExtensionsConfigTest {

    static final String OAUTH =
            """
            domain: oauth-token
            algorithm: sliding_tail
            descriptors:
              - key: client_id
                rate_limit: {unit: second, requests_per_unit: 50}
                descriptors:
                  - key: username
                    rate_limit: {unit: minute, requests_per_unit: 20}
              - key: client_id
                value: mobile-app
                rate_limit: {unlimited: true}
              - key: client_id
                value: big-partner
                algorithm: token_bucket
                rate_limits:
                  - {unit: second, requests_per_unit: 500}
                  - {window: 6h, requests_per_unit: 1000000, algorithm: fixed_window}
                mode: dry_run
              - key: client_id
                value: scraper
                mode: shadow_ban
                rate_limit: {window: 500ms, requests_per_unit: 1}
            """;

    @Test
    void theDesignExample() {
        Policies p = Policies.parse("oauth.yaml", OAUTH);
        Rule perClient =
                p.match("oauth-token", Descriptor.of("client_id", "abc")).orElseThrow();
        assertEquals(
                List.of(new Limit("", List.of(), false, 50, Duration.ofSeconds(1), "second", Algorithm.SLIDING_TAIL)),
                perClient.limits());
        assertEquals(Mode.ENFORCE, perClient.mode());
        Rule perUser = p.match("oauth-token", Descriptor.of("client_id", "abc", "username", "bob"))
                .orElseThrow();
        assertEquals(20, perUser.limits().get(0).requestsPerUnit());
        assertEquals("client_id.username", perUser.path());
        assertTrue(p.match("oauth-token", Descriptor.of("client_id", "mobile-app"))
                .orElseThrow()
                .unlimited());

        Rule partner = p.match("oauth-token", Descriptor.of("client_id", "big-partner"))
                .orElseThrow();
        assertEquals(Mode.DRY_RUN, partner.mode());
        assertEquals(2, partner.limits().size());
        assertEquals(Algorithm.TOKEN_BUCKET, partner.limits().get(0).algorithm());
        assertEquals(Algorithm.FIXED_WINDOW, partner.limits().get(1).algorithm());
        assertEquals(Duration.ofHours(6), partner.limits().get(1).window());
        assertEquals(null, partner.limits().get(1).unit());
        assertTrue(
                p.match("oauth-token", Descriptor.of("client_id", "big-partner", "username", "bob"))
                        .isEmpty(),
                "the override has no children: a user of big-partner matches nothing");

        Rule scraper =
                p.match("oauth-token", Descriptor.of("client_id", "scraper")).orElseThrow();
        assertEquals(Mode.SHADOW_BAN, scraper.mode());
        assertEquals(Duration.ofMillis(500), scraper.limits().get(0).window());
        assertEquals(5, p.rules("oauth-token").size());
    }

    @Test
    void everyWindowSuffixAndUnit() {
        Policies p = Policies.parse(
                "w.yaml",
                """
                domain: w
                descriptors:
                  - {key: a, rate_limit: {window: 10s, requests_per_unit: 1}}
                  - {key: b, rate_limit: {window: 5m, requests_per_unit: 1}}
                  - {key: c, rate_limit: {window: 1d, requests_per_unit: 1}}
                  - {key: d, rate_limit: {unit: week, requests_per_unit: 1}}
                  - {key: e, rate_limit: {unit: month, requests_per_unit: 1}}
                  - {key: f, rate_limit: {unit: year, requests_per_unit: 1}}
                """);
        assertEquals(Duration.ofSeconds(10), window(p, "a"));
        assertEquals(Duration.ofMinutes(5), window(p, "b"));
        assertEquals(Duration.ofDays(1), window(p, "c"));
        assertEquals(Duration.ofDays(7), window(p, "d"));
        assertEquals(Duration.ofDays(30), window(p, "e"));
        assertEquals(Duration.ofDays(365), window(p, "f"));
    }

    static Duration window(Policies p, String key) {
        return p.match("w", Descriptor.of(key, "x"))
                .orElseThrow()
                .limits()
                .get(0)
                .window();
    }
}
