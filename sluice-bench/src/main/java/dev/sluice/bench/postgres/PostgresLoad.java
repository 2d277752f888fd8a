package dev.sluice.bench.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.postgres.PostgresStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * A fixed-duration load on {@link PostgresStore}: {@code threads} callers, each with a pooled connection, deciding
 * {@code TOKEN_BUCKET} admissions on one key or on many, for {@code seconds} after a warm-up. Prints the decisions per
 * second and the CPU the PostgreSQL server's processes spent per decision (from {@code /proc}: the server must run on
 * this machine), for comparing two builds side by side.
 *
 * <p>Arguments: JDBC URL, table, threads, keys, seconds. Output: one line {@code threads=.. keys=.. decisions/s=..
 * pg-cpu-us/decision=..}.
 */
public final class PostgresLoad {

    private PostgresLoad() {}

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String table = args[1];
        int threads = Integer.parseInt(args[2]);
        int keys = Integer.parseInt(args[3]);
        int seconds = Integer.parseInt(args[4]);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(threads);
        config.setMinimumIdle(threads);
        try (HikariDataSource pool = new HikariDataSource(config)) {
            PostgresStore store = PostgresStore.builder(pool)
                    .table(table)
                    .failurePolicy(FailurePolicy.THROW)
                    .timeout(Duration.ofSeconds(5))
                    .build();
            BenchDatabase.execute(pool, "TRUNCATE " + table);
            RateLimiter limiter = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                    .limit(BenchDatabase.LIMIT, BenchDatabase.window(keys))
                    .store(store)
                    .build();
            String[] names = BenchDatabase.keys(keys);
            BenchDatabase.populate(keys, i -> limiter.tryAcquire(names[i]));
            long postmaster = postmaster(pool);

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
            long cpu0 = cpuTicks(postmaster);
            long t0 = System.nanoTime();
            measuring.set(true);
            Thread.sleep(seconds * 1000L);
            measuring.set(false);
            long t1 = System.nanoTime();
            long cpu1 = cpuTicks(postmaster);
            long n = decisions.sum();
            running.set(false);
            for (Thread c : callers) {
                c.join();
            }
            double perSecond = n / ((t1 - t0) / 1e9);
            double cpuMicros = (cpu1 - cpu0) * (1_000_000.0 / 100) / n; // USER_HZ = 100
            System.out.printf(
                    "table=%s threads=%d keys=%d decisions/s=%.0f pg-cpu-us/decision=%.1f%n",
                    table, threads, keys, perSecond, cpuMicros);
        }
    }

    private static long postmaster(javax.sql.DataSource pool) throws Exception {
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            long backend = rs.getLong(1);
            return ProcessHandle.of(backend)
                    .flatMap(ProcessHandle::parent)
                    .orElseThrow()
                    .pid();
        }
    }

    /** utime + stime of the postmaster and its children (the server processes), in clock ticks. */
    private static long cpuTicks(long postmaster) throws IOException {
        long ticks = ticks(postmaster);
        for (ProcessHandle child :
                ProcessHandle.of(postmaster).orElseThrow().children().toList()) {
            ticks += ticks(child.pid());
        }
        return ticks;
    }

    private static long ticks(long pid) throws IOException {
        String stat;
        try {
            stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        } catch (IOException e) {
            return 0; // exited
        }
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime (fields 14 and 15)
    }
}
