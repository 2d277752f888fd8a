package dev.sluice;

/**
 * Permits taken now that may be given back later: reserve, do the work, {@link #cancel()} if the work turns
 * out not to count (for instance a login attempt that succeeded, when only failures are limited).
 *
 * <p>Thread-safe. {@link #cancel()} returns the permits to the bucket, sub-window or log entry they were taken
 * from, at most once, and never lets the key exceed its limit.
 */
public interface Reservation {

    /** The decision taken when the reservation was made. */
    Decision decision();

    /**
     * Gives the reserved permits back.
     *
     * @return {@code true} the first time permits are actually returned; {@code false} on later calls, for a
     *         rejected reservation, and when the window, sub-window or log entry they came from is gone
     *         (or, for the buckets, the bucket has refilled to full since)
     */
    boolean cancel();
}
