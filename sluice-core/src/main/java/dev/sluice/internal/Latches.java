package dev.sluice.internal;

import java.util.concurrent.CountDownLatch;

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
}
