package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.lease.LeaseStats;
import dev.sluice.lease.LeasedStore;
import dev.sluice.memory.InMemoryCounterStore;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Locale;
import java.util.Random;

/**
 * Sparse keys in leased mode: two instances over one in-memory counter store on a virtual clock, requests at a steady
 * rate over all keys, each to a key and an instance drawn at random (seed 3), the rounds (every 100 ms) run by hand
 * between requests on the same thread. Prints the thread CPU time per decision with the rounds included (best of 5
 * runs of 20 s of virtual time) and, per instance and interval, the store calls and their kinds from
 * {@link LeasedStore#stats()}.
 *
 * <pre>java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.LeaseSparseCost [ALGORITHM [KEYS [RATE [LIMIT [WINDOW_MS [SUB_WINDOWS]]]]]]</pre>
 *
 * Defaults: {@code SLIDING_WINDOW_COUNTER}, 100 keys, 2,000 requests a second (20 a second per key), a limit of 50 a
 * second, the sub-window counter in 10 sub-windows.
 */
public final class LeaseSparseCost {

    private static final long INTERVAL = 100_000_000L;
    private static final long RUN = 20_000_000_000L;
    private static final int RUNS = 5;

    private static volatile Object sink;

    private LeaseSparseCost() {}

    public static void main(String[] args) {
        Algorithm algorithm = args.length > 0 ? Algorithm.valueOf(args[0]) : Algorithm.SLIDING_WINDOW_COUNTER;
        int keys = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        int rate = args.length > 2 ? Integer.parseInt(args[2]) : 2_000;
        long limit = args.length > 3 ? Long.parseLong(args[3]) : 50;
        Duration window = Duration.ofMillis(args.length > 4 ? Long.parseLong(args[4]) : 1_000);
        int subWindows = args.length > 5 ? Integer.parseInt(args[5]) : 10;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        double best = Double.MAX_VALUE;
        LeaseStats[] stats = new LeaseStats[2];
        long rounds = 0;
        for (int run = 0; run < RUNS; run++) {
            LeaseCost.VirtualClock clock = new LeaseCost.VirtualClock();
            InMemoryCounterStore counters = InMemoryCounterStore.create();
            LeasedStore[] stores = new LeasedStore[2];
            RateLimiter[] limiters = new RateLimiter[2];
            for (int j = 0; j < 2; j++) {
                stores[j] = LeasedStore.builder(counters)
                        .interval(Duration.ofNanos(INTERVAL))
                        .manualRounds()
                        .build();
                RateLimiterBuilder b = RateLimiter.builder(algorithm)
                        .limit(limit, window)
                        .clock(clock)
                        .store(stores[j]);
                if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
                    b.buckets(subWindows);
                }
                limiters[j] = b.build();
            }
            String[] names = new String[keys];
            for (int k = 0; k < keys; k++) {
                names[k] = "client:" + k;
            }
            Random random = new Random(3);
            long step = 1_000_000_000L / rate;
            long start = clock.nanos;
            long nextRound = INTERVAL;
            long decisions = 0;
            rounds = 0;
            long cpu = mx.getCurrentThreadCpuTime();
            for (long t = step / 2; t < RUN; t += step) {
                while (nextRound <= t) {
                    clock.nanos = start + nextRound;
                    stores[0].refresh();
                    stores[1].refresh();
                    rounds++;
                    nextRound += INTERVAL;
                }
                clock.nanos = start + t;
                sink = limiters[random.nextInt(2)].tryAcquire(names[random.nextInt(keys)]);
                decisions++;
            }
            best = Math.min(best, (mx.getCurrentThreadCpuTime() - cpu) / (double) decisions);
            for (int j = 0; j < 2; j++) {
                stats[j] = stores[j].stats();
                stores[j].close();
            }
        }
        double per = 2.0 * rounds;
        long calls = stats[0].storeCalls() + stats[1].storeCalls();
        System.out.printf(
                Locale.ROOT,
                "%s, %,d keys, %,d requests a second, limit %d per %s in %d: %.0f ns CPU per decision (rounds included, best of %d);"
                        + " per instance and interval: %.3f store calls (%.3f per key), %.3f claims ahead,"
                        + " %.3f claims on requests, %.3f conflicts%n",
                algorithm,
                keys,
                rate,
                limit,
                window,
                subWindows,
                best,
                RUNS,
                calls / per,
                calls / per / keys,
                (stats[0].claimsAhead() + stats[1].claimsAhead()) / per,
                (stats[0].claims() + stats[1].claims()) / per,
                (stats[0].conflicts() + stats[1].conflicts()) / per);
    }
}
