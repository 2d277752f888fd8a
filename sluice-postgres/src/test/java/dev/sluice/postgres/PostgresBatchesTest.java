package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.PostgresServers;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Concurrent decisions share calls ({@link PostgresBatches}) and stay exact: 64 threads on one key admit exactly the
 * limit, joint requests decided in the same batches stay all or nothing, and a stalled server answers every request
 * made meanwhile by the failure policy and, once it wakes, applies none of them.
 */
class PostgresBatchesTest {

    private static final int THREADS = 64;
    private static final int REQUESTS_PER_THREAD = 8;
    private static final Instant NOON = Instant.parse("2026-01-01T12:00:05Z");
    private static final Duration HANG = Duration.ofSeconds(20);

    private static HikariDataSource pool;
    private static PostgresStore store;

    @BeforeAll
    static void startStore() {
        pool = Databases.pool(PostgresServers.shared(), 8, Databases.PATIENCE);
        store = PostgresStore.builder(pool)
                .table("sluice_batches")
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Databases.PATIENCE)
                .build();
    }

    @AfterAll
    static void stopStore() {
        pool.close();
    }

    /** 64 × 8 requests on one key under a limit of 300: exactly 300 admitted, whatever the batches were. */
    @Test
    void sixtyFourThreadsOnOneKeyAdmitExactlyTheLimit() throws Exception {
        for (Algorithm algorithm : List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_LOG, Algorithm.TOKEN_BUCKET)) {
            RateLimiter limiter = RateLimiter.builder(algorithm)
                    .limit(300, Duration.ofMinutes(1))
                    .clock(new ManualClock(NOON))
                    .store(store)
                    .build();
            String key = "batched:" + UUID.randomUUID();
            int admitted = onAllThreads(thread -> limiter.tryAcquire(key).allowed());
            assertEquals(300, admitted, algorithm + ": admitted of " + THREADS * REQUESTS_PER_THREAD);
            assertEquals(0, limiter.peek(key, 1).remaining(), algorithm + ": left");
        }
    }

    /**
     * 64 × 8 joint requests over a limit of 200 and one of 400 on one key, among single requests on the limit of 400
     * alone: exactly 200 joint requests admitted, and the limit of 400 holds exactly what the admitted requests took,
     * so no refused joint request took from it.
     */
    @Test
    void jointRequestsInBatchesAreAllOrNothing() throws Exception {
        ManualClock clock = new ManualClock(NOON);
        RateLimiter low = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(200, Duration.ofMinutes(1))
                .clock(clock)
                .store(store)
                .build();
        RateLimiter high = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                .limit(1000, Duration.ofHours(1))
                .clock(clock)
                .store(store)
                .build();
        String key = "joint-batched:" + UUID.randomUUID();
        List<Boolean> singles = new CopyOnWriteArrayList<>();
        int admitted = onAllThreads(thread -> {
            if (thread % 4 == 0) {
                singles.add(high.tryAcquire(key).allowed()); // a single request in the same batches
                return false;
            }
            return RateLimiter.tryAcquireAll(Acquisition.of(high, key), Acquisition.of(low, key))
                    .allowed();
        });
        long singlesAdmitted = singles.stream().filter(b -> b).count();
        assertEquals(singles.size(), singlesAdmitted, "the limit of 1000 is never reached");
        assertEquals(200, admitted, "joint requests admitted");
        assertEquals(1000 - 200 - singlesAdmitted, high.peek(key, 1).remaining(), "left of the limit of 1000");
        assertEquals(0, low.peek(key, 1).remaining(), "left of the limit of 200");
    }

    /**
     * A server stopped (SIGSTOP, every process of it) while requests arrive: with {@code FAIL_CLOSED} each of 8
     * requests is denied by the failure policy, none waits for the server to wake; the one sent (on its caller's
     * thread) sits in the stopped server's socket, and those queued behind it are dropped or sent in turn. Once the
     * server wakes it runs what it had received, past the deadlines: the counts are what they were before the stall.
     */
    @Test
    void requestsDuringAStallAreDeniedByTheirDeadlinesAndNeverApplied() throws Exception {
        try (PostgresServers.Own server = PostgresServers.startOwn();
                HikariDataSource own = Databases.pool(server.url(), 4, Duration.ofMillis(250), 4)) {
            List<SluiceException> failures = new CopyOnWriteArrayList<>();
            SharedRateLimiter limiter = (SharedRateLimiter) RateLimiter.builder(Algorithm.FIXED_WINDOW)
                    .limit(3, Duration.ofMinutes(1))
                    .clock(new ManualClock(NOON))
                    .store(PostgresStore.builder(own)
                            .table("sluice_stall")
                            .timeSource(TimeSource.CLOCK)
                            .failurePolicy(FailurePolicy.FAIL_CLOSED)
                            .timeout(Duration.ofMillis(500))
                            .failureListener(failures::add)
                            .build())
                    .build();
            String key = "stall";
            Await.until("a decision answered by the store", Await.GENEROUS, () -> !limiter.tryAcquire("warm")
                    .failed());
            assertEquals(2, limiter.tryAcquire(key).remaining(), "before the stall");
            int failuresBefore = failures.size();

            ExecutorService callers = Executors.newFixedThreadPool(8);
            Stall stall = Stall.of(own);
            try {
                List<Future<Decision>> during = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    during.add(callers.submit(() -> limiter.tryAcquire(key)));
                }
                for (Future<Decision> d : during) {
                    Decision refused = d.get(HANG.toSeconds(), TimeUnit.SECONDS);
                    assertTrue(refused.failed() && !refused.allowed(), "denied by the failure policy: " + refused);
                }
            } finally {
                stall.close();
                callers.shutdownNow();
            }
            assertEquals(8, failures.size() - failuresBefore, "failures during the stall");

            // the stopped server has run what it had received by the time a later call is answered
            Await.until("PostgreSQL answers again", Await.GENEROUS, () -> !assertTimeoutPreemptively(
                            HANG, () -> limiter.tryAcquire("after"))
                    .failed());
            assertEquals(Decision.allowed(3, 2, Duration.ofSeconds(55).toNanos()), limiter.peek(key, 1), "after");
        }
    }

    /** A request made by thread {@code thread}: whether it passed. */
    @FunctionalInterface
    private interface Request {
        boolean call(int thread) throws Exception;
    }

    /** Runs {@code request} {@value #REQUESTS_PER_THREAD} times on each of 64 threads started together; the passes. */
    private static int onAllThreads(Request request) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Integer>> passes = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                passes.add(threads.submit(() -> {
                    go.await();
                    int passed = 0;
                    for (int i = 0; i < REQUESTS_PER_THREAD; i++) {
                        passed += request.call(thread) ? 1 : 0;
                    }
                    return passed;
                }));
            }
            go.countDown();
            int total = 0;
            for (Future<Integer> p : passes) {
                total += p.get(HANG.toSeconds() * 3, TimeUnit.SECONDS);
            }
            return total;
        } finally {
            threads.shutdownNow();
        }
    }
}
