package dev.sluice.bench.postgres;

import dev.sluice.bench.Outcomes;
import dev.sluice.bench.StoreKeyCursor;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.postgresql.Bucket4jPostgreSQL;
import java.time.Duration;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Threads;

/**
 * Bucket4j's PostgreSQL backend ({@code bucket4j_jdk17-postgresql}) as its documentation sets it up: a table
 * {@code (id bigint primary key, state bytea)}, a token bucket of the same limit as Sluice's, and
 * {@code tryConsumeAndReturnRemaining(1)} (remaining tokens and wait times, the like-for-like of a Sluice decision).
 * Both of its locking schemes: {@code SELECT ... FOR UPDATE} and {@code pg_advisory_xact_lock}, each a transaction of
 * several round trips. Same server, same pool settings, same keys as {@link SluicePostgresBench}.
 */
public class Bucket4jPostgresBench extends PostgresBench {

    static final String TABLE = "bucket4j_bench";

    /** Bucket4j's two PostgreSQL proxy managers. */
    public enum Locking {
        SELECT_FOR_UPDATE,
        ADVISORY_LOCK
    }

    @Param
    public Locking locking;

    @Param({"1", "100000"})
    public int keys;

    private BucketProxy[] buckets;

    public Bucket4jPostgresBench() {
        super("bucket4j");
    }

    @Override
    protected void prepare() {
        BenchDatabase.execute(
                pool,
                "CREATE TABLE IF NOT EXISTS " + TABLE + " (id bigint PRIMARY KEY, state bytea, expires_at bigint)");
        BenchDatabase.execute(pool, "TRUNCATE " + TABLE);
        BenchDatabase.execute(pool, "VACUUM ANALYZE " + TABLE);
        ProxyManager<Long> proxies = locking == Locking.SELECT_FOR_UPDATE
                ? Bucket4jPostgreSQL.selectForUpdateBasedBuilder(pool)
                        .table(TABLE)
                        .build()
                : Bucket4jPostgreSQL.advisoryLockBasedBuilder(pool).table(TABLE).build();
        Duration window = BenchDatabase.window(keys);
        BucketConfiguration config = BucketConfiguration.builder()
                .addLimit(l -> l.capacity(BenchDatabase.LIMIT).refillGreedy(BenchDatabase.LIMIT, window))
                .build();
        buckets = new BucketProxy[keys];
        for (int i = 0; i < keys; i++) {
            buckets[i] = proxies.builder().build((long) i, () -> config);
        }
        BenchDatabase.populate(keys, i -> buckets[i].tryConsume(1));
    }

    @Benchmark
    @Threads(1)
    public ConsumptionProbe probe1T(StoreKeyCursor cursor, Outcomes outcomes) {
        return probe(cursor, outcomes);
    }

    @Benchmark
    @Threads(BenchDatabase.CALLERS)
    public ConsumptionProbe probe64T(StoreKeyCursor cursor, Outcomes outcomes) {
        return probe(cursor, outcomes);
    }

    private ConsumptionProbe probe(StoreKeyCursor cursor, Outcomes outcomes) {
        ConsumptionProbe p = buckets[cursor.next()].tryConsumeAndReturnRemaining(1);
        outcomes.count(p.isConsumed());
        return p;
    }
}
