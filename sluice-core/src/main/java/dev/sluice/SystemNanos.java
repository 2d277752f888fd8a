package dev.sluice;

import java.time.Clock;
import java.time.Instant;

/**
 * The time of {@link Clock#systemUTC()}, the default clock, in nanoseconds since the epoch, read for each decision
 * through {@link System#nanoTime()} plus an offset to the wall clock that is measured again every second.
 *
 * <p>Why: {@code Clock.systemUTC().instant()} is a call into the VM ({@code VM.getNanoTimeAdjustment}) on top of the
 * operating system's clock, where {@code System.nanoTime()} is compiled by the JIT to the clock read itself; with the
 * default clock, reading the time is a large part of an in-memory decision. Both read the same hardware clock, at the
 * same nanosecond resolution.
 *
 * <p>What it gives up, bounded: between two measurements the time advances at the rate of the monotonic clock, so it
 * differs from the wall clock by what the two drift apart in one second (under NTP's slewing, at most 0.5 ms and in
 * practice microseconds), and a step of the wall clock (set by hand, or by NTP) is followed within a second. Each
 * measurement may move the time back by that drift, as the wall clock itself may move back; the algorithms handle a
 * clock that moves back.
 *
 * <p>Thread-safe with no lock: a thread that reads the offset while another measures it takes the old one or the new
 * one, both right to within the drift.
 */
final class SystemNanos {

    /** How often the offset to the wall clock is measured again. */
    static final long RESYNC_NANOS = 1_000_000_000L;

    /** The default clock's time. */
    static final SystemNanos SYSTEM = new SystemNanos(Clock.systemUTC(), System.nanoTime());

    private final Clock wall;

    /** Wall-clock nanoseconds since the epoch less the monotonic clock, as last measured. */
    private volatile long offset;

    /** The monotonic time at which to measure the offset again. */
    private volatile long nextSync;

    /**
     * @param wall      the wall clock (the system's, but for tests)
     * @param monotonic the monotonic clock's reading now
     */
    SystemNanos(Clock wall, long monotonic) {
        this.wall = wall;
        sync(monotonic);
    }

    /** The default clock's time now, in nanoseconds since the epoch. */
    static long now() {
        return SYSTEM.at(System.nanoTime());
    }

    /** The wall-clock time when the monotonic clock reads {@code monotonic}, in nanoseconds since the epoch. */
    long at(long monotonic) {
        if (monotonic - nextSync >= 0) {
            return sync(monotonic);
        }
        return monotonic + offset;
    }

    private long sync(long monotonic) {
        Instant i = wall.instant();
        long wallNanos = i.getEpochSecond() * 1_000_000_000L + i.getNano();
        offset = wallNanos - monotonic;
        nextSync = monotonic + RESYNC_NANOS;
        return wallNanos;
    }
}
