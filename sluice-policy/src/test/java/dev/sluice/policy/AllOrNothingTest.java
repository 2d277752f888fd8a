package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A request passes every limit it touches or consumes from none; dry-run limits never refuse. */
class AllOrNothingTest {

    final ManualClock clock = Clocks.atHourStart();

    /** A request of a client id and a user, for rules of both. */
    static final List<Descriptor> CLIENT_AND_USER =
            List.of(Descriptor.of("client_id", "abc"), Descriptor.of("user", "bob"));

    /** Rules of {@code client} per second per client id, and a dry run of {@code user} per second per user. */
    static String clientAndDryRunUser(int client, int user) {
        return """
                domain: d
                descriptors:
                  - key: client_id
                    rate_limit: {unit: second, requests_per_unit: %d}
                  - key: user
                    mode: dry_run
                    rate_limit: {unit: second, requests_per_unit: %d}
                """
                .formatted(client, user);
    }

    /** A limiter of the rules {@code yaml} on {@link #clock}. */
    PolicyLimiter limiter(String yaml) {
        return PolicyLimiter.builder(Policies.parse("t.yaml", yaml))
                .clock(clock)
                .build();
    }

    static final String TWO_LEVELS =
            """
            domain: d
            descriptors:
              - key: client_id
                rate_limit: {unit: second, requests_per_unit: 3}
              - key: user
                rate_limit: {unit: second, requests_per_unit: 10}
            """;

    @Test
    void aRequestRefusedByOneLimitConsumesFromNone() {
        PolicyLimiter l = PolicyLimiter.builder(Policies.parse("t.yaml", TWO_LEVELS))
                .clock(clock)
                .build();
        for (int i = 0; i < 3; i++) {
            assertTrue(l.check("d", CLIENT_AND_USER, 1).allowed());
        }
        Verdict refused = l.check("d", CLIENT_AND_USER, 1);
        assertFalse(refused.allowed());
        assertEquals(Outcome.DENIED, refused.descriptor(0).outcome());
        assertEquals(Outcome.NOT_COUNTED, refused.descriptor(1).outcome());
        assertEquals(7, refused.descriptor(1).remaining(), "bob's limit had room and was not charged");
        Verdict bobAlone = l.check("d", List.of(Descriptor.of("user", "bob")), 1);
        assertEquals(6, bobAlone.descriptor(0).remaining(), "3 taken by the allowed requests, 1 now: none by refusals");
    }

    @Test
    void severalLimitsOfOneRuleMustAllPass() {
        PolicyLimiter l = limiter(
                """
                domain: d
                descriptors:
                  - key: k
                    rate_limits:
                      - {unit: second, requests_per_unit: 10}
                      - {unit: minute, requests_per_unit: 15}
                """);
        assertEquals(10, admitted(l, 20));
        clock.advance(Duration.ofSeconds(1));
        assertEquals(5, admitted(l, 20), "the minute limit allows 5 more; the second limit's refusals took none");
        Verdict v = l.check("d", List.of(Descriptor.of("k", "v")), 1);
        assertEquals(Outcome.NOT_COUNTED, v.descriptor(0).limits().get(0).outcome());
        assertEquals(Outcome.DENIED, v.descriptor(0).limits().get(1).outcome());
        assertEquals(15, v.descriptor(0).limit().orElseThrow().limit().requestsPerUnit());
    }

    static int admitted(PolicyLimiter l, int attempts) {
        int n = 0;
        for (int i = 0; i < attempts; i++) {
            n += l.check("d", List.of(Descriptor.of("k", "v")), 1).allowed() ? 1 : 0;
        }
        return n;
    }

