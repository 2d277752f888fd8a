package dev.sluice.bench.postgres;

import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.bench.Outcomes;
import dev.sluice.postgres.PostgresStore;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.postgresql.Bucket4jPostgreSQL;
import java.time.Duration;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Threads;

/**
 * A flood on one key that is out of permits (1,000 per hour, drained before measuring), 64 callers: nearly every
 * decision is a rejection. Sluice answers a rejection that writes nothing from an unlocked read; Bucket4j's
 * PostgreSQL backends lock the row (or an advisory lock) for every request.
 */
public class DeniedHotKeyBench extends PostgresBench {

    private static final long LIMIT = 1_000;
    private static final Duration WINDOW = Duration.ofHours(1);

    /** Who decides. */
    public enum Limiter {
        SLUICE,
        BUCKET4J_SELECT_FOR_UPDATE,
        BUCKET4J_ADVISORY_LOCK
    }

    @Param
    public Limiter limiter;

    private RateLimiter sluice;
    private BucketProxy bucket;

    public DeniedHotKeyBench() {
        super("denied");
    }

    @Override
    protected void prepare() {
        if (limiter == Limiter.SLUICE) {
            PostgresStore store = PostgresStore.builder(pool)
                    .table(SluicePostgresBench.TABLE)
                    .failurePolicy(FailurePolicy.THROW)
                    .timeout(Duration.ofSeconds(5))
                    .build();
            BenchDatabase.execute(pool, "TRUNCATE " + SluicePostgresBench.TABLE);
            sluice = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                    .limit(LIMIT, WINDOW)
                    .store(store)
                    .build();
            if (!sluice.tryAcquire("hot", LIMIT).allowed()) {
                throw new IllegalStateException("could not drain the key");
            }
        } else {
            BenchDatabase.execute(
                    pool,
                    "CREATE TABLE IF NOT EXISTS " + Bucket4jPostgresBench.TABLE
                            + " (id bigint PRIMARY KEY, state bytea, expires_at bigint)");
            BenchDatabase.execute(pool, "TRUNCATE " + Bucket4jPostgresBench.TABLE);
            BucketConfiguration config = BucketConfiguration.builder()
                    .addLimit(l -> l.capacity(LIMIT).refillGreedy(LIMIT, WINDOW))
                    .build();
            bucket = (limiter == Limiter.BUCKET4J_SELECT_FOR_UPDATE
                            ? Bucket4jPostgreSQL.selectForUpdateBasedBuilder(pool)
                                    .table(Bucket4jPostgresBench.TABLE)
                                    .build()
                            : Bucket4jPostgreSQL.advisoryLockBasedBuilder(pool)
                                    .table(Bucket4jPostgresBench.TABLE)
                                    .build())
                    .builder()
                    .build(0L, () -> config);
            if (!bucket.tryConsume(LIMIT)) {
                throw new IllegalStateException("could not drain the bucket");
            }
        }
    }

    @Benchmark
    @Threads(BenchDatabase.CALLERS)
    public boolean decide64T(Outcomes outcomes) {
        boolean allowed = limiter == Limiter.SLUICE
                ? sluice.tryAcquire("hot").allowed()
                : bucket.tryConsumeAndReturnRemaining(1).isConsumed();
        return outcomes.count(allowed);
    }
}
