package dev.sluice.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import dev.sluice.TestClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Sixty-four threads on a hundred keys while idle keys are being evicted: every key admits exactly its limit,
 * with the clock frozen and with the clock moving (which runs the request path's own sweeps).
 */
class InMemoryConcurrencyTest {

    private static final int THREADS = 64;
    private static final int PER_THREAD = 50;
    private static final int KEYS = 100; // each key gets exactly THREADS·PER_THREAD/KEYS = 32 requests
    private static final int LIMIT = 5;

    private final TestClock clock = new TestClock();
    private final ExecutorService pool = Executors.newFixedThreadPool(THREADS + 2);

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    /** Runs one burst of requests, all threads released at once, with {@code background} running meanwhile. */
    private AtomicIntegerArray burst(InMemoryRateLimiter limiter, String prefix, Runnable background) throws Exception {
        AtomicIntegerArray admitted = new AtomicIntegerArray(KEYS);
        CountDownLatch start = new CountDownLatch(1);
        AtomicBoolean done = new AtomicBoolean();
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            workers.add(pool.submit(() -> {
                start.await();
                for (int i = 0; i < PER_THREAD; i++) {
                    int k = (thread * PER_THREAD + i) % KEYS;
                    if (limiter.tryAcquire(prefix + k).allowed()) {
                        admitted.incrementAndGet(k);
                    }
                }
                return null;
            }));
        }
        Future<?> side = pool.submit(() -> {
            start.await();
            while (!done.get()) {
                background.run();
            }
            return null;
        });
        start.countDown();
        for (Future<?> w : workers) {
            w.get(60, TimeUnit.SECONDS);
        }
        done.set(true);
        side.get(60, TimeUnit.SECONDS);
        return admitted;
    }

    private static void assertEachKeyAdmittedTheLimit(String what, AtomicIntegerArray admitted) {
        for (int k = 0; k < KEYS; k++) {
            assertEquals(LIMIT, admitted.get(k), what + ": key " + k);
        }
    }

    /**
     * The clock frozen within a burst; each burst three windows after the last, so every key of the last one is
     * idle and being evicted by another thread while the new burst recreates it.
     */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void frozenClockWithEvictionRacingEveryInsertion(Algorithm algorithm) throws Exception {
        InMemoryRateLimiter limiter = (InMemoryRateLimiter) InMemoryStore.builder()
                .keepIdleKeys(Duration.ZERO)
                .build()
                .bind(new LimiterConfig(algorithm, LIMIT, Duration.ofSeconds(1), clock, false, 4, false));
        for (int burst = 0; burst < 5; burst++) {
            AtomicIntegerArray admitted = burst(limiter, "k", limiter::evictIdle);
            assertEachKeyAdmittedTheLimit(algorithm + " burst " + burst, admitted);
            assertEquals(KEYS, limiter.keyCount(), algorithm + " burst " + burst + ": only live keys are evicted");
            clock.advance(Duration.ofSeconds(3));
        }
    }

    /**
     * A thousand idle keys from three hours before; the clock moves by a millisecond at a time during the burst
     * (two seconds at most, against a one-hour window: no refill reaches a whole permit), so requests run the
     * eviction sweeps themselves. Every key admits exactly its limit and the idle keys are all gone.
     */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void movingClockWithTheRequestPathsOwnSweeps(Algorithm algorithm) throws Exception {
        InMemoryRateLimiter limiter = (InMemoryRateLimiter) InMemoryStore.builder()
                .keepIdleKeys(Duration.ZERO)
                .build()
                .bind(new LimiterConfig(algorithm, LIMIT, Duration.ofHours(1), clock, false, 60, false));
        clock.at("09:00:00");
        for (int i = 0; i < 1_000; i++) {
            limiter.tryAcquire("idle" + i);
        }
        clock.at("12:00:00");
        int[] moves = {0};
        AtomicIntegerArray admitted = burst(limiter, "k", () -> {
            if (moves[0]++ < 2_000) {
                clock.advance(Duration.ofMillis(1));
            } else {
                Thread.onSpinWait();
            }
        });
        assertEachKeyAdmittedTheLimit(algorithm.toString(), admitted);
        assertTrue(limiter.keyCount() >= KEYS, "the active keys are held: " + limiter.keyCount());
        limiter.evictIdle();
        assertEquals(KEYS, limiter.keyCount(), algorithm + ": every idle key evicted, every active one kept");
    }
}