    @Test
    void eightThreadsOnOneKeyAdmitExactlyWhatBothLimitsAllow() throws Exception {
        PolicyLimiter l = limiter(
                """
                domain: d
                descriptors:
                  - key: k
                    rate_limits:
                      - {unit: second, requests_per_unit: 10}
                      - {unit: minute, requests_per_unit: 100}
                """);
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            int total = 0;
            for (int second = 0; second < 15; second++) {
                CyclicBarrier start = new CyclicBarrier(threads);
                List<Future<Integer>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    results.add(pool.submit(() -> {
                        start.await();
                        return admitted(l, 25);
                    }));
                }
                int thisSecond = 0;
                for (Future<Integer> f : results) {
                    thisSecond += f.get(30, TimeUnit.SECONDS);
                }
                assertEquals(second < 10 ? 10 : 0, thisSecond, "second " + second);
                total += thisSecond;
                clock.advance(Duration.ofSeconds(1));
            }
            assertEquals(100, total);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void dryRunLimitsAreCountedOnlyWhenTheEnforcedOnesPass() {
        PolicyLimiter l = limiter(clientAndDryRunUser(10, 5));
        int allowed = 0;
        int wouldDeny = 0;
        for (int i = 0; i < 12; i++) {
            Verdict v = l.check("d", CLIENT_AND_USER, 1);
            allowed += v.allowed() ? 1 : 0;
            wouldDeny += v.descriptor(1).outcome() == Outcome.WOULD_DENY ? 1 : 0;
            if (!v.allowed()) {
                assertEquals(Outcome.NOT_COUNTED, v.descriptor(1).outcome(), "not asked after an enforced refusal");
                assertEquals(-1, v.descriptor(1).limits().get(0).remaining());
            }
        }
        assertEquals(10, allowed);
        assertEquals(5, wouldDeny, "requests 6 to 10 pass the enforced limit and would be denied by the dry run");
    }

    /**
     * A limit of 0 refuses without a store call, but only when its stage runs: after an enforced refusal a dry-run
     * limit of 0 is not counted, as any dry-run limit; checked on requests of the same descriptors that alternate
     * between passing and refused, so that nothing a request leaves behind answers for the next.
     */
    @Test
    void anImpossibleLimitAnswersOnlyWhenItsStageRuns() {
        PolicyLimiter l = limiter(clientAndDryRunUser(2, 0));
        for (int second = 0; second < 3; second++) {
            for (int i = 0; i < 4; i++) {
                Verdict v = l.check("d", CLIENT_AND_USER, 1);
                assertEquals(i < 2, v.allowed(), "request " + i);
                LimitVerdict dry = v.descriptor(1).limits().get(0);
                if (v.allowed()) {
                    assertEquals(Outcome.WOULD_DENY, dry.outcome(), "request " + i);
                    assertEquals(Duration.ofSeconds(1), dry.resetAfter(), "request " + i);
                } else {
                    assertEquals(Outcome.NOT_COUNTED, dry.outcome(), "not asked after an enforced refusal");
                    assertEquals(-1, dry.remaining());
                }
            }
            clock.advance(Duration.ofSeconds(1));
        }
    }

    @Test
    void shadowBanAllowsButTellsTheApplication() {
        PolicyLimiter l = limiter(
                """
                domain: d
                descriptors:
                  - key: client_id
                    value: scraper
                    mode: shadow_ban
                    rate_limit: {unit: second, requests_per_unit: 2}
                """);
        List<Descriptor> request = List.of(Descriptor.of("client_id", "scraper"));
        assertFalse(l.check("d", request, 1).shadowBanned());
        assertFalse(l.check("d", request, 1).shadowBanned());
        Verdict third = l.check("d", request, 1);
        assertTrue(third.allowed());
        assertTrue(third.shadowBanned());
        assertEquals("client_id_scraper", third.shadowBanRule().orElseThrow().path());
        assertEquals(Outcome.SHADOW_BANNED, third.descriptor(0).outcome());

        PolicyLimiter globalDryRun =
                PolicyLimiter.builder(l.policies()).clock(clock).dryRun(true).build();
        for (int i = 0; i < 2; i++) {
            globalDryRun.check("d", request, 1);
        }
        Verdict v = globalDryRun.check("d", request, 1);
        assertTrue(v.allowed());
        assertFalse(v.shadowBanned(), "a global dry run acts on nothing");
        assertEquals(Outcome.WOULD_DENY, v.descriptor(0).outcome());
    }
}
