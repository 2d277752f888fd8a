package dev.sluice.policy;

import dev.sluice.lease.LeaseStats;
import dev.sluice.lease.LeasedStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.sync.SyncStats;
import dev.sluice.sync.SynchronizedStore;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * What the store of synchronized or leased mode does behind the decisions, from its own counts
 * ({@link SynchronizedStore#stats()}, {@link LeasedStore#stats()}), read when the metrics are scraped; bound by
 * {@link PolicyLimiter.Builder#meterRegistry}, so every front door on a limiter exports them. Nothing for exact mode and
 * the in-memory store, whose every call the policy's {@code sluice.policy.store.calls} timer already counts.
 *
 * <ul>
 *   <li>synchronized mode, counters: {@code sluice.sync.flushes}, {@code sluice.sync.refreshes},
 *       {@code sluice.sync.store.calls} (round trips), {@code sluice.sync.writes} (records written),
 *       {@code sluice.sync.conflicts}, {@code sluice.sync.store.failures}, {@code sluice.sync.doubtful.writes}
 *       (written again after a failed call whose outcome could not be settled: possibly counted twice),
 *       {@code sluice.sync.evictions};</li>
 *   <li>leased mode, counters: {@code sluice.leased.rounds}, {@code sluice.leased.store.calls} (round trips),
 *       {@code sluice.leased.claims} ({@code on} = {@code request}: a request's slice was short;
 *       {@code round}: a round claimed the slices of frames about to start, per key; {@code probe}: the claims of a
 *       health probe's limiter, {@link LeasedStore#bindProbe}, on its decisions or ahead), {@code sluice.leased.permits}
 *       ({@code direction} = {@code claimed} or {@code returned}), {@code sluice.leased.conflicts},
 *       {@code sluice.leased.store.failures}, {@code sluice.leased.evictions}; and the gauge
 *       {@code sluice.leased.permits.unused}: permits this instance holds and has not used, which the other instances
 *       cannot have until it spends or returns them.</li>
 * </ul>
 */
final class SharingMetrics {

    private SharingMetrics() {}

    /** Registers one counter read from a store's stats ({@code T}), with tags as key-value pairs. */
    private interface Counting<T> {
        void add(String name, String description, ToLongFunction<T> count, String... tags);
    }

    /** Registers the meters of {@code store} if it is a synchronized or leased store; nothing otherwise. */
    static void register(MeterRegistry registry, RateLimitStore store) {
        if (store instanceof SynchronizedStore s) {
            Counting<SyncStats> c = counting(registry, s, SynchronizedStore::stats);
            c.add("sluice.sync.flushes", "Flushes run", SyncStats::flushes);
            c.add("sluice.sync.refreshes", "Refreshes run", SyncStats::refreshes);
            c.add("sluice.sync.store.calls", "Calls to the counter store", SyncStats::storeCalls);
            c.add("sluice.sync.writes", "Records written", SyncStats::writes);
            c.add("sluice.sync.conflicts", "Writes another instance beat", SyncStats::conflicts);
            c.add("sluice.sync.store.failures", "Calls that failed", SyncStats::storeFailures);
            c.add("sluice.sync.doubtful.writes", "Counts written again after a failed call", SyncStats::doubtfulWrites);
            c.add("sluice.sync.evictions", "Idle keys dropped from memory", SyncStats::evictions);
        } else if (store instanceof LeasedStore s) {
            Counting<LeaseStats> c = counting(registry, s, LeasedStore::stats);
            c.add("sluice.leased.rounds", "Rounds run", LeaseStats::rounds);
            c.add("sluice.leased.store.calls", "Calls to the counter store", LeaseStats::storeCalls);
            c.add("sluice.leased.claims", "Claims: a slice was short", LeaseStats::claims, "on", "request");
            c.add("sluice.leased.claims", "Claims: keys claimed ahead", LeaseStats::claimsAhead, "on", "round");
            c.add("sluice.leased.claims", "Claims: the health probe's", LeaseStats::probeClaims, "on", "probe");
            c.add("sluice.leased.permits", "Permits granted", LeaseStats::permitsClaimed, "direction", "claimed");
            c.add("sluice.leased.permits", "Permits given back", LeaseStats::permitsReturned, "direction", "returned");
            c.add("sluice.leased.conflicts", "Writes another instance beat", LeaseStats::conflicts);
            c.add("sluice.leased.store.failures", "Calls that failed", LeaseStats::storeFailures);
            c.add("sluice.leased.evictions", "Idle keys dropped from memory", LeaseStats::evictions);
            Gauge.builder("sluice.leased.permits.unused", s, LeasedStore::unusedPermits)
                    .description("Permits this instance holds and has not used")
                    .register(registry);
        }
    }

    /** Registers counters on {@code store}, each reading one count of its {@code stats} when scraped. */
    private static <S, T> Counting<T> counting(MeterRegistry registry, S store, Function<S, T> stats) {
        return (name, description, count, tags) -> FunctionCounter.builder(
                        name, store, x -> count.applyAsLong(stats.apply(x)))
                .description(description)
                .tags(tags)
                .register(registry);
    }
}
