package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * All or nothing on a store: what a {@link PolicyLimiter} must do on every store it can run on. A store's test
 * extends this class, implements {@link #store()} (and, for a store whose counts are shared, {@link #otherInstance()}
 * and where needed {@link #exchange()}), and passes unchanged.
 *
 * <ul>
 *   <li>a request refused by one limit consumes from none of the others, as later checks on the same limiter and a
 *       peek from another instance of the service on the same counts both show;</li>
 *   <li>eight threads on one key under a per-second and a per-minute limit admit exactly what both allow;</li>
 *   <li>limits of one shape (algorithm and window) never share a count: on a shared store, limiters of one shape on
 *       one key share its state, so the policy's counter keys must keep apart the limits of one rule, a nested rule
 *       and a top-level one of the same key, and the same value under different keys.</li>
 * </ul>
 *
 * <p>Time comes from {@link #clock}, moved by hand; it starts at the next whole hour of the real time, so that a
 * record a server expires by its own clock outlives the test, and every window up to an hour starts with the test.
 * Every test uses a domain of its own (a random name per test), so a server that keeps records between tests and
 * runs needs no cleanup.
 */
abstract class PolicyStoreContract {

    /** The only clock of every limiter this suite builds. */
    protected final ManualClock clock =
            new ManualClock(Instant.now().truncatedTo(ChronoUnit.HOURS).plus(1, ChronoUnit.HOURS));

    private final String domain =
            "d" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private final List<PolicyLimiter> limiters = new CopyOnWriteArrayList<>();

    /** The store under test. May be called several times per test; answers the same store each time. */
    protected abstract RateLimitStore store();

    /**
     * Another instance of the service: a store on the same counts as {@link #store()} (another client, or in
     * synchronized mode another synchronized store on the same counter store), or {@code null} if the counts live
     * in this store's heap only. The same store each time within a test.
     */
    protected RateLimitStore otherInstance() {
        return null;
    }

    /**
     * Makes what every instance counted visible to the others: nothing where every decision reaches the shared
     * counts at once; in synchronized mode, a flush of every instance and then a refresh of every instance.
     */
    protected void exchange() {}

    /** Closes what the store's test opened for one test, after the limiters on it are closed. */
    protected void closeStores() {}

    @AfterEach
    void close() {
        try {
            limiters.forEach(PolicyLimiter::close);
        } finally {
            closeStores();
        }
    }

    @Test
    void aRequestRefusedByOneLimitConsumesFromNone() {
        PolicyLimiter l = limiter(
                """
                descriptors:
                  - key: client_id
                    rate_limit: {unit: second, requests_per_unit: 3}
                  - key: user
                    rate_limit: {unit: second, requests_per_unit: 10}
                """);
        List<Descriptor> request = List.of(Descriptor.of("client_id", "abc"), Descriptor.of("user", "bob"));
        for (int i = 0; i < 3; i++) {
            assertTrue(l.check(domain, request, 1).allowed(), "request " + i);
        }
        for (int i = 0; i < 3; i++) {
            Verdict refused = l.check(domain, request, 1);
            assertFalse(refused.allowed());
            assertEquals(Outcome.DENIED, refused.descriptor(0).outcome());
            assertEquals(Outcome.NOT_COUNTED, refused.descriptor(1).outcome());
            assertEquals(7, refused.descriptor(1).remaining(), "bob's limit had room and was not charged");
        }
        seenElsewhere(
                10,
                Duration.ofSeconds(1),
                "|user=bob#0",
                7,
                "bob: 3 taken by the allowed requests, none by " + "the 3 refused");
        seenElsewhere(3, Duration.ofSeconds(1), "|client_id=abc#0", 0, "abc: 3 taken by the allowed requests");

        Verdict bobAlone = l.check(domain, List.of(Descriptor.of("user", "bob")), 1);
        assertTrue(bobAlone.allowed());
        assertEquals(6, bobAlone.descriptor(0).remaining(), "3 taken by the allowed requests, 1 now: none by refusals");
        assertEquals(6, admitted(l, List.of(Descriptor.of("user", "bob")), 20), "bob's other 6, and no more");

        clock.advance(Duration.ofSeconds(1));
        assertEquals(3, admitted(l, request, 10), "a new second: abc's 3 again");
    }

    @Test
    void severalLimitsOfOneRuleMustAllPass() {
        PolicyLimiter l = limiter(
                """
                descriptors:
                  - key: k
                    rate_limits:
                      - {unit: second, requests_per_unit: 10}
                      - {unit: minute, requests_per_unit: 15}
                """);
        List<Descriptor> request = List.of(Descriptor.of("k", "v"));
        assertEquals(10, admitted(l, request, 20));
        seenElsewhere(15, Duration.ofMinutes(1), "|k=v#1", 5, "the minute limit: 10 taken, none by the 10 refused");
        clock.advance(Duration.ofSeconds(1));
        assertEquals(
                5,
                admitted(l, request, 20),
                "the minute limit allows 5 more; the second limit's refusals took " + "none");
        seenElsewhere(
                10,
                Duration.ofSeconds(1),
                "|k=v#0",
                5,
                "the second limit: 5 taken this second, none by the 15 " + "the minute limit refused");
        Verdict v = l.check(domain, request, 1);
        assertEquals(Outcome.NOT_COUNTED, v.descriptor(0).limits().get(0).outcome());
        assertEquals(Outcome.DENIED, v.descriptor(0).limits().get(1).outcome());
    }

    @Test
    void eightThreadsOnOneKeyAdmitExactlyWhatBothLimitsAllow() throws Exception {
        PolicyLimiter l = limiter(
                """
                descriptors:
                  - key: k
                    rate_limits:
                      - {unit: second, requests_per_unit: 10}
                      - {unit: minute, requests_per_unit: 100}
                """);
        List<Descriptor> request = List.of(Descriptor.of("k", "v"));
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            int total = 0;
            for (int second = 0; second < 12; second++) {
                CyclicBarrier start = new CyclicBarrier(threads);
                List<Future<Integer>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    results.add(pool.submit(() -> {
                        start.await(30, TimeUnit.SECONDS);
                        return admitted(l, request, 4);
                    }));
                }
                int thisSecond = 0;
                for (Future<Integer> f : results) {
                    thisSecond += f.get(60, TimeUnit.SECONDS);
                }
                assertEquals(second < 10 ? 10 : 0, thisSecond, "second " + second + " of 32 attempts");
                total += thisSecond;
                clock.advance(Duration.ofSeconds(1));
            }
            assertEquals(100, total);
        } finally {
            pool.shutdownNow();
        }
        seenElsewhere(100, Duration.ofMinutes(1), "|k=v#1", 0, "the minute limit: exactly 100 taken");
    }

    @Test
    void limitsOfOneShapeNeverShareACount() {
        PolicyLimiter l = limiter(
                """
                descriptors:
                  - key: client_id
                    rate_limits:
                      - {unit: second, requests_per_unit: 5}
                      - {unit: second, requests_per_unit: 3}
                    descriptors:
                      - key: user
                        rate_limit: {unit: second, requests_per_unit: 4}
                  - key: user
                    rate_limit: {unit: second, requests_per_unit: 4}
                """);
        Descriptor client = Descriptor.of("client_id", "x");
        Descriptor clientUser = Descriptor.of("client_id", "x", "user", "x");
        Descriptor user = Descriptor.of("user", "x");
        assertEquals(
                3,
                admitted(l, List.of(client, clientUser, user), 10),
                "each request takes 1 from each of 4 counts of one shape: the 3 per second bounds it (a shared count "
                        + "would have taken 2 a request, and admitted 1 or 2)");
        seenElsewhere(5, Duration.ofSeconds(1), "|client_id=x#0", 2, "client x's first limit");
        seenElsewhere(3, Duration.ofSeconds(1), "|client_id=x#1", 0, "client x's second limit");
        seenElsewhere(4, Duration.ofSeconds(1), "|client_id=x|user=x#0", 1, "user x of client x");
        seenElsewhere(4, Duration.ofSeconds(1), "|user=x#0", 1, "user x");
        assertEquals(1, admitted(l, List.of(user), 10), "user x alone: its 4th");
        assertEquals(1, admitted(l, List.of(clientUser), 10), "user x of client x alone: its 4th, apart from user x");
        assertEquals(0, admitted(l, List.of(client), 10), "client x: its 3 per second are spent");
        assertEquals(4, admitted(l, List.of(Descriptor.of("user", "y")), 10), "another value, another count");
    }

    /** A limiter of {@code rules} (the YAML under {@code domain:}) on {@link #store()}, closed after the test. */
    PolicyLimiter limiter(String rules) {
        PolicyLimiter l = PolicyLimiter.builder(Policies.parse("t.yaml", "domain: " + domain + "\n" + rules))
                .store(store())
                .clock(clock)
                .build();
        limiters.add(l);
        return l;
    }

    /** How many of {@code attempts} checks of {@code request} are allowed. */
    int admitted(PolicyLimiter l, List<Descriptor> request, int attempts) {
        int n = 0;
        for (int i = 0; i < attempts; i++) {
            n += l.check(domain, request, 1).allowed() ? 1 : 0;
        }
        return n;
    }

    /**
     * Asserts what another instance of the service sees left under a fixed-window limit of {@code limit} per
     * {@code window} at the counter key {@code domain + path} (the key the policy's engine writes): a peek, which
     * consumes nothing, from a limiter of the same shape on {@link #otherInstance()}. Nothing on a store whose counts
     * live in one limiter's heap.
     */
    void seenElsewhere(long limit, Duration window, String path, long remaining, String what) {
        RateLimitStore other = otherInstance();
        if (other == null) {
            return;
        }
        String key = domain + path;
        try (RateLimiter probe = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(limit, window)
                .clock(clock)
                .store(other)
                .build()) {
            probe.peek(key, 1); // in synchronized mode, the other instance reads only the keys it holds
            exchange();
            assertEquals(remaining, probe.peek(key, 1).remaining(), "seen from another instance, " + what);
        }
    }
}
