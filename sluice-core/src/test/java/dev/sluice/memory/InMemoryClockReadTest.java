package dev.sluice.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A request reads the time before it takes its key's state, and again if the state was evicted meanwhile, so an
 * eviction that falls between a request's reading of the clock and its decision never lets it decide at its older
 * time on a fresh state.
 */
class InMemoryClockReadTest {

    /** A clock whose next read by one chosen thread takes the time, then waits until released. */
    private static final class GateClock extends Clock {
        volatile Instant now;
        volatile Thread gated;
        final CountDownLatch reading = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        GateClock(Instant start) {
            now = start;
        }

        @Override
        public Instant instant() {
            Instant value = now;
            if (Thread.currentThread() == gated) {
                gated = null;
                reading.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return value;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException();
        }
    }

    /**
     * Limit 1 per 10 s. A request reads 12:00:09.5 and stalls; meanwhile the time becomes 12:00:10.5 and the key's
     * state (window 12:00:00, full) is evicted as idle. Had the stalled request decided on a fresh state at its
     * reading, 12:00:09.5, it would be admitted: a second permit in a window of one. It finds its state retired and
     * reads the time again: admitted at 12:00:10.5, in the window of 12:00:10, which then holds its one permit.
     */
    @Test
    void aStalledRequestNeverDecidesOnAStateEvictedAfterItReadTheClock() throws Exception {
        GateClock clock = new GateClock(Instant.parse("2026-01-01T12:00:09Z"));
        InMemoryRateLimiter limiter = (InMemoryRateLimiter) RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(1, Duration.ofSeconds(10))
                .clock(clock)
                .store(InMemoryStore.builder().keepIdleKeys(Duration.ZERO).build()) // evicts as soon as idle
                .build();
        assertTrue(limiter.tryAcquire("k").allowed());

        clock.now = Instant.parse("2026-01-01T12:00:09.500Z");
        AtomicReference<Decision> stalled = new AtomicReference<>();
        Thread a = new Thread(() -> stalled.set(limiter.tryAcquire("k")));
        clock.gated = a;
        a.start();
        clock.reading.await();

        clock.now = Instant.parse("2026-01-01T12:00:10.500Z");
        Thread evictor = new Thread(limiter::evictIdle);
        evictor.start();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!waitsForAStateLock(evictor) && evictor.getState() != Thread.State.TERMINATED) {
            if (System.nanoTime() > deadline) {
                fail("the evicting thread neither finished nor waited for the key's lock: " + evictor.getState());
            }
            Thread.onSpinWait();
        }
        clock.release.countDown();
        a.join();
        evictor.join();

        Decision d = stalled.get();
        assertTrue(d.allowed(), d.toString());
        assertEquals(Duration.ofMillis(9500), d.resetAfter(), "counted in the window of 12:00:10: " + d);
        Decision next = limiter.tryAcquire("k");
        assertFalse(next.allowed(), "the window of 12:00:10 holds its one permit: " + next);
        assertEquals(Duration.ofMillis(9500), next.retryAfter(), next.toString());
    }

    /** Whether {@code t} is spinning or yielding for a key's lock, which the stalled request holds. */
    private static boolean waitsForAStateLock(Thread t) {
        for (StackTraceElement frame : t.getStackTrace()) {
            if (frame.getClassName().equals("dev.sluice.algorithm.AlgorithmState")
                    && frame.getMethodName().equals("lockContended")) {
                return true;
            }
        }
        return false;
    }
}
