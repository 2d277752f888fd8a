package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
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
 * Sluice's {@link RateLimiter#tryAcquire(String)} on the in-memory store with the default clock
 * ({@link java.time.Clock#systemUTC()}), for every algorithm, on one key or on a million keys, from one, two or
 * four threads sharing the limiter. Every key is created (and, under {@link Load#DENIED}, drained) before measuring, so the
 * measurement is the steady state of a populated store, eviction included.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public class SluiceBench {

    @Param
    public Algorithm algorithm;

    @Param({"1", "1000000"})
    public int keys;

    @Param
    public Load load;

    private RateLimiter limiter;
    private String[] names;

    @Setup(Level.Trial)
    public void setUp() {
        names = Keys.generate(keys);
        limiter = RateLimiter.builder(algorithm).limit(load.limit, load.window).build();
        long cost = load.drained() ? load.limit : 1;
        for (String name : names) {
            if (!limiter.tryAcquire(name, cost).allowed()) {
                throw new IllegalStateException("setup request denied for " + name);
            }
        }
    }

    @Benchmark
    @Threads(1)
    public Decision tryAcquire1T(KeyCursor cursor, Outcomes outcomes) {
        return decide(cursor, outcomes);
    }

    @Benchmark
    @Threads(2)
    public Decision tryAcquire2T(KeyCursor cursor, Outcomes outcomes) {
        return decide(cursor, outcomes);
    }

    @Benchmark
    @Threads(4)
    public Decision tryAcquire4T(KeyCursor cursor, Outcomes outcomes) {
        return decide(cursor, outcomes);
    }

    private Decision decide(KeyCursor cursor, Outcomes outcomes) {
        Decision d = limiter.tryAcquire(names[cursor.next()]);
        outcomes.count(d.allowed());
        return d;
    }
}
