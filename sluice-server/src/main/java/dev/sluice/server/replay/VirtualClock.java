package dev.sluice.server.replay;

import dev.sluice.EpochNanosClock;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock that stands at whatever time it was {@link #set} to: the log's time, line by line. A limiter reads it as a
 * count ({@link EpochNanosClock}), so moving it makes no object. Not thread-safe.
 */
final class VirtualClock extends Clock implements EpochNanosClock {
    private long millis;

    /** Moves the clock to {@code epochMillis}, forwards or back. */
    void set(long epochMillis) {
        millis = epochMillis;
    }

    @Override
    public long millis() {
        return millis;
    }

    @Override
    public long epochNanos() {
        return millis * 1_000_000L;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis);
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("a replay's clock is UTC");
    }
}
