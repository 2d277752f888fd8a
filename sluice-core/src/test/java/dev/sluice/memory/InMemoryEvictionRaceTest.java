package dev.sluice.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Threads deciding on the same keys while idle keys are evicted under them: exactly the limit is admitted per key
 * and window, never more (a decision applied to an evicted state) and never less (a lost permit).
 */
class InMemoryEvictionRaceTest {

    private static final int THREADS = 4;
    private static final int KEYS = 300;
    private static final long LIMIT = 5;
    private static final Duration WINDOW = Duration.ofSeconds(1);
    private static final int PHASES = 30;
    private static final int ATTEMPTS_PER_KEY = 4; // per thread and phase: 16 attempts for 5 permits

    /** A clock the test moves between phases and every thread reads. */
    private static final class SteppedClock extends Clock {
        final AtomicLong nanos =
                new AtomicLong(Instant.parse("2026-01-01T12:00:00Z").getEpochSecond() * 1_000_000_000L);

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Instant instant() {
            long n = nanos.get();
            return Instant.ofEpochSecond(Math.floorDiv(n, 1_000_000_000L), Math.floorMod(n, 1_000_000_000L));
        }
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void every_key_admits_exactly_its_limit_per_phase_while_idle_keys_are_evicted(Algorithm algorithm)
            throws Exception {
        run(algorithm, KEYS, PHASES, false);
    }

    /**
     * The same with enough keys that the key table is rebuilt larger several times under the deciding threads while
     * the first phase fills it, and keys are evicted and made again in the later phases; each key asked by a string
     * equal to the one it was created with, not the same one, so that the table compares their characters.
     */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void the_same_while_the_key_table_is_rebuilt_under_the_threads(Algorithm algorithm) throws Exception {
        run(algorithm, 6_000, 4, true);
    }

    private static void run(Algorithm algorithm, int keyCount, int phases, boolean equalKeys) throws Exception {
        SteppedClock clock = new SteppedClock();
        InMemoryRateLimiter limiter = (InMemoryRateLimiter) RateLimiter.builder(algorithm)
                .limit(LIMIT, WINDOW)
                .clock(clock)
                .store(InMemoryStore.builder().keepIdleKeys(Duration.ZERO).build()) // evicts as soon as idle
                .build();
        String[] keys = new String[keyCount];
        for (int k = 0; k < keyCount; k++) {
            keys[k] = "client:" + k;
        }
        AtomicLong allowed = new AtomicLong();
        // Each phase starts two windows after the last, when every key decides as a fresh one and is idle, so
        // the first requests of the phase sweep and evict keys that other threads are deciding on.
        CyclicBarrier phase = new CyclicBarrier(THREADS, () -> clock.nanos.addAndGet(2 * WINDOW.toNanos() + 7));
        List<Thread> workers = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int offset = t * keyCount / THREADS;
            Thread w = new Thread(() -> {
                try {
                    for (int p = 0; p < phases; p++) {
                        phase.await();
                        for (int a = 0; a < ATTEMPTS_PER_KEY; a++) {
                            for (int k = 0; k < keyCount; k++) {
                                String key = keys[(offset + k) % keyCount];
                                if (limiter.tryAcquire(equalKeys ? new String(key) : key)
                                        .allowed()) {
                                    allowed.incrementAndGet();
                                }
                            }
                        }
                    }
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            });
            w.start();
            workers.add(w);
        }
        for (Thread w : workers) {
            w.join();
        }
        assertEquals(List.of(), failures);
        assertEquals(LIMIT * keyCount * phases, allowed.get());
        clock.nanos.addAndGet(2 * WINDOW.toNanos());
        assertEquals(keyCount, limiter.evictIdle(), "every key is idle two windows after its last request");
        assertTrue(limiter.keyCount() == 0, "keys left: " + limiter.keyCount());
    }
}
