package dev.sluice.testkit;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Waiting, in a test, for something another thread or process does: a restarted server that accepts connections
 * again, a proxy's pump that has read a byte, a client that has found its server again. A test waits for the
 * condition, never for a fixed time, and the bound is generous (tens of seconds): it only ends a wait that would
 * otherwise never end, so a slow, loaded machine makes a test slower, not red.
 *
 * <p>Between two checks the waiting thread parks for a few milliseconds, leaving the CPU to the threads it waits for.
 */
public final class Await {

    /** The bound a test should use unless it has a reason not to: far beyond what a healthy run takes under load. */
    public static final Duration GENEROUS = Duration.ofSeconds(60);

    private static final long PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private Await() {}

    /**
     * Returns as soon as {@code condition} holds; throws an {@link AssertionError} naming {@code description} if it
     * still does not after {@code bound}. A condition that throws ends the wait with its exception.
     */
    public static void until(String description, Duration bound, BooleanSupplier condition) {
        Objects.requireNonNull(condition, "condition must not be null");
        long start = System.nanoTime();
        while (!condition.getAsBoolean()) {
            pauseOrFail(description, bound, start, null);
        }
    }

    /**
     * The result of the first call of {@code attempt} that does not throw a {@link RuntimeException} (a server that is
     * not reachable yet); throws an {@link AssertionError} naming {@code description}, caused by the last exception,
     * if every call throws until {@code bound} has passed.
     */
    public static <T> T succeeds(String description, Duration bound, Supplier<T> attempt) {
        Objects.requireNonNull(attempt, "attempt must not be null");
        long start = System.nanoTime();
        while (true) {
            try {
                return attempt.get();
            } catch (RuntimeException e) {
                pauseOrFail(description, bound, start, e);
            }
        }
    }

    private static void pauseOrFail(String description, Duration bound, long start, @Nullable RuntimeException last) {
        long waited = System.nanoTime() - start;
        if (waited >= bound.toNanos()) {
            throw new AssertionError(
                    "expected " + description + " within " + bound.toSeconds() + " s, still not after "
                            + TimeUnit.NANOSECONDS.toMillis(waited) + " ms"
                            + (last == null ? "" : "; last failure: " + last),
                    last);
        }
        LockSupport.parkNanos(PAUSE_NANOS);
        if (Thread.currentThread().isInterrupted()) {
            throw new AssertionError("interrupted while waiting for " + description, last);
        }
    }
}
