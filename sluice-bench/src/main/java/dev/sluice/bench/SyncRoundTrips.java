package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.sync.SyncStats;
import dev.sluice.sync.SynchronizedStore;
import java.time.Duration;
import java.util.Locale;

/**
 * Counter-store calls (round trips) per flush of a synchronized store, against the number of dirty keys, the batch
 * size and the request rate: the table of docs/benchmarks.md. Each row builds a store with manual sync, admits
 * {@code requests per key} requests on each of {@code dirty keys} keys, flushes once (creating the records), does
 * the same again and counts the calls of the second flush, which updates every record at the version it read. A
 * count, not a timing, so the machine's load does not change it.
 *
 * <pre>java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.SyncRoundTrips</pre>
 */
public final class SyncRoundTrips {

    private SyncRoundTrips() {}

    public static void main(String[] args) {
        System.out.println(
                "| dirty keys | batch size | requests per key | round trips per flush | ceil(dirty / batch) |");
        System.out.println("|--:|--:|--:|--:|--:|");
        for (int dirty : new int[] {1, 100, 1_000, 10_000}) {
            for (int batch : new int[] {100, 500}) {
                for (int perKey : new int[] {1, 100}) {
                    long calls = callsPerFlush(dirty, batch, perKey);
                    long expected = (dirty + batch - 1) / batch;
                    System.out.printf(
                            Locale.ROOT, "| %,d | %d | %d | %d | %d |%n", dirty, batch, perKey, calls, expected);
                    if (calls != expected) {
                        throw new IllegalStateException("a flush of " + dirty + " keys in batches of " + batch
                                + " took " + calls + " calls, not " + expected);
                    }
                }
            }
        }
    }

    private static long callsPerFlush(int dirty, int batch, int perKey) {
        try (SynchronizedStore store = SynchronizedStore.builder(InMemoryCounterStore.create())
                .manualRounds()
                .batchSize(batch)
                .build()) {
            RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
                    .limit(1_000_000_000, Duration.ofHours(1))
                    .store(store)
                    .build();
            String[] names = Keys.generate(dirty);
            admit(limiter, names, perKey);
            store.flush();
            admit(limiter, names, perKey);
            SyncStats before = store.stats();
            if (!store.flush()) {
                throw new IllegalStateException("the flush did not write every count");
            }
            SyncStats after = store.stats();
            if (after.conflicts() != before.conflicts()) {
                throw new IllegalStateException("a single instance met a conflict");
            }
            return after.storeCalls() - before.storeCalls();
        }
    }

    private static void admit(RateLimiter limiter, String[] names, int perKey) {
        for (String name : names) {
            for (int r = 0; r < perKey; r++) {
                if (!limiter.tryAcquire(name).allowed()) {
                    throw new IllegalStateException("request denied for " + name);
                }
            }
        }
    }
}
