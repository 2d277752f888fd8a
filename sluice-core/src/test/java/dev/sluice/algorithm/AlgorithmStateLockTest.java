package dev.sluice.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** The per-key lock of {@link AlgorithmState}: mutual exclusion, visibility, and the retired flag it carries. */
class AlgorithmStateLockTest {

    private static final Params PARAMS = new Params(RateLimiter.builder(Algorithm.TOKEN_BUCKET)
            .limit(10, Duration.ofSeconds(1))
            .clock(Clock.fixed(Instant.EPOCH, ZoneOffset.UTC))
            .config());

    private final AlgorithmState state = AlgorithmState.create(Algorithm.TOKEN_BUCKET, PARAMS);
    private long counter; // guarded by state's lock

    @Test
    void increments_under_the_lock_from_four_threads_are_never_lost() throws Exception {
        int threads = 4;
        int perThread = 200_000;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    state.lock();
                    try {
                        counter++;
                    } finally {
                        state.unlock();
                    }
                }
            });
            w.start();
            workers.add(w);
        }
        start.countDown();
        for (Thread w : workers) {
            w.join();
        }
        state.lock();
        try {
            assertEquals((long) threads * perThread, counter);
        } finally {
            state.unlock();
        }
    }

    @Test
    void a_retired_state_stays_retired_across_unlock_and_can_still_be_locked() {
        state.lock();
        try {
            assertFalse(state.retired());
            state.retire();
            assertTrue(state.retired());
        } finally {
            state.unlock();
        }
        state.lock(); // a retired state's word is not 0: this takes the contended path and must not spin forever
        try {
            assertTrue(state.retired());
        } finally {
            state.unlock();
        }
    }
}
