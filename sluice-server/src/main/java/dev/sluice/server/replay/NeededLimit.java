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
 * refuses nothing, so the search is bounded; the epoch-aligned windows bound it closer ({@link #of}).
 * {@code ReplayTest} checks it against trying every limit.
 */
final class NeededLimit {
    private NeededLimit() {}

    /**
     * The smallest limit per {@code window} under {@code algorithm} that admits every one of the {@code n} requests at
     * {@code times} (epoch ms, in order) costing {@code hits}.
     */
    static long of(Algorithm algorithm, Duration window, long[] times, long[] hits, int n) {
        // Bounds from the epoch-aligned windows: the busiest one (peak) and the busiest two in a row (pair). A fixed
        // window needs exactly the peak. Every other algorithm admits all under the pair: whatever it counts at a
        // request lies within that window and the one before (the buckets refill a whole limit in one window). The
        // windowed ones need at least the peak (each counts the current window whole); the buckets, which may admit
        // up to twice their limit in one window, at least half of it.
        long w = Math.max(1, window.toMillis());
        long maxHit = 1;
        long peak = 0;
        long pair = 0;
        long current = Long.MIN_VALUE;
        long inCurrent = 0;
        long inPrevious = 0;
        for (int i = 0; i < n; i++) {
            maxHit = Math.max(maxHit, hits[i]);
            long k = Math.floorDiv(times[i], w);
            if (k != current) {
                inPrevious = k == current + 1 ? inCurrent : 0;
                inCurrent = 0;
                current = k;
            }
            inCurrent += hits[i];
            peak = Math.max(peak, inCurrent);
            pair = Math.max(pair, inCurrent + inPrevious);
        }
        if (algorithm == Algorithm.FIXED_WINDOW) {
            return Math.max(peak, maxHit);
        }
        boolean bucket = algorithm == Algorithm.TOKEN_BUCKET || algorithm == Algorithm.LEAKY_BUCKET;
        long lo = Math.max(maxHit, bucket ? (peak + 1) / 2 : peak);
        long hi = Math.max(pair, lo);
        while (!admitsAll(algorithm, window, hi, times, hits, n)) { // never, by the bound above; kept as a guard
            lo = hi + 1;
            hi *= 2;
        }
        // hi admits all, and so does every larger limit: find the smallest
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
