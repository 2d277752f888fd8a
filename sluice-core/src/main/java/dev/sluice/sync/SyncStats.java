package dev.sluice.sync;

/**
 * Counts of what a {@link SynchronizedStore} has done since it was built: an immutable snapshot.
 *
 * @param flushes        {@link SynchronizedStore#flush()} runs, scheduled or called
 * @param refreshes      {@link SynchronizedStore#refresh()} runs, scheduled or called
 * @param storeCalls     calls to the counter store ({@code load} or {@code compareAndSet}), each one round trip,
 *                       failed ones included
 * @param writes         records written (compare-and-set applied)
 * @param conflicts      writes refused because another instance had written the record since it was read
 * @param storeFailures  calls to the counter store that failed
 * @param doubtfulWrites writes whose call failed and whose outcome could not be established afterwards because
 *                       another instance had written the record since; their counts were written again, so the store
 *                       may hold them twice (never zero times)
 * @param evictions      keys dropped from memory after being idle
 */
public record SyncStats(
        long flushes,
        long refreshes,
        long storeCalls,
        long writes,
        long conflicts,
        long storeFailures,
        long doubtfulWrites,
        long evictions) {}
