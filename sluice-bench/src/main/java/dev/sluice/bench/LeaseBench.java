package dev.sluice.bench;

import dev.sluice.lease.LeasedStore;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.spi.RateLimitStore;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The request path of leased mode against the in-memory store: {@code tryAcquire} of the three algorithms leased mode
 * offers, on one key or on 10,000, from one thread, with the default clock and the {@link Load#ALLOWED} limit's rate
 * (over its window of 100 ms, or {@code windowMillis}). The leased store runs as in production, with its background
 * round every 100 ms, against an {@link InMemoryCounterStore}: the measurement includes the claims made on requests (a
 * new slice whenever one runs out or a frame turns) but no network.
 */
@State(Scope.Benchmark)
public class LeaseBench extends InMemoryModeBench {

    /** Where the limiter keeps its state. */
    public enum Store {
        IN_MEMORY,
        LEASED
    }

    @Param
    public Store store;

    @Override
    protected RateLimitStore sharedStore() {
        return store == Store.LEASED
                ? LeasedStore.builder(InMemoryCounterStore.create()).build()
                : null;
    }
}
