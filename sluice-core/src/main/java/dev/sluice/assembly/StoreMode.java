package dev.sluice.assembly;

/** How decisions use a store. */
public enum StoreMode {
    /** Every decision is one call to the store. The only mode of the in-memory store. */
    EXACT,
    /**
     * Decided in memory; counts flushed to the store in bulk every interval ({@link dev.sluice.sync.SynchronizedStore}).
     * The instances together may pass a limit by what the others admit in one interval. A shared store only.
     */
    SYNCHRONIZED,
    /**
     * Decided in memory within slices of each limit claimed from the store, a round every interval
     * ({@link dev.sluice.lease.LeasedStore}); never over the limit. A shared store only.
     */
    LEASED
}
