package dev.sluice.bench;

import dev.sluice.bench.state.Resilience4jState;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/** Resilience4j's {@code AtomicRateLimiter.acquirePermission()} with a zero timeout ({@link Resilience4jState}). */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public class Resilience4jBench {

    @Benchmark
    @Threads(1)
    public boolean acquirePermission1T(Resilience4jState state, KeyCursor cursor, Outcomes outcomes) {
        return outcomes.count(state.limiterAt(cursor.next()).acquirePermission());
    }

    @Benchmark
    @Threads(2)
    public boolean acquirePermission2T(Resilience4jState state, KeyCursor cursor, Outcomes outcomes) {
        return outcomes.count(state.limiterAt(cursor.next()).acquirePermission());
    }

    @Benchmark
    @Threads(4)
    public boolean acquirePermission4T(Resilience4jState state, KeyCursor cursor, Outcomes outcomes) {
        return outcomes.count(state.limiterAt(cursor.next()).acquirePermission());
    }
}
