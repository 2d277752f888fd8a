package dev.sluice.bench.redis;

import io.lettuce.core.RedisClient;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * What every Redis benchmark of the set shares, so that they differ only in who decides: the JMH settings, the
 * {@code keys} parameter (one hot key or 100,000), the trial's {@link RedisTarget} and its keys, and one Lettuce
 * client for the trial, shut down after {@link #release()}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public abstract class RedisBench {

    @Param({"1", "100000"})
    public int keys;

    /** The trial's client, created before {@link #prepare}. */
    protected RedisClient client;

    @Setup(Level.Trial)
    public final void setUp(RedisTarget target) throws Exception {
        client = RedisClient.create(target.uri);
        prepare(target.keys(keys));
    }

    /** Builds what the benchmark calls on {@link #client}, for the trial's {@code names} ({@link #keys} of them). */
    protected abstract void prepare(String[] names) throws Exception;

    /** Closes what {@link #prepare} opened; the client is shut down next. */
    protected void release() {}

    @TearDown(Level.Trial)
    public final void tearDown() {
        release();
        client.shutdown();
    }
}
