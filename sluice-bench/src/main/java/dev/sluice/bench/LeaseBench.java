package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.lease.LeasedStore;
import dev.sluice.sync.InMemoryCounterStore;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The request path of leased mode against the in-memory store: {@code tryAcquire} of the three algorithms leased mode
 * offers, on one key or on 10,000, from one thread, with the default clock and the {@link Load#ALLOWED} limit. The
 * leased store runs as in production, with its background round every 100 ms, against an
 * {@link InMemoryCounterStore}: the measurement includes the claims made on requests (a new slice whenever one runs
 * out or the window turns, every 100 ms for this load) but no network.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public class LeaseBench {

    /** Where the limiter keeps its state. */
    public enum Store {
        IN_MEMORY,
        LEASED
    }

    @Param({"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    public Algorithm algorithm;

    @Param
    public Store store;

    /** Read by {@link KeyCursor} too. */
    @Param({"1", "10000"})
    public int keys;

    private LeasedStore leased;
    private RateLimiter limiter;
    private String[] names;

    @Setup(Level.Trial)
    public void setUp() {
        names = Keys.generate(keys);
        var builder = RateLimiter.builder(algorithm).limit(Load.ALLOWED.limit, Load.ALLOWED.window);
        if (store == Store.LEASED) {
            leased = LeasedStore.builder(InMemoryCounterStore.create()).build();
            builder.store(leased);
        }
        limiter = builder.build();
        for (String name : names) {
            if (!limiter.tryAcquire(name).allowed()) {
                throw new IllegalStateException("setup request denied for " + name);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (leased != null) {
            leased.close();
        }
    }

    @Benchmark
    @Threads(1)
    public Decision tryAcquire(KeyCursor cursor, Outcomes outcomes) {
        Decision d = limiter.tryAcquire(names[cursor.next()]);
        outcomes.count(d.allowed());
        return d;
    }
}
