package dev.sluice.server.simulate;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** The simulation's clock: UTC, moved only by {@link #set}. Not thread-safe; a simulation runs on one thread. */
final class VirtualClock extends Clock {

    private Instant now;

    VirtualClock(Instant start) {
        this.now = start;
    }

    void set(Instant instant) {
        now = instant;
    }

    @Override
    public Instant instant() {
        return now;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("the simulation's clock is UTC only");
    }
}
