package dev.sluice.mongodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.mongodb.client.MongoClient;
import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.JointDecision;
import dev.sluice.RateLimiter;
import dev.sluice.TimeSource;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.ThrowingListener;
import dev.sluice.testkit.server.EmbeddedMongoServer;
import dev.sluice.testkit.server.MongoServers;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Joint requests and listeners on the exact-mode MongoDB store: a joint request refused by one limit takes nothing
 * from the others; eight threads under a per-second and a per-minute limit admit exactly what both allow; and a
 * listener that throws from every method, on the store and on the limiter, changes no decision, before, during and
 * after an outage.
 */
class MongoJointTest {

    private static MongoClient client;
    private static MongoStore store;

    private final ManualClock clock = new ManualClock(Instant.parse("2026-01-01T12:00:00Z"));
    private final String run = UUID.randomUUID().toString();

    @BeforeAll
    static void connect() {
        client = Mongo.client();
        store = Mongo.clockStore(client).build();
    }

    @AfterAll
    static void close() {
        client.close();
    }

    private RateLimiter limiter(Algorithm algorithm, long limit, Duration window, MongoStore on) {
        return RateLimiter.builder(algorithm)
                .limit(limit, window)
                .clock(clock)
                .store(on)
                .build();
    }

    @Test
    void aJointRequestRefusedByOneLimitTakesNothingFromTheOthers() {
        RateLimiter few = limiter(Algorithm.FIXED_WINDOW, 2, Duration.ofMinutes(1), store);
        RateLimiter many = limiter(Algorithm.SLIDING_TAIL, 10, Duration.ofMinutes(1), store);
        assertSame(
                ((SharedRateLimiter) few).joint(), ((SharedRateLimiter) many).joint(), "one joint decider per store");
        String k = "joint:" + run;

        assertTrue(RateLimiter.tryAcquireAll(Acquisition.of(few, k), Acquisition.of(many, k, 3))
                .allowed());
        assertTrue(RateLimiter.tryAcquireAll(Acquisition.of(many, k, 3), Acquisition.of(few, k))
                .allowed());
        JointDecision refused = RateLimiter.tryAcquireAll(Acquisition.of(many, k, 3), Acquisition.of(few, k));
        assertFalse(refused.allowed(), "a third request over a limit of 2: " + refused);
        assertTrue(refused.decision(0).allowed(), "many alone would allow it: " + refused);
        assertFalse(refused.decision(1).allowed(), "few refuses it: " + refused);
        assertEquals(0, few.peek(k, 1).remaining(), "few holds the 2 allowed");
        assertEquals(4, many.peek(k, 1).remaining(), "many holds 6, the refused 3 given back");
        clock.advance(Duration.ofMinutes(1));
        assertEquals(2, few.peek(k, 1).remaining(), "a new window for few");
        assertEquals(4, many.peek(k, 1).remaining(), "many's tail still counts the minute before");
    }

