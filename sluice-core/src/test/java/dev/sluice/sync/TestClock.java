package dev.sluice.sync;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock moved by hand. Thread-safe. UTC. */
final class TestClock extends Clock {

    private volatile Instant now;

    TestClock(Instant start) {
        this.now = start;
    }

    TestClock(String start) {
        this(Instant.parse(start));
    }

    void set(Instant instant) {
        now = instant;
    }

    /** Sets the time to {@code hh:mm:ss[.fff]} on 2026-01-01. */
    void at(String time) {
        now = Instant.parse("2026-01-01T" + time + "Z");
    }

    synchronized void advance(Duration d) {
        now = now.plus(d);
    }

    long nanos() {
        Instant i = now;
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
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
        throw new UnsupportedOperationException();
    }
}
