package dev.sluice.bench;

import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.sync.SynchronizedStore;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The request path of synchronized mode against the in-memory store: {@code tryAcquire} of the three algorithms
 * synchronized mode offers, on one key or on 10,000, from one thread, with the default clock and the
 * {@link Load#ALLOWED} limit. The synchronized store runs as in production, with its background flush (every
 * 100 ms) and refresh (every 100 ms) against an {@link InMemoryCounterStore}, so the measurement includes what the
 * flusher costs the request path (the dirty marks, the hand-over of in-flight counts) but no network: the store's
 * round trips are counted by {@link SyncRoundTrips} instead.
 */
@State(Scope.Benchmark)
public class SyncBench extends InMemoryModeBench {

    /** Where the limiter keeps its state. */
    public enum Store {
        IN_MEMORY,
        SYNCHRONIZED
    }

    @Param
    public Store store;

    @Override
    protected RateLimitStore sharedStore() {
        return store == Store.SYNCHRONIZED
                ? SynchronizedStore.builder(InMemoryCounterStore.create()).build()
                : null;
    }
}
