package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.JointDecision;
import dev.sluice.RateLimiter;
import dev.sluice.TimeSource;
import dev.sluice.spi.SharedJoint;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.PostgresServers;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Joint requests ({@link RateLimiter#tryAcquireAll}) on PostgreSQL: one call of one function, all or nothing, exact
 * under concurrency, free of deadlocks, and the same answers as the in-memory store gives.
 */
class JointTest {

    private static final Instant START = Instant.parse("2026-01-01T12:00:00Z");
    private static final Duration MINUTE = Duration.ofMinutes(1);
    /** The window of the token bucket beside each algorithm: another shape than a token bucket of a minute's. */
    private static final Duration BUCKET = Duration.ofMinutes(2);

    private static final int THREADS = 8;

    private final ManualClock clock = new ManualClock(START);
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    private static PostgresStore store; // guarded by JointTest.class

    private static synchronized PostgresStore store() {
        if (store == null) {
            store = PostgresStore.builder(Databases.shared())
                    .table("sluice_joint")
                    .timeSource(TimeSource.CLOCK)
                    .failurePolicy(FailurePolicy.THROW)
                    .timeout(Databases.PATIENCE)
                    .build();
        }
        return store;
    }

    private RateLimiter limiter(
            Algorithm algorithm, long limit, Duration window, boolean countRejected, PostgresStore on) {
        return RateLimiter.builder(algorithm)
                .limit(limit, window)
                .clock(clock)
                .countRejected(countRejected)
                .store(on)
                .build();
    }

    private RateLimiter memory(Algorithm algorithm, long limit, Duration window, boolean countRejected) {
        return RateLimiter.builder(algorithm)
                .limit(limit, window)
                .clock(clock)
                .countRejected(countRejected)
                .build();
    }

    @Test
    void everyLimiterOfTheStoreSharesOneJointDecider() {
        RateLimiter a = limiter(Algorithm.TOKEN_BUCKET, 5, BUCKET, false, store());
        RateLimiter b = limiter(Algorithm.FIXED_WINDOW, 5, MINUTE, false, store());
        assertInstanceOf(SharedJoint.class, joint(a));
        assertSame(joint(a), joint(b), "one SharedJoint per store");
        PostgresStore other = PostgresStore.builder(Databases.shared())
                .table("sluice_joint")
                .timeSource(TimeSource.CLOCK)
                .build();
        assertNotSame(
                joint(a),
                joint(limiter(Algorithm.TOKEN_BUCKET, 5, MINUTE, false, other)),
                "another store, another joint decider");
    }

    /** The joint a limiter's joint requests go to. */
    private static SharedJoint joint(RateLimiter limiter) {
        return ((SharedRateLimiter) limiter).joint();
    }

    /**
     * A token bucket with room beside a limit that is exhausted: the joint request is refused, the bucket keeps every
     * token (a peek says so), the exhausted limit is as it was, and every answer is the in-memory store's.
     */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aRefusedJointRequestConsumesNothingFromTheOtherLimits(Algorithm refusing) {
        String key = "refused:" + run + ":" + refusing;
        RateLimiter bucket = limiter(Algorithm.TOKEN_BUCKET, 5, BUCKET, false, store());
        RateLimiter full = limiter(refusing, 2, MINUTE, false, store());
        RateLimiter memoryBucket = memory(Algorithm.TOKEN_BUCKET, 5, BUCKET, false);
        RateLimiter memoryFull = memory(refusing, 2, MINUTE, false);

        assertEquals(memoryFull.tryAcquire(key, 2), full.tryAcquire(key, 2), "the limit taken whole");
        clock.advance(Duration.ofSeconds(1));
        Decision fullBefore = full.peek(key, 1);

        JointDecision expected =
                RateLimiter.tryAcquireAll(Acquisition.of(memoryBucket, key), Acquisition.of(memoryFull, key));
        JointDecision joint = RateLimiter.tryAcquireAll(Acquisition.of(bucket, key), Acquisition.of(full, key));
        assertEquals(false, joint.allowed(), "refused by " + refusing + ": " + joint);
        assertEquals(expected, joint, "the in-memory store's answer");
        assertEquals(5, joint.decision(0).remaining(), "the bucket answers as a peek: " + joint);

        Decision bucketAfter = bucket.peek(key, 1);
        assertEquals(true, bucketAfter.allowed(), "the bucket: " + bucketAfter);
        assertEquals(5, bucketAfter.remaining(), "the bucket kept every token: " + bucketAfter);
        assertEquals(memoryBucket.peek(key, 1), bucketAfter);
        assertEquals(fullBefore, full.peek(key, 1), "the refusing limit is as it was");

        // and once the request passes, both take
        clock.advance(MINUTE.multipliedBy(2));
        JointDecision passes = RateLimiter.tryAcquireAll(Acquisition.of(bucket, key), Acquisition.of(full, key));
        JointDecision memoryPasses =
                RateLimiter.tryAcquireAll(Acquisition.of(memoryBucket, key), Acquisition.of(memoryFull, key));
        assertEquals(memoryPasses, passes, "the in-memory store's answer");
        assertEquals(true, passes.allowed(), "passes: " + passes);
        assertEquals(memoryBucket.peek(key, 1), bucket.peek(key, 1), "the bucket took one");
        assertEquals(memoryFull.peek(key, 1), full.peek(key, 1), refusing + " took one");
    }

    /** A refusing limit that counts rejections counts the refused request, as alone; the others take nothing. */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aRefusingLimitThatCountsRejectionsCountsIt(Algorithm refusing) {
        String key = "counted:" + run + ":" + refusing;
        RateLimiter bucket = limiter(Algorithm.TOKEN_BUCKET, 5, BUCKET, false, store());
        RateLimiter full = limiter(refusing, 2, MINUTE, true, store());
        RateLimiter memoryBucket = memory(Algorithm.TOKEN_BUCKET, 5, BUCKET, false);
        RateLimiter memoryFull = memory(refusing, 2, MINUTE, true);
        for (int i = 0; i < 3; i++) {
            assertEquals(memoryFull.tryAcquire(key), full.tryAcquire(key), "request " + i + " alone");
            clock.advance(Duration.ofSeconds(7));
            JointDecision expected =
                    RateLimiter.tryAcquireAll(Acquisition.of(memoryBucket, key), Acquisition.of(memoryFull, key));
            JointDecision joint = RateLimiter.tryAcquireAll(Acquisition.of(bucket, key), Acquisition.of(full, key));
            assertEquals(expected, joint, "joint request " + i);
            clock.advance(Duration.ofSeconds(3));
            assertEquals(memoryFull.peek(key, 1), full.peek(key, 1), refusing + " after joint request " + i);
            assertEquals(memoryBucket.peek(key, 1), bucket.peek(key, 1), "the bucket after joint request " + i);
        }
    }

    /**
     * 8 threads on one key under 10/s (a token bucket) and 100/min (a fixed window), the clock moved by hand a second
     * at a time: each second admits exactly what both allow, 10 until the minute's 100 are reached, then none; the
     * per-second bucket gives nothing to requests the minute refuses.
     */
    @Test
    void eightThreadsAdmitExactlyWhatBothLimitsAllow() throws Exception {
        String key = "both:" + run;
        RateLimiter perSecond = limiter(Algorithm.TOKEN_BUCKET, 10, Duration.ofSeconds(1), false, store());
        RateLimiter perMinute = limiter(Algorithm.FIXED_WINDOW, 100, MINUTE, false, store());
        List<Acquisition> request = List.of(Acquisition.of(perSecond, key), Acquisition.of(perMinute, key));
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        try {
            int total = 0;
            for (int second = 0; second < 14; second++) {
                int admitted = burst(threads, request, 4); // 32 attempts
                int expected = Math.min(10, 100 - total);
                assertEquals(expected, admitted, "admitted in second " + second + " (" + total + " before)");
                total += admitted;
                if (total == 100 && second > 10) {
                    assertEquals(
                            10,
                            perSecond.peek(key, 1).remaining(),
                            "the bucket refilled and gave nothing to refused requests");
                }
                clock.advance(Duration.ofSeconds(1));
            }
            assertEquals(100, total, "admitted in the minute");
            assertEquals(0, perMinute.peek(key, 1).remaining(), "the minute's counter");
        } finally {
            threads.shutdownNow();
        }
    }

    /** Every thread sends {@code attempts} requests at once; returns how many were admitted. */
    private static int burst(ExecutorService threads, List<Acquisition> request, int attempts) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger admitted = new AtomicInteger();
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            done.add(threads.submit(() -> {
                start.await();
                for (int i = 0; i < attempts; i++) {
                    if (RateLimiter.tryAcquireAll(request).allowed()) {
                        admitted.incrementAndGet();
                    }
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : done) {
            f.get(2, TimeUnit.MINUTES);
        }
        return admitted.get();
    }

    /**
     * Joint requests over the same two rows, half of them naming them in one order and half in the other, at once:
     * none waits for ever (each is bounded, and no statement fails with a deadlock), and the counts are exact: the
     * scarcer limit admits exactly its limit, and the other loses nothing to the refused requests.
     */
    @Test
    void jointRequestsInOppositeOrdersDoNotDeadlock() throws Exception {
        store(); // the table and functions
        CountingDataSource counting = new CountingDataSource(Databases.shared());
        PostgresStore counted = PostgresStore.builder(counting.dataSource())
                .table("sluice_joint")
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Databases.PATIENCE)
                .createSchema(false)
                .build();
        RateLimiter scarce = limiter(Algorithm.FIXED_WINDOW, 150, MINUTE, false, counted);
        RateLimiter ample = limiter(Algorithm.SLIDING_LOG, 1000, MINUTE, false, counted);
        String a = "order:" + run + ":a";
        String b = "order:" + run + ":b";
        List<Acquisition> forward =
                List.of(Acquisition.of(scarce, a), Acquisition.of(ample, b), Acquisition.of(scarce, b));
        List<Acquisition> backward =
                List.of(Acquisition.of(scarce, b), Acquisition.of(ample, b), Acquisition.of(scarce, a));
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        try {
            CountDownLatch start = new CountDownLatch(1);
            AtomicInteger admitted = new AtomicInteger();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                List<Acquisition> request = t % 2 == 0 ? forward : backward;
                done.add(threads.submit(() -> {
                    start.await();
                    for (int i = 0; i < 25; i++) { // 200 in all
                        if (RateLimiter.tryAcquireAll(request).allowed()) {
                            admitted.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(2, TimeUnit.MINUTES);
            }
            assertEquals(List.of(), counting.failures(), "SQLSTATEs of failed statements (40P01: deadlock)");
            assertEquals(150, admitted.get(), "admitted");
            assertEquals(0, scarce.peek(a, 1).remaining(), "scarce a");
            assertEquals(0, scarce.peek(b, 1).remaining(), "scarce b");
            assertEquals(850, ample.peek(b, 1).remaining(), "ample b: only the admitted requests took");
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * A joint request of one part that does not count rejections (each check of the policy engine of one descriptor),
     * which the store sends as its single request ({@link dev.sluice.spi.AtomicJointDecider#answersAsSingle}): the
     * same answers as that part's {@code tryAcquire} and as the in-memory store's, taken and refused at costs 1 to 3,
     * and the same state after.
     */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aJointRequestOfOnePartAnswersAsItsSingleRequest(Algorithm algorithm) {
        String single = "one-part:" + run + ":" + algorithm + ":single";
        String joint = "one-part:" + run + ":" + algorithm + ":joint";
        RateLimiter limiter = limiter(algorithm, 5, MINUTE, false, store());
        RateLimiter memory = memory(algorithm, 5, MINUTE, false);
        int refused = 0;
        for (int i = 0; i < 12; i++) {
            long cost = 1 + i % 3;
            Decision alone = limiter.tryAcquire(single, cost);
            JointDecision together = RateLimiter.tryAcquireAll(Acquisition.of(limiter, joint, cost));
            assertEquals(memory.tryAcquire(single, cost), alone, "the in-memory store's answer, request " + i);
            assertEquals(alone, together.decision(0), "request " + i);
            refused += alone.allowed() ? 0 : 1;
            clock.advance(Duration.ofSeconds(3));
        }
        assertTrue(refused >= 3, "some requests were refused: " + refused);
        assertEquals(limiter.peek(single, 1), limiter.peek(joint, 1), "the same state after");
    }

    /** A joint request of three parts is one statement and one round trip, whatever the parts. */
    @Test
    void aJointRequestIsOneRoundTrip() throws Exception {
        store(); // the table and functions
        try (RoundTripProxy proxy = new RoundTripProxy(PostgresServers.shared());
                Connection connection = DriverManager.getConnection(proxy.url())) {
            CountingDataSource counting = new CountingDataSource(CounterRoundTripTest.only(connection));
            PostgresStore tripped = PostgresStore.builder(counting.dataSource())
                    .table("sluice_joint")
                    .timeSource(TimeSource.CLOCK)
                    .failurePolicy(FailurePolicy.THROW)
                    .timeout(Databases.PATIENCE)
                    .createSchema(false)
                    .build();
            List<Acquisition> request = List.of(
                    Acquisition.of(
                            limiter(Algorithm.TOKEN_BUCKET, 10, Duration.ofSeconds(1), false, tripped), "t" + run),
                    Acquisition.of(limiter(Algorithm.SLIDING_WINDOW_COUNTER, 100, MINUTE, true, tripped), "t" + run),
                    Acquisition.of(
                            limiter(Algorithm.LEAKY_BUCKET, 1000, Duration.ofHours(1), false, tripped), "u" + run));
            RateLimiter.tryAcquireAll(request); // warm: the driver prepares on first use
            for (int i = 0; i < 5; i++) {
                long statements = counting.statements();
                long trips = proxy.roundTrips();
                JointDecision d = RateLimiter.tryAcquireAll(request);
                assertEquals(true, d.allowed(), "request " + i + ": " + d);
                assertEquals(1, counting.statements() - statements, "statements of joint request " + i);
                assertEquals(1, proxy.roundTrips() - trips, "round trips of joint request " + i);
            }
        }
    }
}
