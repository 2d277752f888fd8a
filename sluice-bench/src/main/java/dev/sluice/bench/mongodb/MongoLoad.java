package dev.sluice.bench.mongodb;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.bench.FixedLoad;
import dev.sluice.bench.postgres.BenchDatabase;
import dev.sluice.mongodb.MongoStore;
import java.time.Duration;

/**
 * A fixed-duration load on {@link MongoStore}: {@code threads} callers deciding {@code TOKEN_BUCKET} admissions on one
 * key or on many, for {@code seconds} after a warm-up, as {@link dev.sluice.bench.postgres.PostgresLoad} does on
 * PostgreSQL. Prints the decisions per second and the CPU the server's process spent per decision (from
 * {@code /proc}: the server must run on this machine), for comparing two builds side by side.
 *
 * <p>Arguments: connection string, collection, threads, keys, seconds, the server's process id. Output: one line
 * {@code collection=.. threads=.. keys=.. decisions/s=.. server-cpu-us/decision=..}.
 */
public final class MongoLoad {

    private MongoLoad() {}

    public static void main(String[] args) throws Exception {
        FixedLoad.Args a = FixedLoad.Args.parse(args);
        try (MongoClient client = MongoClients.create(a.url())) {
            client.getDatabase("sluice_bench").getCollection(a.name()).drop();
            MongoStore store = MongoStore.builder(client, "sluice_bench")
                    .collection(a.name())
                    .failurePolicy(FailurePolicy.THROW)
                    .timeout(Duration.ofSeconds(5))
                    .build();
            RateLimiter limiter = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                    .limit(BenchDatabase.LIMIT, BenchDatabase.window(a.keys()))
                    .store(store)
                    .build();
            String[] names = BenchDatabase.keys(a.keys());
            BenchDatabase.populate(a.keys(), i -> limiter.tryAcquire(names[i]));

            FixedLoad.Result r =
                    FixedLoad.run(limiter, names, a.threads(), a.seconds(), () -> FixedLoad.ticks(a.server()));
            System.out.printf(
                    "collection=%s threads=%d keys=%d decisions/s=%.0f server-cpu-us/decision=%.1f%n",
                    a.name(), a.threads(), a.keys(), r.perSecond(), r.serverCpuMicros());
        }
    }
}
