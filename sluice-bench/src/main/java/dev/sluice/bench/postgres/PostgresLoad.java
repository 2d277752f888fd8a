package dev.sluice.bench.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.bench.FixedLoad;
import dev.sluice.postgres.PostgresStore;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;

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
        FixedLoad.Args a = FixedLoad.Args.parse(args);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(a.url());
        config.setMaximumPoolSize(a.threads());
        config.setMinimumIdle(a.threads());
        try (HikariDataSource pool = new HikariDataSource(config)) {
            PostgresStore store = PostgresStore.builder(pool)
                    .table(a.name())
                    .failurePolicy(FailurePolicy.THROW)
                    .timeout(Duration.ofSeconds(5))
                    .build();
            BenchDatabase.execute(pool, "TRUNCATE " + a.name());
            RateLimiter limiter = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                    .limit(BenchDatabase.LIMIT, BenchDatabase.window(a.keys()))
                    .store(store)
                    .build();
            String[] names = BenchDatabase.keys(a.keys());
            BenchDatabase.populate(a.keys(), i -> limiter.tryAcquire(names[i]));
            long postmaster = postmaster(pool);

            FixedLoad.Result r = FixedLoad.run(limiter, names, a.threads(), a.seconds(), () -> cpuTicks(postmaster));
            System.out.printf(
                    "table=%s threads=%d keys=%d decisions/s=%.0f pg-cpu-us/decision=%.1f%n",
                    a.name(), a.threads(), a.keys(), r.perSecond(), r.serverCpuMicros());
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
    private static long cpuTicks(long postmaster) {
        long ticks = FixedLoad.ticks(postmaster);
        for (ProcessHandle child :
                ProcessHandle.of(postmaster).orElseThrow().children().toList()) {
            ticks += FixedLoad.ticks(child.pid());
        }
        return ticks;
    }
}
