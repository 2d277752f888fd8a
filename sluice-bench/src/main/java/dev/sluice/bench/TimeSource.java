package dev.sluice.bench;

import io.github.bucket4j.TimeMeter;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.locks.LockSupport;

/**
 * Where a benchmarked limiter reads the time, as a {@link Clock} for Sluice and a {@link TimeMeter} for Bucket4j.
 * The synthetic source keeps a plain counter per clock: one thread only.
 */
public enum TimeSource {
    /** {@code Clock.systemUTC().instant()} in nanoseconds: Sluice's default. */
    SYSTEM_UTC,
    /** {@code System.currentTimeMillis()}: Bucket4j's default time meter. */
    MILLIS,
    /**
     * {@code Clock.systemUTC()} read once per millisecond by a daemon thread into a volatile field, which the
     * limiters read: a coarse clock a user could inject, costing one volatile read.
     */
    CACHED,
    /** A counter that advances 20 ns per read, costing next to nothing: the limiter alone. */
    SYNTHETIC;

    private static final long SYNTHETIC_START =
            Instant.parse("2026-01-01T12:00:00Z").getEpochSecond() * 1_000_000_000L;
    private static final long SYNTHETIC_STEP = 20;

    /** A clock reading this source. */
    public Clock clock() {
        switch (this) {
            case SYSTEM_UTC:
                return Clock.systemUTC();
            case MILLIS:
                return new NanosClock() {
                    @Override
                    long nanos() {
                        return System.currentTimeMillis() * 1_000_000L;
                    }
                };
            case CACHED:
                return new NanosClock() {
                    @Override
                    long nanos() {
                        return CachedTime.nanos();
                    }
                };
            default:
                return new NanosClock() {
                    private long n = SYNTHETIC_START;

                    @Override
                    long nanos() {
                        n += SYNTHETIC_STEP;
                        return n;
                    }
                };
        }
    }

    /** A Bucket4j time meter reading this source. */
    public TimeMeter timeMeter() {
        if (this == MILLIS) {
            return TimeMeter.SYSTEM_MILLISECONDS;
        }
        Clock clock = this == SYSTEM_UTC ? null : clock();
        boolean wallClock = this != SYNTHETIC;
        return new TimeMeter() {
            @Override
            public long currentTimeNanos() {
                if (clock == null) {
                    Instant i = Clock.systemUTC().instant();
                    return i.getEpochSecond() * 1_000_000_000L + i.getNano();
                }
                return ((NanosClock) clock).nanos();
            }

            @Override
            public boolean isWallClockBased() {
                return wallClock;
            }
        };
    }

    /** A UTC clock defined by its time in nanoseconds since the epoch. */
    private abstract static class NanosClock extends Clock {
        abstract long nanos();

        @Override
        public Instant instant() {
            long n = nanos();
            return Instant.ofEpochSecond(Math.floorDiv(n, 1_000_000_000L), Math.floorMod(n, 1_000_000_000L));
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException("a benchmark clock stays in UTC");
        }
    }

    /** The UTC time in nanoseconds, refreshed every millisecond by a daemon thread started on first use. */
    private static final class CachedTime {
        private static volatile long nanos = read();

        static {
            Thread t = new Thread(
                    () -> {
                        while (true) {
                            LockSupport.parkNanos(1_000_000);
                            nanos = read();
                        }
                    },
                    "cached-clock");
            t.setDaemon(true);
            t.start();
        }

        private CachedTime() {}

        static long nanos() {
            return nanos;
        }

        private static long read() {
            Instant i = Clock.systemUTC().instant();
            return i.getEpochSecond() * 1_000_000_000L + i.getNano();
        }
    }
}
