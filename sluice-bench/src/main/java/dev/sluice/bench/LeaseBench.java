package dev.sluice.bench;

import dev.sluice.lease.LeasedStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.sync.InMemoryCounterStore;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The request path of leased mode against the in-memory store: {@code tryAcquire} of the three algorithms leased mode
 * offers, on one key or on 10,000, from one thread, with the default clock and the {@link Load#ALLOWED} limit. The
 * leased store runs as in production, with its background round every 100 ms, against an
 * {@link InMemoryCounterStore}: the measurement includes the claims made on requests (a new slice whenever one runs
 * out or the window turns, every 100 ms for this load) but no network.
 *
 * <p>Eight seconds of warm-up, not three: on two cores, with the round's thread and the compiler's sharing them, the
 * leased path reached its steady speed only after four to six seconds (10,000 keys: 1.5, 4.1, 7.2, then 8.5–9.4
 * million decisions a second from the fourth second on), where the in-memory path does in two. Three measured a path
 * still being compiled.
 */
@State(Scope.Benchmark)
@Warmup(iterations = 8, time = 1)
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
