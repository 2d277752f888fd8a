package dev.sluice.bench.mongodb;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.bench.StoreKeyCursor;
import dev.sluice.mongodb.MongoStore;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.testkit.server.MongoServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * Decisions per second of a limiter on {@link MongoStore}: {@code tryAcquire} from 1 and from 64 concurrent callers,
 * on one hot key or spread over 100,000 keys, each decision one {@code findOneAndUpdate}. The server is the one of
 * {@link MongoServers#connectionString()}: mongo-java-server in this JVM (sharing its CPUs with the callers), or the
 * server named by {@code SLUICE_MONGODB_URL}.
 *
 * <p>The store runs as in production (the server's clock, the default fold every 32 requests) except for its
 * timeout (10 s) and failure policy ({@link FailurePolicy#THROW}): a call that fails must fail the run, not be counted
 * as a fast fail-open answer. Every key has its document before measuring, so the 100,000-key case measures a
 * populated collection. The limit (10<sup>9</sup> per second) admits every request: a rejection costs the same
 * round trip.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 4, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class MongoBench {

    static final int CALLERS = 64;

    @Param({"TOKEN_BUCKET", "SLIDING_WINDOW_COUNTER"})
    public Algorithm algorithm;

    @Param({"1", "100000"})
    public int keys;

    private MongoClient client;
    private MongoStore store;
    private RateLimiter limiter;
    private String[] names;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(MongoServers.connectionString()))
                .applyToConnectionPoolSettings(pool -> pool.maxSize(CALLERS + 8))
                .build());
        store = MongoStore.builder(client, "sluice_bench")
                .collection("bench_" + UUID.randomUUID())
                .timeout(Duration.ofSeconds(10))
                .failurePolicy(FailurePolicy.THROW)
                .build();
        limiter = RateLimiter.builder(algorithm)
                .limit(1_000_000_000, Duration.ofSeconds(1))
                .store(store)
                .build();
        names = new String[keys];
        for (int i = 0; i < keys; i++) {
            names[i] = "client:" + i;
        }
        populate();
    }

    /** One request on every key, from as many threads as the benchmark's callers. */
    private void populate() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(CALLERS, keys));
        try {
            AtomicInteger next = new AtomicInteger();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < Math.min(CALLERS, keys); t++) {
                done.add(pool.submit(() -> {
                    for (int i = next.getAndIncrement(); i < keys; i = next.getAndIncrement()) {
                        limiter.tryAcquire(names[i]);
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        long failures = ((SharedRateLimiter) limiter).storeFailures();
        client.getDatabase("sluice_bench").getCollection(store.collectionName()).drop();
        client.close();
        if (failures != 0) {
            throw new IllegalStateException(failures + " store failures: the results are not decisions");
        }
    }

    @Benchmark
    @Threads(1)
    public Decision tryAcquire1(StoreKeyCursor cursor) {
        return limiter.tryAcquire(names[cursor.next()]);
    }

    @Benchmark
    @Threads(CALLERS)
    public Decision tryAcquire64(StoreKeyCursor cursor) {
        return limiter.tryAcquire(names[cursor.next()]);
    }
}
