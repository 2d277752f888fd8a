package dev.sluice.lease;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import java.time.Clock;
import java.time.Duration;

/** What the leased mode tests of this package share. */
final class LeaseTests {

    private LeaseTests() {}

    /** Makes {@code requests} requests of one permit on {@code key} and answers how many were admitted. */
    static int admitted(RateLimiter limiter, String key, int requests) {
        int n = 0;
        for (int j = 0; j < requests; j++) {
            if (limiter.tryAcquire(key).allowed()) {
                n++;
            }
        }
        return n;
    }

    /** An instance over {@code store} whose rounds run by hand ({@link LeasedStore#refresh()}), every {@code interval}. */
    static LeasedStore manual(FlakyCounterStore store, Duration interval) {
        return LeasedStore.builder(store).interval(interval).manualRounds().build();
    }

    /** A limiter of {@code store} on {@code clock}; a sub-window counter gets 10 sub-windows. */
    static RateLimiter limiter(LeasedStore store, Clock clock, Algorithm algorithm, long limit, Duration window) {
        RateLimiterBuilder b =
                RateLimiter.builder(algorithm).limit(limit, window).clock(clock);
        if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
            b.buckets(10);
        }
        return b.store(store).build();
    }
}
