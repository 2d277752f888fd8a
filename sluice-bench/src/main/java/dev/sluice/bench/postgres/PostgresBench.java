package dev.sluice.bench.postgres;

import com.zaxxer.hikari.HikariDataSource;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What every PostgreSQL benchmark of the set shares, so that they differ only in who decides: the JMH settings and
 * one {@link BenchDatabase#pool} for the trial, closed after it.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public abstract class PostgresBench {

    /** The trial's pool, created before {@link #prepare}. */
    protected HikariDataSource pool;

    private final String poolName;

    /** A benchmark whose pool is named {@code poolName}. */
    protected PostgresBench(String poolName) {
        this.poolName = poolName;
    }

    @Setup(Level.Trial)
    public final void setUp() {
        pool = BenchDatabase.pool(poolName);
        prepare();
    }

    /** Builds what the benchmark calls on {@link #pool}. */
    protected abstract void prepare();

    @TearDown(Level.Trial)
    public final void tearDown() {
        pool.close();
    }
}
