package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.TimeMeter;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Sluice's token bucket and Bucket4j's on one key, one thread, each reading the same time source, to separate
 * what the clock costs from what the limiter costs:
 * <ul>
 *   <li>{@code SYSTEM_UTC}: {@code Clock.systemUTC().instant()} in nanoseconds, Sluice's default;</li>
 *   <li>{@code MILLIS}: {@code System.currentTimeMillis()}, Bucket4j's default time meter;</li>
 *   <li>{@code CACHED}: {@code Clock.systemUTC()} read once per millisecond by a background thread into a volatile
 *       field, which the limiters read: a coarse clock a user could inject, costing one volatile read;</li>
 *   <li>{@code SYNTHETIC}: a counter that advances 20 ns per read, costing next to nothing; the limiter alone.</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
@Threads(1)
public class TimeSourceBench {

    /** How the limiters read the time. */
    public enum Source {
        SYSTEM_UTC, MILLIS, CACHED, SYNTHETIC
    }

    @Param
    public Source source;

    @Param
    public Load load;

    private static final String KEY = "client:0000000";
    private static final long SYNTHETIC_STEP = 20;

    private RateLimiter sluice;
    private Bucket bucket4j;
    private long syntheticNanos = Instant.parse("2026-01-01T12:00:00Z").getEpochSecond() * 1_000_000_000L;

    @Setup(Level.Trial)
    public void setUp() {
        sluice = RateLimiter.builder(Algorithm.TOKEN_BUCKET).limit(load.limit, load.window).clock(clock()).build();
        bucket4j = Bucket.builder()
                .addLimit(l -> l.capacity(load.limit).refillGreedy(load.limit, load.window))
                .withCustomTimePrecision(timeMeter())
                .build();
        if (load.drained() && !(sluice.tryAcquire(KEY, load.limit).allowed() && bucket4j.tryConsume(load.limit))) {
            throw new IllegalStateException("setup request denied");
        }
    }

    @Benchmark
    public Decision sluiceTryAcquire(Outcomes outcomes) {
        Decision d = sluice.tryAcquire(KEY);
        outcomes.count(d.allowed());
        return d;
    }

    @Benchmark
    public boolean bucket4jTryConsume(Outcomes outcomes) {
        return outcomes.count(bucket4j.tryConsume(1));
    }

    private long nextSynthetic() {
        syntheticNanos += SYNTHETIC_STEP;
        return syntheticNanos;
    }

    private Clock clock() {
        switch (source) {
            case SYSTEM_UTC:
                return Clock.systemUTC();
            case MILLIS:
                return new UtcClock() {
                    @Override
                    public Instant instant() {
                        return Instant.ofEpochMilli(System.currentTimeMillis());
                    }
                };
            case CACHED:
                return new UtcClock() {
                    @Override
                    public Instant instant() {
                        long n = CachedTime.nanos();
                        return Instant.ofEpochSecond(n / 1_000_000_000L, n % 1_000_000_000L);
                    }
                };
            default:
                return new UtcClock() {
                    @Override
                    public Instant instant() {
                        long n = nextSynthetic();
                        return Instant.ofEpochSecond(n / 1_000_000_000L, n % 1_000_000_000L);
                    }
                };
        }
    }

    private TimeMeter timeMeter() {
        switch (source) {
            case SYSTEM_UTC:
                Clock utc = Clock.systemUTC();
                return new TimeMeter() {
                    @Override
                    public long currentTimeNanos() {
                        Instant i = utc.instant();
                        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
                    }

                    @Override
                    public boolean isWallClockBased() {
                        return true;
                    }
                };
            case MILLIS:
                return TimeMeter.SYSTEM_MILLISECONDS;
            case CACHED:
                return new TimeMeter() {
                    @Override
                    public long currentTimeNanos() {
                        return CachedTime.nanos();
                    }

                    @Override
                    public boolean isWallClockBased() {
                        return true;
                    }
                };
            default:
                return new TimeMeter() {
                    @Override
                    public long currentTimeNanos() {
                        return nextSynthetic();
                    }

                    @Override
                    public boolean isWallClockBased() {
                        return false;
                    }
                };
        }
    }

    /** The UTC time in nanoseconds, refreshed every millisecond by a daemon thread started on first use. */
    private static final class CachedTime {
        private static volatile long nanos = read();

        static {
            Thread t = new Thread(() -> {
                while (true) {
                    LockSupport.parkNanos(1_000_000);
                    nanos = read();
                }
            }, "cached-clock");
            t.setDaemon(true);
            t.start();
        }

        private CachedTime() {
        }

        static long nanos() {
            return nanos;
        }

        private static long read() {
            Instant i = Clock.systemUTC().instant();
            return i.getEpochSecond() * 1_000_000_000L + i.getNano();
        }
    }

    /** A clock in UTC whose {@link #instant()} the subclass defines. */
    private abstract static class UtcClock extends Clock {
        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException("a benchmark clock stays in UTC");
        }
    }
}
