package dev.sluice.bench.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.bench.Outcomes;
import dev.sluice.postgres.PostgresStore;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.postgresql.Bucket4jPostgreSQL;
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
 * A flood on one key that is out of permits (1,000 per hour, drained before measuring), 64 callers: nearly every
 * decision is a rejection. Sluice answers a rejection that writes nothing from an unlocked read; Bucket4j's
 * PostgreSQL backends lock the row (or an advisory lock) for every request.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class DeniedHotKeyBench {

    private static final long LIMIT = 1_000;
    private static final Duration WINDOW = Duration.ofHours(1);

    /** Who decides. */
    public enum Limiter { SLUICE, BUCKET4J_SELECT_FOR_UPDATE, BUCKET4J_ADVISORY_LOCK }

    @Param
    public Limiter limiter;

    private HikariDataSource pool;
    private RateLimiter sluice;
    private BucketProxy bucket;

    @Setup(Level.Trial)
    public void setUp() {
        pool = BenchDatabase.pool("denied");
        if (limiter == Limiter.SLUICE) {
            PostgresStore store = PostgresStore.builder(pool).table(SluicePostgresBench.TABLE)
                    .failurePolicy(FailurePolicy.THROW).timeout(Duration.ofSeconds(5)).build();
            BenchDatabase.execute(pool, "TRUNCATE " + SluicePostgresBench.TABLE);
            sluice = RateLimiter.builder(Algorithm.TOKEN_BUCKET).limit(LIMIT, WINDOW).store(store).build();
            if (!sluice.tryAcquire("hot", LIMIT).allowed()) {
                throw new IllegalStateException("could not drain the key");
            }
        } else {
            BenchDatabase.execute(pool, "CREATE TABLE IF NOT EXISTS " + Bucket4jPostgresBench.TABLE
                    + " (id bigint PRIMARY KEY, state bytea, expires_at bigint)");
            BenchDatabase.execute(pool, "TRUNCATE " + Bucket4jPostgresBench.TABLE);
            BucketConfiguration config = BucketConfiguration.builder()
                    .addLimit(l -> l.capacity(LIMIT).refillGreedy(LIMIT, WINDOW)).build();
            bucket = (limiter == Limiter.BUCKET4J_SELECT_FOR_UPDATE
                    ? Bucket4jPostgreSQL.selectForUpdateBasedBuilder(pool).table(Bucket4jPostgresBench.TABLE).build()
                    : Bucket4jPostgreSQL.advisoryLockBasedBuilder(pool).table(Bucket4jPostgresBench.TABLE).build())
                    .builder().build(0L, () -> config);
            if (!bucket.tryConsume(LIMIT)) {
                throw new IllegalStateException("could not drain the bucket");
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
    }

    @Benchmark
    @Threads(BenchDatabase.CALLERS)
    public boolean decide64T(Outcomes outcomes) {
        boolean allowed = limiter == Limiter.SLUICE ? sluice.tryAcquire("hot").allowed()
                : bucket.tryConsumeAndReturnRemaining(1).isConsumed();
        return outcomes.count(allowed);
    }
}
