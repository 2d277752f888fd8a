package dev.sluice.algorithm;

import dev.sluice.Decision;

/**
 * {@code SLIDING_TAIL}: the counters of the current and previous epoch-aligned window. At {@code e} into the
 * current window the estimate is {@code floor(prev·(W−e)/W) + cur}: the previous window weighted by the part
 * of it still inside {@code (now−W, now]}, rounded down, and the current window whole (every request of the
 * current window lies inside the sliding window, so weighting it would under-count).
 *
 * <p>Example, 3 per 60 s: 2 requests in [12:00, 12:01), then at 12:01:10 ({@code e} = 10 s) the previous
 * window weighs {@code floor(2·50/60)} = 1; with {@code cur} = 1 one more request fits, making 3.
 *
 * <p>The estimate only falls between requests, so the time until it is at most some target is solved in
 * closed form ({@link #untilAtMost}): first within the current window, else in the next, where {@code cur}
 * has become {@code prev}.
 */
final class SlidingTailState extends AlgorithmState {

    private long window = Long.MIN_VALUE; // index of the current window
    private long cur;
    private long prev;

    /** A state with {@code cur} in window {@code window} and {@code prev} in the one before. */
    static SlidingTailState of(long window, long cur, long prev) {
        SlidingTailState s = new SlidingTailState();
        s.set(window, cur, prev);
        return s;
    }

    /** Makes this state hold {@code cur} in window {@code window} and {@code prev} in the one before. */
    void set(long window, long cur, long prev) {
        this.window = window;
        this.cur = cur;
        this.prev = prev;
    }

    @Override
    public SlidingTailState copy() {
        return of(window, cur, prev);
    }

    private long advance(Params p, long now) {
        long k = windowAtLeast(window, now, p.window);
        if (k > window) {
            prev = k == window + 1 ? cur : 0;
            cur = 0;
            window = k;
        }
        return Math.max(now, window * p.window);
    }

    @Override
    public Decision decide(Params p, long now, long cost, boolean consume) {
        long t = advance(p, now);
        long elapsed = t - window * p.window;
        long weighted = ExactMath.mulDiv(prev, p.window - elapsed, p.byWindow); // the previous window's part, once
        boolean ok = ExactMath.saturatedAdd(weighted, cur) <= p.limit - cost;
        if (consume && (ok || p.countRejected)) {
            cur = ExactMath.saturatedAdd(cur, cost);
        }
        long remaining = remaining(p.limit, ExactMath.saturatedAdd(weighted, cur));
        long reset = untilAtMost(p, 0, elapsed);
        if (ok) {
            return Decision.allowed(p.limit, remaining, reset);
        }
        return Decision.denied(p.limit, remaining, reset, untilAtMost(p, p.limit - cost, elapsed));
    }

    /**
     * Time from {@code elapsed} into the current window until the estimate is at most {@code target} (≥ 0),
     * with no further requests.
     */
    private long untilAtMost(Params p, long target, long elapsed) {
        if (cur <= target) {
            return Math.max(0, elapsedWhenWeightedAtMost(p, prev, target - cur) - elapsed);
        }
        return p.window - elapsed + elapsedWhenWeightedAtMost(p, cur, target);
    }

    /**
     * The least {@code e} in {@code [0, W]} with {@code floor(count·(W−e)/W) ≤ target}: with {@code r = W−e},
     * {@code count·r < (target+1)·W}, so {@code r ≤ ceil((target+1)·W / count) − 1}.
     */
    private static long elapsedWhenWeightedAtMost(Params p, long count, long target) {
        if (count <= target) {
            return 0;
        }
        if (count == target + 1) { // over by one (a full window refusing a cost of 1): any e > 0, no division
            return 1;
        }
        long maxRemainder = ExactMath.mulSubDivCeil(target + 1, p.window, 0, count) - 1;
        return p.window - maxRemainder;
    }

    @Override
    public long place(Params p, long now) {
        return window;
    }

    @Override
    public boolean giveBack(Params p, long now, long cost, long place) {
        advance(p, now);
        if (place == window && cur > 0) {
            cur = Math.max(0, cur - cost);
            return true;
        }
        if (place == window - 1 && prev > 0) {
            prev = Math.max(0, prev - cost);
            return true;
        }
        return false;
    }

    /** {@code [window, cur, prev]}. */
    @Override
    public long[] snapshot() {
        return new long[] {window, cur, prev};
    }

    static SlidingTailState restore(long[] snapshot) {
        requireLength("sliding tail", snapshot, 3);
        SlidingTailState s = new SlidingTailState();
        s.window = snapshot[0];
        s.cur = snapshot[1];
        s.prev = snapshot[2];
        return s;
    }

    @Override
    public long expiresAt(Params p) {
        if (cur > 0) {
            return (window + 2) * p.window;
        }
        return prev > 0 ? (window + 1) * p.window : Long.MIN_VALUE;
    }
}
