package dev.sluice.bench.redis;

import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.bench.FixedLoad;
import dev.sluice.redis.RedisStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;

/**
 * A fixed-duration load on {@link RedisStore} in exact mode, as {@link dev.sluice.bench.postgres.PostgresLoad} does on
 * PostgreSQL: {@code threads} callers deciding {@code SLIDING_TAIL} requests for {@code seconds} after a warm-up.
 * One key is the service's hot key ({@code sluice-server/load/run.sh}: one client at 50 a second, so nearly every
 * decision is a refusal); more keys are admissions under a limit the load never reaches. Prints the decisions per
 * second and, over exactly the measured span, the CPU the redis-server process spent per decision (from
 * {@code /proc}: it must run on this machine), the {@code EVALSHA} calls per decision and their time per decision
 * ({@code INFO commandstats}), for comparing two builds side by side ({@code compare-load.sh redis}).
 *
 * <p>Arguments: {@code redis://host:port}, key prefix, threads, keys, seconds, the server's process id. Output: one
 * line {@code prefix=.. threads=.. keys=.. decisions/s=.. server-cpu-us/decision=.. evalsha/decision=..
 * evalsha-us/decision=..}.
 */
public final class RedisLoad {

    private RedisLoad() {}

    public static void main(String[] args) throws Exception {
        FixedLoad.Args a = FixedLoad.Args.parse(args);
        RedisClient client = RedisClient.create(a.url());
        try (StatefulRedisConnection<String, String> stats = client.connect()) {
            RedisStore store = RedisStore.builder(client)
                    .namespace(a.name())
                    .failurePolicy(FailurePolicy.THROW)
                    .timeout(Duration.ofSeconds(5))
                    .build();
            boolean hot = a.keys() == 1;
            RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
                    .limit(hot ? 50 : RedisTarget.LIMIT, hot ? Duration.ofSeconds(1) : RedisTarget.WINDOW)
                    .store(store)
                    .build();
            String[] names = new String[a.keys()];
            for (int i = 0; i < a.keys(); i++) {
                names[i] = "client-" + (i + 1);
            }
            long[] calls = new long[2];
            long[] micros = new long[2];
            int[] reads = {0};
            FixedLoad.Result r = FixedLoad.run(
                    limiter,
                    names,
                    a.threads(),
                    a.seconds(),
                    () -> { // read twice: at the start and at the end of the measured span
                        long[] evalsha = evalsha(stats.sync().info("commandstats"));
                        calls[reads[0]] = evalsha[0];
                        micros[reads[0]++] = evalsha[1];
                        return FixedLoad.ticks(a.server());
                    },
                    hot);
            double decisions = r.perSecond() * a.seconds();
            System.out.printf(
                    "prefix=%s threads=%d keys=%d decisions/s=%.0f server-cpu-us/decision=%.2f evalsha/decision=%.3f"
                            + " evalsha-us/decision=%.2f%n",
                    a.name(),
                    a.threads(),
                    a.keys(),
                    r.perSecond(),
                    r.serverCpuMicros(),
                    (calls[1] - calls[0]) / decisions,
                    (micros[1] - micros[0]) / decisions);
            store.close();
        } finally {
            client.shutdown();
        }
    }

    /** The calls and microseconds of {@code EVALSHA} in an {@code INFO commandstats} answer. */
    private static long[] evalsha(String info) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:")) {
                long c = 0;
                long u = 0;
                for (String kv : line.substring(line.indexOf(':') + 1).split(",")) {
                    String[] f = kv.split("=");
                    if (f[0].equals("calls")) {
                        c = Long.parseLong(f[1]);
                    } else if (f[0].equals("usec")) {
                        u = Long.parseLong(f[1]);
                    }
                }
                return new long[] {c, u};
            }
        }
        return new long[] {0, 0};
    }
}
