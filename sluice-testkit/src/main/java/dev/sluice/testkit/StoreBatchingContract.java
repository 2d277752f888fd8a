package dev.sluice.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.server.ProcessStall;
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
import java.util.function.Consumer;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;

/**
 * The contract of a store that sends concurrent consuming decisions together (group commit,
 * {@link dev.sluice.spi.GroupCommit}): batching changes no decision, keeps joint requests all or nothing, and a
 * stalled server answers every request made meanwhile by the failure policy, by its deadline, and applies none of
 * them once it wakes. A store's test extends it, giving a shared store and a server of the test's own to stall.
 *
 * <p>Each scenario runs a few hundred decisions: seconds in all, the stall's own server included.
 */
public abstract class StoreBatchingContract {

    /** Callers at once. */
    protected static final int THREADS = 64;
    /** Requests each caller makes in a row. */
    protected static final int REQUESTS_PER_THREAD = 8;
    /** The time of every limiter's clock: five seconds into a minute, so a minute's window has 55 s left. */
    protected static final Instant NOON = Instant.parse("2026-01-01T12:00:05Z");
    /** The bound of every wait: a call, the threads' work, the server's return. */
    protected static final Duration HANG = Duration.ofSeconds(20);
    /** The timeout of the stalled store: requests are answered by the failure policy this long after they came. */
    protected static final Duration STALL_TIMEOUT = Duration.ofMillis(500);

    /** For a store's test to extend. */
    protected StoreBatchingContract() {}

    /**
     * The store under test, shared by the tests of the class: {@link dev.sluice.FailurePolicy#THROW}, the limiter's
     * clock ({@link dev.sluice.TimeSource#CLOCK}) and a generous timeout, so that a slow answer fails the test rather
     * than turning into a failure policy's answer. The contract does not close it.
     */
    protected abstract RateLimitStore store();

