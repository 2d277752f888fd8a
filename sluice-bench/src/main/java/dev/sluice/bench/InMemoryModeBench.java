package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.spi.RateLimitStore;
import java.time.Duration;
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
 * The request path of a mode that decides in memory and shares through a counter store (synchronized, leased):
 * {@code tryAcquire} of the three algorithms those modes offer, on one key or on 10,000, from one thread, with the
 * default clock and the {@link Load#ALLOWED} limit's rate (over {@code windowMillis}), beside the in-memory store. A subclass declares the {@code store}
 * parameter and builds the store it names; every key is requested once before the measurement. The JMH options
 * here hold for the subclasses.
 *
 * <p>Eight seconds of warm-up, not three: on two cores, with the mode's background thread (the leased round, the
 * synchronized flusher) and the compiler sharing them, both modes reach their steady speed on 10,000 keys only after
 * several seconds, where the in-memory path does sooner; with three, a run measures a path still being compiled.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 8, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public abstract class InMemoryModeBench {

    @Param({"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    public Algorithm algorithm;

    /** Read by {@link KeyCursor} too. */
    @Param({"1", "10000"})
    public int keys;

    /**
     * The limit's window in milliseconds: 100, {@link Load#ALLOWED}'s, by default; a longer one keeps its rate (the
     * limit grows with it), so that a round every 100 ms is a tenth of the window or less, as leased mode asks.
     */
    @Param({"100"})
    public int windowMillis;

    private RateLimitStore shared;
    private RateLimiter limiter;
    private String[] names;

    /** The store the {@code store} parameter names, built and running; null for the in-memory store. */
    protected abstract RateLimitStore sharedStore();

    @Setup(Level.Trial)
    public void setUp() {
        names = Keys.generate(keys);
        var builder = RateLimiter.builder(algorithm)
                .limit(
                        Load.ALLOWED.limit * windowMillis / Load.ALLOWED.window.toMillis(),
                        Duration.ofMillis(windowMillis));
        shared = sharedStore();
        if (shared != null) {
            builder.store(shared);
        }
        limiter = builder.build();
        for (String name : names) {
            if (!limiter.tryAcquire(name).allowed()) {
                throw new IllegalStateException("setup request denied for " + name);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        if (shared instanceof AutoCloseable c) {
            c.close();
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
