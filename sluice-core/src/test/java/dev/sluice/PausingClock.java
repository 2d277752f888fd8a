package dev.sluice;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A UTC clock moved by hand that can stop one thread right after it has read the time, until the test lets it go on,
 * and that remembers the last time each thread read: the instant a decision was taken at, as an observer outside the
 * limiter sees it. So a test can put another thread's decision between one thread's reading of the time and its
 * decision, every run. Thread-safe; one pause per clock.
 */
public final class PausingClock extends Clock {

    private static final long BOUND_SECONDS = 10;

    private volatile Instant now;
    private volatile Thread pauseOn;
    private final CountDownLatch paused = new CountDownLatch(1);
    private final CountDownLatch resumed = new CountDownLatch(1);
    private final ThreadLocal<Instant> lastRead = new ThreadLocal<>();

    public PausingClock(Instant start) {
        this.now = start;
    }

    public void set(Instant instant) {
        now = instant;
    }

    /** Stops {@code thread} right after its next reading of the time, until {@link #resume()}. */
    public void pauseNextReadOn(Thread thread) {
        pauseOn = thread;
    }

    /** Waits until the thread named by {@link #pauseNextReadOn} has read the time and stopped. */
    public void awaitPaused() throws InterruptedException {
        if (!paused.await(BOUND_SECONDS, TimeUnit.SECONDS)) {
            throw new AssertionError("the paused thread never read the time");
        }
    }

    /** Lets the paused thread go on. */
    public void resume() {
        resumed.countDown();
    }

    /** The time the calling thread read last; null if it never read. */
    public Instant lastReadHere() {
        return lastRead.get();
    }

    @Override
    public Instant instant() {
        Instant i = now;
        lastRead.set(i);
        if (Thread.currentThread() == pauseOn) {
            pauseOn = null;
            paused.countDown();
            try {
                if (!resumed.await(BOUND_SECONDS, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never resumed the paused thread");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while paused", e);
            }
        }
        return i;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("UTC only");
    }
}