    /** Exactly 10 in each of the first ten seconds, then none for the rest of the minute: 100 in all. */
    @Test
    void eightThreadsUnderTwoLimitsAdmitExactlyWhatBothAllow() throws Exception {
        RateLimiter perSecond = limiter(Algorithm.FIXED_WINDOW, 10, Duration.ofSeconds(1), store);
        RateLimiter perMinute = limiter(Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1), store);
        String k = "two-limits:" + run;
        int threads = 8;
        int attempts = 3; // 24 tries a second against 10 allowed
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Long> admittedPerSecond = new ArrayList<>();
        try {
            for (int second = 0; second < 60; second++) {
                LongAdder admitted = new LongAdder();
                CyclicBarrier start = new CyclicBarrier(threads);
                List<Callable<Void>> tasks = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    tasks.add(() -> {
                        start.await(1, TimeUnit.MINUTES);
                        for (int j = 0; j < attempts; j++) {
                            if (RateLimiter.tryAcquireAll(Acquisition.of(perSecond, k), Acquisition.of(perMinute, k))
                                    .allowed()) {
                                admitted.increment();
                            }
                        }
                        return null;
                    });
                }
                for (Future<Void> f : pool.invokeAll(tasks, 5, TimeUnit.MINUTES)) {
                    f.get();
                }
                admittedPerSecond.add(admitted.sum());
                if (second < 59) {
                    clock.advance(Duration.ofSeconds(1));
                }
            }
        } finally {
            pool.shutdownNow();
        }
        List<Long> expected = new ArrayList<>();
        for (int second = 0; second < 60; second++) {
            expected.add(second < 10 ? 10L : 0L);
        }
        assertEquals(expected, admittedPerSecond, "admitted in each second of the minute");
        assertEquals(0, perMinute.peek(k, 1).remaining(), "the minute's 100 taken");
    }

    /**
     * Two stores on one server, one with a listener that throws (on the store and on its limiter), one without: the
     * same requests on keys of their own get the same answers, store-made before and after an outage and the failure
     * policy's during it.
     */
    @Test
    void aThrowingListenerChangesNoDecisionBeforeDuringOrAfterAnOutage() {
        ThrowingListener throwing = new ThrowingListener();
        try (EmbeddedMongoServer server = MongoServers.start();
                MongoClient own = Mongo.client(server.connectionString())) {
            MongoStore quietStore = MongoStore.builder(own, Mongo.DATABASE)
                    .timeSource(TimeSource.CLOCK)
                    .failurePolicy(FailurePolicy.FAIL_OPEN)
                    .timeout(Duration.ofSeconds(1))
                    .build();
            MongoStore loudStore = MongoStore.builder(own, Mongo.DATABASE)
                    .timeSource(TimeSource.CLOCK)
                    .failurePolicy(FailurePolicy.FAIL_OPEN)
                    .timeout(Duration.ofSeconds(1))
                    .listener(throwing)
                    .build();
            RateLimiter quiet = limiter(Algorithm.SLIDING_TAIL, 5, Duration.ofMinutes(1), quietStore);
            RateLimiter quietPair = limiter(Algorithm.FIXED_WINDOW, 3, Duration.ofMinutes(1), quietStore);
            RateLimiter loud = RateLimiter.builder(Algorithm.SLIDING_TAIL)
                    .limit(5, Duration.ofMinutes(1))
                    .clock(clock)
                    .listener(throwing)
                    .store(loudStore)
                    .build();
            RateLimiter loudPair = limiter(Algorithm.FIXED_WINDOW, 3, Duration.ofMinutes(1), loudStore);
            String q = "quiet:" + run;
            String k = "loud:" + run;

            List<Decision> quietAnswers = new ArrayList<>();
            List<Decision> loudAnswers = new ArrayList<>();
            for (int n = 0; n < 3; n++) {
                quietAnswers.add(quiet.tryAcquire(q));
                loudAnswers.add(loud.tryAcquire(k));
            }
            for (int n = 0; n < 2; n++) {
                quietAnswers.addAll(RateLimiter.tryAcquireAll(Acquisition.of(quiet, q), Acquisition.of(quietPair, q, 2))
                        .decisions());
                loudAnswers.addAll(RateLimiter.tryAcquireAll(Acquisition.of(loud, k), Acquisition.of(loudPair, k, 2))
                        .decisions());
            }
            assertEquals(quietAnswers, loudAnswers, "before the outage");
            for (Decision d : loudAnswers) {
                assertFalse(d.failed(), "before the outage every answer is the store's: " + loudAnswers);
            }

            server.stop();
            Decision quietDown = quiet.tryAcquire(q);
            Decision loudDown = loud.tryAcquire(k);
            assertTrue(loudDown.failed() && loudDown.allowed(), "fail open during the outage: " + loudDown);
            // which failure each met (the socket closed under the first call, no server for the next) is not the
            // listener's doing: the answers are compared without it
            assertEquals(anyFailure(quietDown), anyFailure(loudDown), "during the outage");

            server.start();
            awaitReconnected(quiet, q);
            awaitReconnected(loud, k);
            Decision quietBack = quiet.tryAcquire(q);
            Decision loudBack = loud.tryAcquire(k);
            assertFalse(loudBack.failed(), "after the outage: " + loudBack);
            assertEquals(quietBack, loudBack, "after the outage");
            assertTrue(
                    throwing.decisions() > 0 && throwing.failures().size() > 0 && throwing.calls() > 0,
                    "the listener was called: " + throwing);
        }
    }

    /** Peeks until a peek reaches the server, within a generous bound. */
    private static void awaitReconnected(RateLimiter limiter, String key) {
        SharedRateLimiter shared = (SharedRateLimiter) limiter;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            long failures = shared.storeFailures();
            limiter.peek(key, 1);
            if (shared.storeFailures() == failures) {
                return;
            }
        }
        fail("the limiter did not reach the restarted server within 60 s");
    }

    /** {@code d}, but for a failure policy's answer, the same answer without saying whether the store timed out. */
    private static Decision anyFailure(Decision d) {
        if (!d.failed()) {
            return d;
        }
        Decision answer = d.allowed()
                ? Decision.allowed(d.limit(), d.remaining(), d.resetAfterNanos())
                : Decision.denied(d.limit(), d.remaining(), d.resetAfterNanos(), d.retryAfterNanos());
        return Decision.fromFailurePolicy(answer, false);
    }
}
