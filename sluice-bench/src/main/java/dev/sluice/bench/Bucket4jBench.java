package dev.sluice.bench;

import dev.sluice.bench.state.Bucket4jState;
import io.github.bucket4j.ConsumptionProbe;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Bucket4j's local lock-free bucket ({@link Bucket4jState}). {@code tryConsume} answers a bare boolean;
 * {@code tryConsumeAndReturnRemaining} answers a {@link ConsumptionProbe} (remaining tokens, time to refill,
 * time to reset), the like-for-like of a Sluice {@link dev.sluice.Decision}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public class Bucket4jBench {

    @Benchmark
    @Threads(1)
    public boolean tryConsume1T(Bucket4jState state, KeyCursor cursor, Outcomes outcomes) {
        return outcomes.count(state.limiterAt(cursor.next()).tryConsume(1));
    }

    @Benchmark
    @Threads(2)
    public boolean tryConsume2T(Bucket4jState state, KeyCursor cursor, Outcomes outcomes) {
        return outcomes.count(state.limiterAt(cursor.next()).tryConsume(1));
    }

    @Benchmark
    @Threads(4)
    public boolean tryConsume4T(Bucket4jState state, KeyCursor cursor, Outcomes outcomes) {
        return outcomes.count(state.limiterAt(cursor.next()).tryConsume(1));
    }

    @Benchmark
    @Threads(1)
    public ConsumptionProbe probe1T(Bucket4jState state, KeyCursor cursor, Outcomes outcomes) {
        return probe(state, cursor, outcomes);
    }

    @Benchmark
    @Threads(2)
    public ConsumptionProbe probe2T(Bucket4jState state, KeyCursor cursor, Outcomes outcomes) {
        return probe(state, cursor, outcomes);
    }

    @Benchmark
    @Threads(4)
    public ConsumptionProbe probe4T(Bucket4jState state, KeyCursor cursor, Outcomes outcomes) {
        return probe(state, cursor, outcomes);
    }

    private static ConsumptionProbe probe(Bucket4jState state, KeyCursor cursor, Outcomes outcomes) {
        ConsumptionProbe p = state.limiterAt(cursor.next()).tryConsumeAndReturnRemaining(1);
        outcomes.count(p.isConsumed());
        return p;
    }
}
