package dev.sluice;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A UTC clock moved by hand, for the core's own tests in every package. Thread-safe. The testkit's ManualClock is out
 * of reach here: sluice-testkit depends on sluice-core, so the core's tests cannot depend on it.
 */
public final class TestClock extends Clock {

    /** 2026-01-01T12:00:00Z, minute-aligned. */
    public static final Instant NOON = Instant.parse("2026-01-01T12:00:00Z");

    private volatile Instant now;

    public TestClock() {
        this(NOON);
    }

    public TestClock(Instant start) {
        this.now = start;
    }

    /** A clock at {@code start}, an ISO-8601 instant such as {@code 2026-01-01T12:00:00Z}. */
    public TestClock(String start) {
        this(Instant.parse(start));
    }

    public void set(Instant instant) {
        now = instant;
    }

    /** Sets the time to {@code hh:mm:ss[.fraction]} on the day of {@link #NOON}. */
    public void at(String time) {
        now = Instant.parse("2026-01-01T" + time + "Z");
    }

    public synchronized void advance(Duration d) {
        now = now.plus(d);
    }

    public void advanceNanos(long nanos) {
        advance(Duration.ofNanos(nanos));
    }

    /** Nanoseconds since the epoch. */
    public long nanos() {
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
        throw new UnsupportedOperationException("UTC only");
    }
}
