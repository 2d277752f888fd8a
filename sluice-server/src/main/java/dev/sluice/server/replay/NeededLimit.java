package dev.sluice.server.replay;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import java.time.Duration;

/**
 * The smallest limit under which one key's requests are refused nothing, exact for the algorithm: found by bisection,
 * each step replaying the key's requests under a {@link RateLimiter} of that algorithm, window and limit on a virtual
 * clock (the limiter the policy engine builds for a rule, in memory).
 *
 * <p>Why bisection is exact: for every algorithm, "refuses none of these requests" holds for a limit {@code L} only if
 * it holds for every larger one. Until a first refusal, the state after each request (counts, a log, a bucket's
 * level below full) is that of "everything admitted", and every admission test compares that state with {@code L}
 * (the token and leaky buckets also refill or leak faster for a larger {@code L}, which only helps); so if a larger
 * limit refused a request first, the smaller one would have refused it too. A limit equal to the key's total hits
 * refuses nothing, so the search is bounded. {@code NeededLimitTest} checks it against trying every limit.
 */
final class NeededLimit {
    private NeededLimit() {}

    /**
     * The smallest limit per {@code window} under {@code algorithm} that admits every one of the {@code n} requests at
     * {@code times} (epoch ms, in order) costing {@code hits}.
     */
    static long of(Algorithm algorithm, Duration window, long[] times, long[] hits, int n) {
        long lo = 1;
        long hi = 0;
        for (int i = 0; i < n; i++) {
            lo = Math.max(lo, hits[i]);
            hi += hits[i];
        }
        hi = Math.max(hi, lo);
        // lo may pass already; hi always does
        while (lo < hi) {
            long mid = lo + (hi - lo) / 2;
            if (admitsAll(algorithm, window, mid, times, hits, n)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /** Whether a limit of {@code limit} per {@code window} admits every request. */
    static boolean admitsAll(Algorithm algorithm, Duration window, long limit, long[] times, long[] hits, int n) {
        VirtualClock clock = new VirtualClock();
        try (RateLimiter limiter =
                RateLimiter.builder(algorithm).limit(limit, window).clock(clock).build()) {
            for (int i = 0; i < n; i++) {
                clock.set(times[i]);
                if (!limiter.tryAcquire("k", hits[i]).allowed()) {
                    return false;
                }
            }
            return true;
        }
    }

    /** How many of the requests a limit of {@code limit} refuses. */
    static long refusals(Algorithm algorithm, Duration window, long limit, long[] times, long[] hits, int n) {
        VirtualClock clock = new VirtualClock();
        long refused = 0;
        try (RateLimiter limiter =
                RateLimiter.builder(algorithm).limit(limit, window).clock(clock).build()) {
            for (int i = 0; i < n; i++) {
                clock.set(times[i]);
                if (hits[i] > limit || !limiter.tryAcquire("k", hits[i]).allowed()) {
                    refused++;
                }
            }
        }
        return refused;
    }
}
