package dev.sluice;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waiting, in a core test, for what another thread does: the condition is polled, never a fixed time slept, and the
 * bound is generous, so a loaded machine makes a test slower, not red. The same as the testkit's {@code Await.until},
 * which is out of reach here: sluice-testkit depends on sluice-core, so the core's tests cannot depend on it.
 */
public final class TestAwait {

    /** Far beyond what a healthy run takes under load. */
    public static final Duration GENEROUS = Duration.ofSeconds(60);

    private TestAwait() {}

    /** Returns once {@code condition} holds; throws an {@link AssertionError} naming {@code description} after 60 s. */
    public static void until(String description, BooleanSupplier condition) {
        long start = System.nanoTime();
        while (!condition.getAsBoolean()) {
            long waited = System.nanoTime() - start;
            if (waited >= GENEROUS.toNanos()) {
                throw new AssertionError("expected " + description + " within " + GENEROUS.toSeconds()
                        + " s, still not after " + TimeUnit.NANOSECONDS.toMillis(waited) + " ms");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }
}
