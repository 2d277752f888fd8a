package dev.sluice.algorithm;

import dev.sluice.Decision;

/**
 * {@code LEAKY_BUCKET} as a meter (GCRA): the level leaks continuously at {@code L/W}; a request of cost
 * {@code c} is admitted iff the level plus {@code c} is at most {@code L}. Nothing is queued.
 *
 * <p>The level is held as the theoretical arrival time {@code tat}: the instant the bucket will be empty,
 * an exact rational {@code tat + frac/L} nanoseconds. A request adds {@code c·W/L}; it fits iff the new
 * {@code tat} is at most {@code now + W} (a full bucket drains in {@code W}). The level in permits is
 * {@code (tat − now)·L/W}, so this admits exactly what {@code TOKEN_BUCKET} admits (tokens = {@code L} − level).
 */
final class LeakyBucketState extends AlgorithmState {

    private long tat = Long.MIN_VALUE;
    private long frac;  // numerator over L of the fractional nanosecond of tat

    private boolean emptyAt(long now) {
        return tat < now || (tat == now && frac == 0);
    }

    @Override
    public Decision decide(Params p, long now, long cost, boolean consume) {
        long inc;
        long incFrac;
        if (cost == 1) {
            inc = p.tokenNanosFloor;
            incFrac = p.tokenNanosRemainder;
        } else {
            inc = ExactMath.mulDiv(cost, p.window, p.limit);
            incFrac = cost * p.window - inc * p.limit;  // exact: the true remainder is in [0, L)
        }
        boolean empty = emptyAt(now);
        long next = (empty ? now : tat) + inc;
        long nextFrac = (empty ? 0 : frac) + incFrac;
        if (nextFrac >= p.limit) {
            next++;
            nextFrac -= p.limit;
        }
        long deadline = now + p.window;
        boolean ok = next < deadline || (next == deadline && nextFrac == 0);
        if (consume) {
            if (ok) {
                tat = next;
                frac = nextFrac;
            } else if (p.countRejected) {
                tat = deadline;  // full, never fuller
                frac = 0;
                next = deadline + inc;
                nextFrac = incFrac;
            }
        }
        long remaining = remaining(p, now);
        long reset = emptyAt(now) ? 0 : tat - now + (frac > 0 ? 1 : 0);
        if (ok) {
            return Decision.allowed(p.limit, remaining, reset);
        }
        // the request fits once next ≤ t + W
        return Decision.denied(p.limit, remaining, reset, next - deadline + (nextFrac > 0 ? 1 : 0));
    }

    private long remaining(Params p, long now) {
        if (emptyAt(now)) {
            return p.limit;
        }
        long headroom = now + p.window - tat;  // W minus the level in nanoseconds, before frac
        if (headroom <= 0) {
            return 0;
        }
        return ExactMath.mulSubDiv(headroom, p.limit, frac, p.window);
    }

    @Override
    public long place(Params p, long now) {
        return 0;
    }

    @Override
    public boolean giveBack(Params p, long now, long cost, long place) {
        if (emptyAt(now)) {
            return false;
        }
        long inc = ExactMath.mulDiv(cost, p.window, p.limit);
        long incFrac = cost * p.window - inc * p.limit;
        long t = tat - inc;
        long f = frac - incFrac;
        if (f < 0) {
            t--;
            f += p.limit;
        }
        if (t < now || (t == now && f == 0)) {
            t = Long.MIN_VALUE;
            f = 0;
        }
        tat = t;
        frac = f;
        return true;
    }

    @Override
    public long expiresAt(Params p) {
        return tat == Long.MIN_VALUE ? Long.MIN_VALUE : tat + (frac > 0 ? 1 : 0);
    }
}
