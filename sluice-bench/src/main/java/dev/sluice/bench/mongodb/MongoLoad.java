package dev.sluice.bench.mongodb;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.bench.postgres.BenchDatabase;
import dev.sluice.mongodb.MongoStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

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
        String url = args[0];
        String collection = args[1];
        int threads = Integer.parseInt(args[2]);
        int keys = Integer.parseInt(args[3]);
        int seconds = Integer.parseInt(args[4]);
        long server = Long.parseLong(args[5]);
        try (MongoClient client = MongoClients.create(url)) {
            client.getDatabase("sluice_bench").getCollection(collection).drop();
            MongoStore store = MongoStore.builder(client, "sluice_bench")
                    .collection(collection)
                    .failurePolicy(FailurePolicy.THROW)
                    .timeout(Duration.ofSeconds(5))
                    .build();
            RateLimiter limiter = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                    .limit(BenchDatabase.LIMIT, BenchDatabase.window(keys))
                    .store(store)
                    .build();
            String[] names = BenchDatabase.keys(keys);
            BenchDatabase.populate(keys, i -> limiter.tryAcquire(names[i]));

            AtomicBoolean measuring = new AtomicBoolean();
            AtomicBoolean running = new AtomicBoolean(true);
            LongAdder decisions = new LongAdder();
            List<Thread> callers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int first = t;
                Thread caller = new Thread(() -> {
                    int i = first % keys;
                    while (running.get()) {
                        if (!limiter.tryAcquire(names[i]).allowed()) {
                            throw new IllegalStateException("a decision was refused: the load must never be");
                        }
                        if (measuring.get()) {
                            decisions.increment();
                        }
                        i = i + 1 == keys ? 0 : i + 1;
                    }
                });
                caller.start();
                callers.add(caller);
            }
            Thread.sleep(3000); // warm-up
            long cpu0 = ticks(server);
            long t0 = System.nanoTime();
            measuring.set(true);
            Thread.sleep(seconds * 1000L);
            measuring.set(false);
            long t1 = System.nanoTime();
            long cpu1 = ticks(server);
            long n = decisions.sum();
            running.set(false);
            for (Thread c : callers) {
                c.join();
            }
            double perSecond = n / ((t1 - t0) / 1e9);
            double cpuMicros = (cpu1 - cpu0) * (1_000_000.0 / 100) / n; // USER_HZ = 100
            System.out.printf(
                    "collection=%s threads=%d keys=%d decisions/s=%.0f server-cpu-us/decision=%.1f%n",
                    collection, threads, keys, perSecond, cpuMicros);
        }
    }

    /** utime + stime of process {@code pid}, in clock ticks. */
    private static long ticks(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime (fields 14 and 15)
    }
}
