package dev.sluice.bench.postgres;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.bench.Outcomes;
import dev.sluice.bench.StoreKeyCursor;
import dev.sluice.postgres.PostgresStore;
import java.time.Duration;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Threads;

/**
 * Sluice's {@link PostgresStore} as shipped (the store's clock, asynchronous commit), one call per decision, for
 * every algorithm, on one hot key or 100,000 keys, from 1 or 64 callers, each with its own pooled connection. Every
 * key's row exists before measuring. A store failure throws ({@link FailurePolicy#THROW}), so a failing store can
 * never pass for a fast one.
 */
public class SluicePostgresBench extends PostgresBench {

    static final String TABLE = "sluice_bench";

    @Param
    public Algorithm algorithm;

    @Param({"1", "100000"})
    public int keys;

    private RateLimiter limiter;
    private String[] names;

    public SluicePostgresBench() {
        super("sluice");
    }

    @Override
    protected void prepare() {
        PostgresStore store = PostgresStore.builder(pool)
                .table(TABLE)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Duration.ofSeconds(5))
                .build();
        BenchDatabase.execute(pool, "TRUNCATE " + TABLE);
        BenchDatabase.execute(pool, "VACUUM ANALYZE " + TABLE);
        limiter = RateLimiter.builder(algorithm)
                .limit(BenchDatabase.LIMIT, BenchDatabase.window(keys))
                .store(store)
                .build();
        names = BenchDatabase.keys(keys);
        BenchDatabase.populate(keys, i -> limiter.tryAcquire(names[i]));
    }

    @Benchmark
    @Threads(1)
    public Decision tryAcquire1T(StoreKeyCursor cursor, Outcomes outcomes) {
        return decide(cursor, outcomes);
    }

    @Benchmark
    @Threads(BenchDatabase.CALLERS)
    public Decision tryAcquire64T(StoreKeyCursor cursor, Outcomes outcomes) {
        return decide(cursor, outcomes);
    }

    private Decision decide(StoreKeyCursor cursor, Outcomes outcomes) {
        Decision d = limiter.tryAcquire(names[cursor.next()]);
        outcomes.count(d.allowed());
        return d;
    }
}
