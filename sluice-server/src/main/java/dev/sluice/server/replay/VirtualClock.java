package dev.sluice.server.replay;

import dev.sluice.EpochNanosClock;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock in UTC that stands at whatever time it was last set to: a log's time, line by line, for {@code replay};
 * a simulation's time, step by step, for {@code simulate}. A limiter reads it as a count ({@link EpochNanosClock}),
 * so moving it makes no object. Not thread-safe: one thread moves it and reads it.
 */
public final class VirtualClock extends Clock implements EpochNanosClock {
    private long nanos;

    /** A clock at the epoch. */
    public VirtualClock() {}

    /** A clock at {@code epochNanos}. */
    public VirtualClock(long epochNanos) {
        this.nanos = epochNanos;
    }

    /** Moves the clock to {@code epochMillis}, forwards or back. */
    public void set(long epochMillis) {
        nanos = epochMillis * 1_000_000L;
    }

    /** Moves the clock to {@code epochNanos}, forwards or back. */
    public void setNanos(long epochNanos) {
        nanos = epochNanos;
    }

    @Override
    public long millis() {
        return Math.floorDiv(nanos, 1_000_000L);
    }

    @Override
    public long epochNanos() {
        return nanos;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochSecond(Math.floorDiv(nanos, 1_000_000_000L), Math.floorMod(nanos, 1_000_000_000L));
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("a virtual clock is UTC");
    }
}
