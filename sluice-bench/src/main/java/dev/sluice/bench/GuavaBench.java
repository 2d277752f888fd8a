package dev.sluice.bench;

import dev.sluice.bench.state.GuavaState;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/** Guava's {@code RateLimiter.tryAcquire()}, which never waits ({@link GuavaState}). */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public class GuavaBench {

    @Benchmark
    @Threads(1)
    public boolean tryAcquire1T(GuavaState state, KeyCursor cursor, Outcomes outcomes) {
        return outcomes.count(state.limiterAt(cursor.next()).tryAcquire());
    }

    @Benchmark
    @Threads(2)
    public boolean tryAcquire2T(GuavaState state, KeyCursor cursor, Outcomes outcomes) {
        return outcomes.count(state.limiterAt(cursor.next()).tryAcquire());
    }

    @Benchmark
    @Threads(4)
    public boolean tryAcquire4T(GuavaState state, KeyCursor cursor, Outcomes outcomes) {
        return outcomes.count(state.limiterAt(cursor.next()).tryAcquire());
    }
}
