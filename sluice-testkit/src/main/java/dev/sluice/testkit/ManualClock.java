package dev.sluice.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;

/** A {@link Clock} that moves only when a test moves it. Thread-safe. UTC. */
public final class ManualClock extends Clock {

    private volatile Instant now;

    /** A clock that reads {@code start} until moved. */
    public ManualClock(Instant start) {
        this.now = Objects.requireNonNull(start, "start must not be null");
    }

    /** Sets the time. */
    public void set(Instant instant) {
        now = Objects.requireNonNull(instant, "instant must not be null");
    }

    /** Moves the time by {@code d} (which may be negative, to test a clock stepped back). */
    public synchronized void advance(Duration d) {
        now = now.plus(d);
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
        throw new UnsupportedOperationException("a ManualClock is UTC only");
    }

    @Override
    public String toString() {
        return "ManualClock[" + now + "]";
    }
}
