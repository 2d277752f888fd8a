package dev.sluice.testkit;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A caller that keeps deciding through a store while a test stops and restarts its server, to measure how soon the
 * answers are right again: every 10 ms it decides a request on a key never used before, on a thread of its own. A
 * right answer admits with {@code limit - 1} left; the failure policy's is {@link Decision#failed()}; anything else is
 * wrong.
 *
 * <pre>{@code
 * RecoveryProbe probe = RecoveryProbe.start(limiter, "recovery:" + run + ":");
 * server.stop();
 * probe.arm();                       // no right answer can come before the server is back
 * server.restart();
 * long back = System.nanoTime();
 * long took = probe.awaitRight() - back;
 * probe.stop();
 * }</pre>
 */
public final class RecoveryProbe {

    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong wrong = new AtomicLong();
    private final AtomicLong firstRightAt = new AtomicLong(); // System.nanoTime() at its answer
    private volatile boolean armed;
    private volatile boolean running = true;
    private final Thread thread;

    private RecoveryProbe(RateLimiter limiter, String keyPrefix) {
        long right = limiter.config().limit() - 1;
        thread = new Thread(
                () -> {
                    for (long i = 0; running; i++) {
                        Decision d = limiter.tryAcquire(keyPrefix + i);
                        long at = System.nanoTime();
                        if (d.failed()) {
                            failed.incrementAndGet();
                        } else if (d.allowed() && d.remaining() == right) {
                            if (armed) {
                                armed = false;
                                firstRightAt.set(at);
                            }
                        } else {
                            wrong.incrementAndGet();
                        }
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                    }
                },
                "sluice-recovery-probe");
        thread.setDaemon(true);
    }

    /**
     * Runs {@code outages} outages under a probe on {@code limiter}: waits for a right answer, then for each outage
     * stops the server ({@code stop}), waits for three failure-policy answers, starts it again ({@code start}) and
     * measures the time from then to the first right answer. Returns those times, in order.
     *
     * @throws AssertionError if an answer was neither right nor the failure policy's
     */
    public static List<Duration> outages(
            RateLimiter limiter, String keyPrefix, int outages, Runnable stop, Runnable start)
            throws InterruptedException {
        RecoveryProbe probe = start(limiter, keyPrefix);
        List<Duration> took = new ArrayList<>();
        try {
            probe.arm();
            probe.awaitRight();
            for (int outage = 1; outage <= outages; outage++) {
                stop.run();
                long failed = probe.failed();
                Await.until(
                        "three failure-policy answers while down", Await.GENEROUS, () -> probe.failed() >= failed + 3);
                probe.arm(); // no right answer can come before the server is back
                start.run();
                long back = System.nanoTime();
                took.add(Duration.ofNanos(Math.max(0, probe.awaitRight() - back)));
            }
        } finally {
            probe.stop();
        }
        if (probe.wrong() != 0) {
            throw new AssertionError(probe.wrong() + " answers were neither the server's nor the failure policy's");
        }
        return took;
    }

    /** Starts deciding on {@code limiter}, on keys {@code keyPrefix} followed by a number. */
    public static RecoveryProbe start(RateLimiter limiter, String keyPrefix) {
        RecoveryProbe probe = new RecoveryProbe(limiter, keyPrefix);
        probe.thread.start();
        return probe;
    }

    /** Makes the next right answer's time the one {@link #awaitRight()} returns. */
    public void arm() {
        armed = true;
    }

    /**
     * Waits (bounded, {@link Await#GENEROUS}) for the first right answer since {@link #arm()}; returns its time.
     *
     * @throws AssertionError if none came by then, with the answers counted so far and the stack of every thread of
     *                        the process at that moment, so that what held the store can be seen
     */
    public long awaitRight() {
        try {
            Await.until("a right decision", Await.GENEROUS, () -> !armed);
        } catch (AssertionError e) {
            throw new AssertionError(
                    e.getMessage() + " (" + failed() + " answers of the failure policy, " + wrong()
                            + " wrong so far); the threads then:\n" + threads(),
                    e);
        }
        return firstRightAt.get();
    }

    /** Every live thread's name, state and stack (at most 40 frames each). */
    private static String threads() {
        StringBuilder out = new StringBuilder();
        for (var entry : Thread.getAllStackTraces().entrySet()) {
            Thread t = entry.getKey();
            out.append('"')
                    .append(t.getName())
                    .append("\" ")
                    .append(t.getState())
                    .append('\n');
            StackTraceElement[] frames = entry.getValue();
            for (int i = 0; i < Math.min(40, frames.length); i++) {
                out.append("    at ").append(frames[i]).append('\n');
            }
        }
        return out.toString();
    }

    /** Answers of the failure policy so far. */
    public long failed() {
        return failed.get();
    }

    /** Answers neither right nor the failure policy's so far. */
    public long wrong() {
        return wrong.get();
    }

    /** Stops deciding, waiting (bounded) for the thread to end. */
    public void stop() throws InterruptedException {
        running = false;
        thread.join(Await.GENEROUS.toMillis());
    }
}
