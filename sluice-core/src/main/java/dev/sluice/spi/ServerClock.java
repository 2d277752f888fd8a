package dev.sluice.spi;

/**
 * What this process knows of a store server's clock: a lower bound of the offset between the server's epoch time and
 * this process's {@link System#nanoTime()}, learned from the server's answers. With it a store sends a request's
 * deadline by the server's clock, so that the server can refuse a request that reaches it late (a stalled server, a
 * paused client, a frozen network) rather than apply it after its caller has been answered by the failure policy.
 * Thread-safe.
 *
 * <p>An answer that carries the time the server read while running it was read no later than the moment the answer
 * arrived here, so {@code serverTime - arrival} is a lower bound of the offset. The clock keeps the highest such bound,
 * lowered by {@value #DRIFT_PER_SECOND} ns per second since it was last raised, for the drift between the two clocks.
 * A deadline sent as {@link #serverTime serverTime(deadline)} is thus never later, by the server's clock, than the true
 * deadline: a request is never applied past it, and may be refused up to one round trip before it.
 */
public final class ServerClock {

    /** How much the bound is lowered per second, in nanoseconds: 100 µs, ten times the drift NTP allows. */
    public static final long DRIFT_PER_SECOND = 100_000;

    private boolean known; // guarded by this
    private long offsetNanos; // guarded by this: a lower bound of the server's epoch nanoseconds - nanoTime
    private long offsetAt; // guarded by this: the nanoTime offsetNanos was last raised or lowered at

    /** A clock that knows nothing yet of the server's. */
    public ServerClock() {}

    /** Whether an answer has been learned from: until then {@link #serverTime} is meaningless. */
    public synchronized boolean known() {
        return known;
    }

    /**
     * Learns from an answer that carried {@code serverEpochNanos}, read by the server while it ran the call, and
     * arrived at {@code arrivedNanoTime} ({@link System#nanoTime()}).
     */
    public synchronized void learn(long serverEpochNanos, long arrivedNanoTime) {
        long sample = serverEpochNanos - arrivedNanoTime;
        if (!known) {
            offsetNanos = sample;
        } else {
            long drift = Math.max(0, arrivedNanoTime - offsetAt) / (1_000_000_000L / DRIFT_PER_SECOND);
            offsetNanos = Math.max(sample, offsetNanos - drift);
        }
        offsetAt = arrivedNanoTime;
        known = true;
    }

    /**
     * The server's epoch time, in nanoseconds, no later than the instant {@code nanoTime} (a {@link System#nanoTime()}
     * value) by the server's clock.
     */
    public synchronized long serverTime(long nanoTime) {
        return nanoTime + offsetNanos;
    }

    @Override
    public synchronized String toString() {
        return known ? "ServerClock[offset " + offsetNanos + " ns]" : "ServerClock[unknown]";
    }
}
