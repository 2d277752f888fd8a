package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import io.github.bucket4j.Bucket;
import java.util.concurrent.TimeUnit;
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
 * Sluice's token bucket and Bucket4j's on one key, one thread, each reading the same {@link TimeSource}, to
 * separate what the clock costs from what the limiter costs.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
@Threads(1)
public class TimeSourceBench {

    /** SYNTHETIC (the limiter alone) is left out of the default run to keep it within 15 minutes; ask with -p. */
    @Param({"SYSTEM_UTC", "MILLIS", "CACHED"})
    public TimeSource source;

    @Param
    public Load load;

    private static final String KEY = "client:0000000";

    private RateLimiter sluice;
    private Bucket bucket4j;

    @Setup(Level.Trial)
    public void setUp() {
        sluice = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                .limit(load.limit, load.window)
                .clock(source.clock())
                .build();
        bucket4j = Bucket.builder()
                .addLimit(l -> l.capacity(load.limit).refillGreedy(load.limit, load.window))
                .withCustomTimePrecision(source.timeMeter())
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
}
