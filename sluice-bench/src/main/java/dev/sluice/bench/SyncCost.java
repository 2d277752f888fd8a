package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.sync.SynchronizedStore;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;

/**
 * Where synchronized mode spends its time over many keys, as thread CPU time, which a busy machine disturbs far less
 * than throughput: per decision, in memory and synchronized (the store flushed and refreshed between rounds, outside
 * the timing, as its background thread would do on another core), and per flush and refresh of every key. The
 * {@link Load#ALLOWED} limit, 10,000 keys walked with a prime stride, rounds of 600,000 decisions (about 60 per key,
 * what a 100 ms flush interval sees at 6 million decisions a second); best of 20 rounds after 10 warm-up rounds.
 *
 * <pre>java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.SyncCost</pre>
 */
public final class SyncCost {

    private static final int KEYS = 10_000;
    private static final int STRIDE = 7_919;
    private static final int PER_ROUND = 600_000;
    private static final int WARM_ROUNDS = 10;
    private static final int ROUNDS = 20;

    private static volatile Object sink;

    private SyncCost() {}

    public static void main(String[] args) {
        System.out.println("| algorithm | in-memory ns/decision | synchronized ns/decision | flush ms | refresh ms |");
        System.out.println("|---|--:|--:|--:|--:|");
        for (Algorithm algorithm :
                new Algorithm[] {Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER, Algorithm.SLIDING_TAIL}) {
            double memory = measure(algorithm, null)[0];
            try (SynchronizedStore store = SynchronizedStore.builder(InMemoryCounterStore.create())
                    .manualRounds()
                    .build()) {
                double[] sync = measure(algorithm, store);
                System.out.printf(
                        Locale.ROOT,
                        "| %s | %.1f | %.1f | %.1f | %.1f |%n",
                        algorithm,
                        memory,
                        sync[0],
                        sync[1],
                        sync[2]);
            }
        }
    }

    /** Best ns per decision, and with a store the best ms per flush and per refresh. */
    private static double[] measure(Algorithm algorithm, SynchronizedStore store) {
        RateLimiterBuilder builder = RateLimiter.builder(algorithm).limit(Load.ALLOWED.limit, Load.ALLOWED.window);
        if (store != null) {
            builder.store(store);
        }
        RateLimiter limiter = builder.build();
        String[] names = Keys.generate(KEYS);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double decision = Double.MAX_VALUE;
        double flush = Double.MAX_VALUE;
        double refresh = Double.MAX_VALUE;
        int index = 0;
        for (int r = -WARM_ROUNDS; r < ROUNDS; r++) {
            long start = threads.getCurrentThreadCpuTime();
            Object last = null;
            for (int i = 0; i < PER_ROUND; i++) {
                index += STRIDE;
                if (index >= KEYS) {
                    index -= KEYS;
                }
                last = limiter.tryAcquire(names[index]);
            }
            long decided = threads.getCurrentThreadCpuTime();
            sink = last;
            if (store != null) {
                store.flush();
                long flushed = threads.getCurrentThreadCpuTime();
                store.refresh();
                long refreshed = threads.getCurrentThreadCpuTime();
                if (r >= 0) {
                    flush = Math.min(flush, (flushed - decided) / 1e6);
                    refresh = Math.min(refresh, (refreshed - flushed) / 1e6);
                }
            }
            if (r >= 0) {
                decision = Math.min(decision, (decided - start) / (double) PER_ROUND);
            }
        }
        return new double[] {decision, flush, refresh};
    }
}
