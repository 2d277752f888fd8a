package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryStore;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A flood of keys the in-memory store has never seen, as an attacker sends them: {@code threads} threads each decide
 * once on {@code perThread} keys of their own, every one new, on a fixed window of 10 per window. With {@code grow}
 * the window is an hour, so the store keeps every key and its table grows to hold them all; with {@code churn} it is a
 * millisecond and idle keys are evicted at once ({@code keepIdleKeys(0)}), so keys are added and removed throughout.
 * Prints, per round, the wall-clock time per decision, the admissions (every one of them: each key is new) and the
 * slowest single decision (a table growing under the other threads, or a collection, shows there). Three rounds, each
 * on a new limiter; read the later ones. Arguments: threads (4), keys per thread (1,000,000), {@code grow} or
 * {@code churn}.
 *
 * <pre>java -Xmx6g -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.NewKeyFlood 4 1000000 grow</pre>
 */
public final class NewKeyFlood {

    private NewKeyFlood() {}

    public static void main(String[] args) throws InterruptedException {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int perThread = args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000;
        String mode = args.length > 2 ? args[2] : "grow";
        if (!mode.equals("grow") && !mode.equals("churn")) {
            throw new IllegalArgumentException("the third argument is grow or churn, was " + mode);
        }
        Duration window = mode.equals("churn") ? Duration.ofMillis(1) : Duration.ofHours(1);
        for (int round = 0; round < 3; round++) {
            RateLimiter limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                    .limit(10, window)
                    .store(InMemoryStore.builder().keepIdleKeys(Duration.ZERO).build())
                    .build();
            String[][] keys = new String[threads][perThread];
            for (int t = 0; t < threads; t++) {
                for (int i = 0; i < perThread; i++) {
                    keys[t][i] = "attacker:" + round + ":" + t + ":" + i;
                }
            }
            AtomicLong allowed = new AtomicLong();
            AtomicLong slowest = new AtomicLong();
            Thread[] workers = new Thread[threads];
            long start = System.nanoTime();
            for (int t = 0; t < threads; t++) {
                String[] mine = keys[t];
                workers[t] = new Thread(() -> {
                    long admitted = 0;
                    long max = 0;
                    for (String key : mine) {
                        long before = System.nanoTime();
                        if (limiter.tryAcquire(key).allowed()) {
                            admitted++;
                        }
                        max = Math.max(max, System.nanoTime() - before);
                    }
                    allowed.addAndGet(admitted);
                    slowest.accumulateAndGet(max, Math::max);
                });
                workers[t].start();
            }
            for (Thread w : workers) {
                w.join();
            }
            long elapsed = System.nanoTime() - start;
            long decisions = (long) threads * perThread;
            System.out.printf(
                    Locale.ROOT,
                    "%s, round %d: %d threads x %,d new keys: %.0f ns of wall clock per decision, %,d admitted of %,d,"
                            + " slowest decision %.1f ms%n",
                    mode,
                    round,
                    threads,
                    perThread,
                    (double) elapsed / decisions,
                    allowed.get(),
                    decisions,
                    slowest.get() / 1e6);
            limiter.close();
        }
    }
}