    /** The exact algorithms the store keeps, each of which the 64-thread scenario runs. */
    protected List<Algorithm> algorithms() {
        return List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_LOG, Algorithm.TOKEN_BUCKET);
    }

    /** Starts a server of the test's own, in processes that can be stalled. */
    protected abstract OwnServer startOwnServer() throws Exception;

    /** A server of one test's own, with what that test needs of it. Closing it closes its stores and stops it. */
    public interface OwnServer extends AutoCloseable {

        /**
         * A store on this server with {@link dev.sluice.FailurePolicy#FAIL_CLOSED}, the limiter's clock, the timeout
         * {@code timeout}, reporting each failure to {@code failures}.
         */
        RateLimitStore store(Duration timeout, Consumer<? super SluiceException> failures) throws Exception;

        /** Every process of the server, for {@link ProcessStall}. */
        List<Long> pids() throws Exception;

        /** Closes the stores made here and stops the server. */
        @Override
        void close();
    }

    /** 64 × 8 requests on one key under a limit of 300: exactly 300 admitted, whatever the batches were. */
    @Test
    void sixtyFourThreadsOnOneKeyAdmitExactlyTheLimit() throws Exception {
        for (Algorithm algorithm : algorithms()) {
            RateLimiter limiter = RateLimiter.builder(algorithm)
                    .limit(300, Duration.ofMinutes(1))
                    .clock(new ManualClock(NOON))
                    .store(store())
                    .build();
            String key = "batched:" + UUID.randomUUID();
            int admitted = onAllThreads(thread -> limiter.tryAcquire(key).allowed());
            assertEquals(300, admitted, algorithm + ": admitted of " + THREADS * REQUESTS_PER_THREAD);
            assertEquals(0, limiter.peek(key, 1).remaining(), algorithm + ": left");
        }
    }

    /**
     * 64 × 8 joint requests over a limit of 200 and one of 400 on one key: exactly 200 admitted, and the limit of
     * 400 has exactly 200 left, so no refused request took from it.
     */
    @Test
    void jointRequestsInBatchesAreAllOrNothing() throws Exception {
        jointRequestsAmongSingles("joint-batched:", 400, thread -> false);
    }

    /**
     * 64 × 8 joint requests over a limit of 200 and one of 1000 on one key, among single requests on the limit of
     * 1000 alone: exactly 200 joint requests admitted, and the limit of 1000 holds exactly what the admitted requests
     * took, so no refused joint request took from it.
     */
    @Test
    void jointRequestsAmongSingleOnesInBatchesAreAllOrNothing() throws Exception {
        jointRequestsAmongSingles("joint-among-singles:", 1000, thread -> thread % 4 == 0);
    }

    /**
     * 64 × 8 requests on one new key named from {@code prefix}: joint ones over a fixed window of 200 a minute and a
     * token bucket of {@code high} an hour, and on the threads {@code single} picks single ones on the bucket alone,
     * in the same batches. Asserts that every single one is admitted (the bucket is never emptied), exactly 200 joint
     * ones are, the window is used up and the bucket holds exactly what the admitted requests took: no refused joint
     * request took from it.
     */
    private void jointRequestsAmongSingles(String prefix, long high, IntPredicate single) throws Exception {
        ManualClock clock = new ManualClock(NOON);
        RateLimiter window = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(200, Duration.ofMinutes(1))
                .clock(clock)
                .store(store())
                .build();
        RateLimiter bucket = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                .limit(high, Duration.ofHours(1))
                .clock(clock)
                .store(store())
                .build();
        String key = prefix + UUID.randomUUID();
        List<Boolean> singles = new CopyOnWriteArrayList<>();
        int admitted = onAllThreads(thread -> {
            if (single.test(thread)) {
                singles.add(bucket.tryAcquire(key).allowed());
                return false;
            }
            return RateLimiter.tryAcquireAll(Acquisition.of(bucket, key), Acquisition.of(window, key))
                    .allowed();
        });
        long singlesAdmitted = singles.stream().filter(b -> b).count();
        assertEquals(singles.size(), singlesAdmitted, "the limit of " + high + " is never reached");
        assertEquals(200, admitted, "joint requests admitted of " + THREADS * REQUESTS_PER_THREAD);
        assertEquals(high - 200 - singlesAdmitted, bucket.peek(key, 1).remaining(), "left of the limit of " + high);
        assertEquals(0, window.peek(key, 1).remaining(), "left of the limit of 200");
    }

    /**
     * A server stopped (SIGSTOP, every process of it) while requests arrive: with {@code FAIL_CLOSED} each of 8
     * requests is denied by the failure policy, none waits for the server to wake; the one sent sits in the stopped
     * server's socket, and those queued behind it are dropped or sent in turn. Once the server wakes it runs what it
     * had received, past the deadlines: the counts are what they were before the stall.
     */
    @Test
    void requestsDuringAStallAreDeniedByTheirDeadlinesAndNeverApplied() throws Exception {
        try (OwnServer server = startOwnServer()) {
            List<SluiceException> failures = new CopyOnWriteArrayList<>();
            RateLimiter limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                    .limit(3, Duration.ofMinutes(1))
                    .clock(new ManualClock(NOON))
                    .store(server.store(STALL_TIMEOUT, failures::add))
                    .build();
            String key = "stall:" + UUID.randomUUID();
            Await.until("a decision answered by the store", Await.GENEROUS, () -> !limiter.tryAcquire("warm")
                    .failed());
            assertEquals(2, limiter.tryAcquire(key).remaining(), "before the stall");
            int failuresBefore = failures.size();

            ProcessStall stall = ProcessStall.of(server.pids());
            try {
                assertEachRefusedByTheFailurePolicy(limiter, key, 8, HANG);
            } finally {
                stall.close();
            }
            assertEquals(8, failures.size() - failuresBefore, "failures during the stall");

            // the stopped server has run what it had received by the time a later call is answered
            Await.until("the server answers again", Await.GENEROUS, () -> !assertTimeoutPreemptively(
                            HANG, () -> limiter.tryAcquire("after"))
                    .failed());
            assertEquals(Decision.allowed(3, 2, Duration.ofSeconds(55).toNanos()), limiter.peek(key, 1), "after");
        }
    }

    /** A request made by thread {@code thread}: whether it passed. */
    @FunctionalInterface
    protected interface Request {
        boolean call(int thread) throws Exception;
    }

    /** Runs {@code request} {@value #REQUESTS_PER_THREAD} times on each of 64 threads started together; the passes. */
    protected static int onAllThreads(Request request) throws Exception {
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

    /**
     * {@code callers} threads call {@code limiter.tryAcquire(key)} at once; asserts that each is answered within
     * {@code bound} by the failure policy's refusal, as a stalled store's callers must be.
     */
    public static void assertEachRefusedByTheFailurePolicy(RateLimiter limiter, String key, int callers, Duration bound)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(callers);
        try {
            List<Future<Decision>> during = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                during.add(pool.submit(() -> limiter.tryAcquire(key)));
            }
            for (Future<Decision> d : during) {
                Decision refused = d.get(bound.toMillis(), TimeUnit.MILLISECONDS);
                assertTrue(refused.failed() && !refused.allowed(), "denied by the failure policy: " + refused);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
