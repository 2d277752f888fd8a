package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link Verdict#refusedNothing()}, which the engine answers without building the answer per descriptor, against that
 * answer: true exactly when no limit of any descriptor {@link LimitVerdict#refused()}, over random requests under
 * every mode (enforced, quota, shadow ban, dry run, unlimited, a limit of 0 and a cost above a limit).
 */
class RefusedNothingTest {
    final ManualClock clock = Clocks.atHourStart();

    static final String ALL_MODES =
            """
            domain: d
            descriptors:
              - key: client_id
                rate_limit: {unit: second, requests_per_unit: 4}
              - key: quota
                quota_mode: true
                rate_limit: {unit: second, requests_per_unit: 3}
              - key: other_quota
                quota_mode: true
                rate_limit: {unit: second, requests_per_unit: 2}
              - key: scraper
                mode: shadow_ban
                rate_limit: {unit: second, requests_per_unit: 3}
              - key: user
                mode: dry_run
                rate_limit: {unit: second, requests_per_unit: 2}
              - key: trusted
                rate_limit: {unlimited: true}
              - key: closed
                rate_limit: {unit: second, requests_per_unit: 0}
            """;

    static final List<String> KEYS = List.of("client_id", "quota", "other_quota", "scraper", "user", "trusted", "none");

    @Test
    void refusedNothingIsTrueExactlyWhenNoLimitRefused() {
        Map<Outcome, Integer> seen = new EnumMap<>(Outcome.class);
        int nothing = 0;
        try (PolicyLimiter l = PolicyLimiter.builder(Policies.parse("t.yaml", ALL_MODES))
                .clock(clock)
                .build()) {
            Random random = new Random(33);
            for (int i = 0; i < 4_000; i++) {
                List<Descriptor> request = new ArrayList<>();
                int n = 1 + random.nextInt(3);
                for (int k = 0; k < n; k++) {
                    String key = random.nextInt(200) == 0 ? "closed" : KEYS.get(random.nextInt(KEYS.size()));
                    request.add(Descriptor.of(key, "v" + random.nextInt(2)));
                }
                long hits = random.nextInt(50) == 0 ? 5 : 1;
                Verdict v = l.check("d", request, hits);
                boolean refused = false;
                for (DescriptorVerdict d : v.descriptors()) {
                    for (LimitVerdict lv : d.limits()) {
                        refused |= lv.refused();
                        seen.merge(lv.outcome(), 1, Integer::sum);
                    }
                }
                assertEquals(!refused, v.refusedNothing(), "request " + i + ": " + v);
                nothing += v.refusedNothing() ? 1 : 0;
                if (random.nextInt(10) == 0) {
                    clock.advance(Duration.ofMillis(random.nextInt(1500)));
                }
            }
        }
        for (Outcome o : List.of(
                Outcome.DENIED,
                Outcome.OVER_QUOTA,
                Outcome.SHADOW_BANNED,
                Outcome.WOULD_DENY,
                Outcome.ALLOWED,
                Outcome.UNLIMITED,
                Outcome.NOT_COUNTED)) {
            assertTrue(seen.getOrDefault(o, 0) > 0, "no limit answered " + o + ": " + seen);
        }
        assertTrue(nothing > 0, "no request refused nothing");
    }
}
