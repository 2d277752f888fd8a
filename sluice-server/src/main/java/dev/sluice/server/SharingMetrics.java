package dev.sluice.server;

import dev.sluice.lease.LeaseStats;
import dev.sluice.lease.LeasedStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.sync.SyncStats;
import dev.sluice.sync.SynchronizedStore;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.ToLongFunction;

/**
 * What the store of synchronized or leased mode does behind the decisions, from its own counts
 * ({@link SynchronizedStore#stats()}, {@link LeasedStore#stats()}), read when the metrics are scraped. Nothing for exact
 * mode and the in-memory store, whose every call the policy's {@code sluice.policy.store.calls} timer already counts.
 *
 * <ul>
 *   <li>synchronized mode, counters: {@code sluice.sync.flushes}, {@code sluice.sync.refreshes},
 *       {@code sluice.sync.store.calls} (round trips), {@code sluice.sync.writes} (records written),
 *       {@code sluice.sync.conflicts}, {@code sluice.sync.store.failures}, {@code sluice.sync.doubtful.writes}
 *       (written again after a failed call whose outcome could not be settled: possibly counted twice),
 *       {@code sluice.sync.evictions};</li>
 *   <li>leased mode, counters: {@code sluice.leased.rounds}, {@code sluice.leased.store.calls} (round trips),
 *       {@code sluice.leased.claims} ({@code on} = {@code request}: a request's slice was short;
 *       {@code round}: a round claimed the slices of frames about to start, per key), {@code sluice.leased.permits}
 *       ({@code direction} = {@code claimed} or {@code returned}), {@code sluice.leased.conflicts},
 *       {@code sluice.leased.store.failures}, {@code sluice.leased.evictions}; and the gauge
 *       {@code sluice.leased.permits.unused}: permits this instance holds and has not used, which the other instances
 *       cannot have until it spends or returns them.</li>
 * </ul>
 */
final class SharingMetrics {

    private SharingMetrics() {}

    /** Registers the meters of {@code store} if it is a synchronized or leased store; nothing otherwise. */
    static void register(MeterRegistry registry, RateLimitStore store) {
        if (store instanceof SynchronizedStore s) {
            sync(registry, s, "sluice.sync.flushes", "Flushes run", SyncStats::flushes);
            sync(registry, s, "sluice.sync.refreshes", "Refreshes run", SyncStats::refreshes);
            sync(registry, s, "sluice.sync.store.calls", "Calls to the counter store", SyncStats::storeCalls);
            sync(registry, s, "sluice.sync.writes", "Records written", SyncStats::writes);
            sync(
                    registry,
                    s,
                    "sluice.sync.conflicts",
                    "Writes refused: another instance wrote first",
                    SyncStats::conflicts);
            sync(
                    registry,
                    s,
                    "sluice.sync.store.failures",
                    "Calls to the counter store that failed",
                    SyncStats::storeFailures);
            sync(
                    registry,
                    s,
                    "sluice.sync.doubtful.writes",
                    "Counts written again after a failed call",
                    SyncStats::doubtfulWrites);
            sync(registry, s, "sluice.sync.evictions", "Idle keys dropped from memory", SyncStats::evictions);
        } else if (store instanceof LeasedStore s) {
            leased(registry, s, "sluice.leased.rounds", "", "", "Rounds run", LeaseStats::rounds);
            leased(
                    registry,
                    s,
                    "sluice.leased.store.calls",
                    "",
                    "",
                    "Calls to the counter store",
                    LeaseStats::storeCalls);
            leased(
                    registry,
                    s,
                    "sluice.leased.claims",
                    "on",
                    "request",
                    "Claims made because a slice was short",
                    LeaseStats::claims);
            leased(
                    registry,
                    s,
                    "sluice.leased.claims",
                    "on",
                    "round",
                    "Keys claimed ahead by a round",
                    LeaseStats::claimsAhead);
            leased(
                    registry,
                    s,
                    "sluice.leased.permits",
                    "direction",
                    "claimed",
                    "Permits granted to this instance",
                    LeaseStats::permitsClaimed);
            leased(
                    registry,
                    s,
                    "sluice.leased.permits",
                    "direction",
                    "returned",
                    "Unused permits given back",
                    LeaseStats::permitsReturned);
            leased(
                    registry,
                    s,
                    "sluice.leased.conflicts",
                    "",
                    "",
                    "Writes refused: another instance wrote first",
                    LeaseStats::conflicts);
            leased(
                    registry,
                    s,
                    "sluice.leased.store.failures",
                    "",
                    "",
                    "Calls to the counter store that failed",
                    LeaseStats::storeFailures);
            leased(
                    registry,
                    s,
                    "sluice.leased.evictions",
                    "",
                    "",
                    "Idle keys dropped from memory",
                    LeaseStats::evictions);
            Gauge.builder("sluice.leased.permits.unused", s, LeasedStore::unusedPermits)
                    .description("Permits this instance holds and has not used")
                    .register(registry);
        }
    }

    private static void sync(
            MeterRegistry registry,
            SynchronizedStore store,
            String name,
            String description,
            ToLongFunction<SyncStats> count) {
        FunctionCounter.builder(name, store, s -> count.applyAsLong(s.stats()))
                .description(description)
                .register(registry);
    }

    private static void leased(
            MeterRegistry registry,
            LeasedStore store,
            String name,
            String tag,
            String value,
            String description,
            ToLongFunction<LeaseStats> count) {
        FunctionCounter.Builder<LeasedStore> b = FunctionCounter.builder(name, store, s -> count.applyAsLong(s.stats()))
                .description(description);
        if (!tag.isEmpty()) {
            b.tag(tag, value);
        }
        b.register(registry);
    }
}
