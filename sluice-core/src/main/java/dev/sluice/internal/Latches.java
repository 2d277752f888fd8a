package dev.sluice.internal;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Waiting on a latch that a call under way will open, bounded by that call's timeout. */
public final class Latches {

    private Latches() {}

    /**
     * Waits until {@code latch} opens. An interrupt does not end the wait (the caller needs what the latch guards), but
     * is kept for the caller.
     */
    public static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Waits until {@code latch} opens or {@code deadlineNanos} ({@link System#nanoTime()}) passes, whichever comes
     * first: whether it opened. An interrupt ends the wait (false), and is kept for the caller.
     */
    public static boolean awaitUntil(CountDownLatch latch, long deadlineNanos) {
        try {
            return latch.await(deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
