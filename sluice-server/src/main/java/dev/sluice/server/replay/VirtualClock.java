package dev.sluice.server.replay;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that stands at whatever time it was {@link #set} to: the log's time, line by line. Not thread-safe. */
final class VirtualClock extends Clock {
    private long millis;
    private Instant instant = Instant.EPOCH;

    /** Moves the clock to {@code epochMillis}, forwards or back. */
    void set(long epochMillis) {
        if (epochMillis != millis) {
            millis = epochMillis;
            instant = Instant.ofEpochMilli(epochMillis);
        }
    }

    @Override
    public long millis() {
        return millis;
    }

    @Override
    public Instant instant() {
        return instant;
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
