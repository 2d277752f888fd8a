package dev.sluice.bench;

import dev.sluice.Decision;
import java.time.Clock;
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
 * reading the time (Sluice's default clock, and the two clocks Bucket4j and Resilience4j/Guava read), one
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
    private final Object monitor = new Object();
    private final AtomicLong atomic = new AtomicLong();
    private long counter;

    /** What {@code LimiterConfig.clockNanos()} does with the default clock. */
    @Benchmark
    public long clockSystemUtcNanos() {
        Instant i = clock.instant();
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
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
