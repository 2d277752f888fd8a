package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The price on this machine of the steps no in-process rate limiter avoids, to read the other results against:
 * reading the time (Sluice's default clock as a limiter reads it and as {@code Clock.systemUTC()} gives it, and the two clocks Bucket4j and Resilience4j/Guava read), one
 * uncontended {@code synchronized} block, one compare-and-set, and allocating one {@link Decision}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class Floor {

    private final Clock clock = Clock.systemUTC();
    private final LimiterConfig config =
            new LimiterConfig(Algorithm.TOKEN_BUCKET, 100, Duration.ofSeconds(1), Clock.systemUTC(), false, 1, false);
    private final Object monitor = new Object();
    private final AtomicLong atomic = new AtomicLong();
    private long counter;

    /** {@code Clock.systemUTC().instant()} in nanoseconds: what the default clock cost a decision before its fast path. */
    @Benchmark
    public long clockSystemUtcNanos() {
        Instant i = clock.instant();
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
    }

    /** The time a limiter with the default clock reads: {@code System.nanoTime()} plus an offset to the wall clock. */
    @Benchmark
    public long defaultClockNanos() {
        return config.clockNanos();
    }

    /** Bucket4j's default time meter. */
    @Benchmark
    public long currentTimeMillis() {
        return System.currentTimeMillis();
    }

    /** Resilience4j's and Guava's time source. */
    @Benchmark
    public long nanoTime() {
        return System.nanoTime();
    }

    @Benchmark
    public long synchronizedIncrement() {
        synchronized (monitor) {
            return ++counter;
        }
    }

    @Benchmark
    public long compareAndSet() {
        long v = atomic.get();
        atomic.compareAndSet(v, v + 1);
        return v;
    }

    @Benchmark
    public Decision newDecision() {
        return Decision.allowed(100, ++counter & 63, 5);
    }
}
