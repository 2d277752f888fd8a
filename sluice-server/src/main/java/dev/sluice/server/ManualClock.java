package dev.sluice.server;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.jspecify.annotations.Nullable;

/**
 * A clock for tests of the service: it stands still until {@code POST /clock} moves it, so that a request log can be
 * sent to a real service and decided at its own times, as {@code replay} decides it. On only when the JVM is started
 * with {@code -D}{@value #PROPERTY}{@code =true}, and then {@code POST /clock} also needs the admin token; never for
 * production, where time must be the wall clock. Starts at the epoch.
 */
final class ManualClock extends Clock {
    /** The system property that turns it on. */
    static final String PROPERTY = "sluice.server.manualClock";

    private volatile long millis;

    /** A manual clock if {@value #PROPERTY} is {@code true}; else null (the service runs on the wall clock). */
    static @Nullable ManualClock fromSystemProperty() {
        return Boolean.getBoolean(PROPERTY) ? new ManualClock() : null;
    }

    /** Moves the clock to {@code epochMillis}. */
    void set(long epochMillis) {
        this.millis = epochMillis;
    }

    @Override
    public long millis() {
        return millis;
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
        throw new UnsupportedOperationException("the manual clock is UTC");
    }
}
