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
 * Example, 3 per 60 s: three requests at 12:00:00 put {@code tat} at 12:01:00 (full); at 12:00:10 the level is 2.5,
 * so a request of cost 1 would make {@code tat} 12:01:20, past 12:01:10: it is told to retry after 10 s.
 *
 * <p>A reservation's place is the time it was taken; once the bucket has been empty after that time, its level
 * has leaked away and its cancel returns nothing, as for {@code TOKEN_BUCKET} once full.
 */
final class LeakyBucketState extends AlgorithmState {

    private long tat = Long.MIN_VALUE; // MIN_VALUE: empty
    private long frac; // numerator over L of the fractional nanosecond of tat
    private long last = Long.MIN_VALUE; // the newest time seen
    private long emptySeen = Long.MIN_VALUE; // the newest time the bucket was seen empty

    @Override
    public LeakyBucketState copy() {
        LeakyBucketState s = new LeakyBucketState();
        s.tat = tat;
        s.frac = frac;
        s.last = last;
        s.emptySeen = emptySeen;
        return s;
    }

    /**
     * Moves to {@code now}, or stays at the newest time seen if the clock has stepped back (the level never rises
     * by going back), and notes an empty bucket.
     */
    private long advance(long now) {
        if (now > last) {
            last = now;
        }
        if (tat < last || (tat == last && frac == 0)) {
            tat = Long.MIN_VALUE;
            frac = 0;
            emptySeen = last;
        }
        return last;
    }

    @Override
    public Decision decide(Params p, long time, long cost, boolean consume) {
        long now = advance(time);
        long inc;
        long incFrac;
        if (cost == 1) {
            inc = p.tokenNanosFloor;
            incFrac = p.tokenNanosRemainder;
        } else {
            inc = ExactMath.mulDiv(cost, p.window, p.byLimit);
            incFrac = cost * p.window - inc * p.limit; // exact: the true remainder is in [0, L)
        }
        boolean empty = tat == Long.MIN_VALUE;
        long next = (empty ? now : tat) + inc;
        long nextFrac;
        if (incFrac >= p.limit - frac) { // not frac + incFrac ≥ L: that sum overflows for L > 2^62
            next++;
            nextFrac = incFrac - (p.limit - frac);
        } else {
            nextFrac = frac + incFrac;
        }
        long deadline = now + p.window;
        boolean ok = next < deadline || (next == deadline && nextFrac == 0);
        if (consume) {
            if (ok) {
                tat = next;
                frac = nextFrac;
            } else if (p.countRejected) {
                tat = deadline; // full, never fuller
                frac = 0;
                next = deadline + inc;
                nextFrac = incFrac;
            }
        }
        long remaining = remaining(p, now);
        long reset = tat == Long.MIN_VALUE ? 0 : tat - now + (frac > 0 ? 1 : 0);
        if (ok) {
            return Decision.allowed(p.limit, remaining, reset);
        }
        // the request fits once next ≤ t + W
        return Decision.denied(p.limit, remaining, reset, next - deadline + (nextFrac > 0 ? 1 : 0));
    }

    private long remaining(Params p, long now) {
        if (tat == Long.MIN_VALUE) {
            return p.limit;
        }
        long headroom = now + p.window - tat; // W minus the level in nanoseconds, before frac
        if (headroom <= 0) {
            return 0;
        }
        return ExactMath.mulSubDiv(headroom, p.limit, frac, p.byWindow);
    }

    @Override
    public long place(Params p, long now) {
        return last;
    }

    @Override
    public boolean giveBack(Params p, long time, long cost, long place) {
        long now = advance(time);
        if (tat == Long.MIN_VALUE || emptySeen > place) {
            return false;
        }
        long inc = ExactMath.mulDiv(cost, p.window, p.byLimit);
        long incFrac = cost * p.window - inc * p.limit;
        long t = tat - inc;
        long f = frac - incFrac;
        if (f < 0) {
            t--;
            f += p.limit;
        }
        tat = t;
        frac = f;
        advance(now);
        return true;
    }

    /** {@code [tat, frac, last, emptySeen]}. */
    @Override
    public long[] snapshot() {
        return new long[] {tat, frac, last, emptySeen};
    }

    static LeakyBucketState restore(long[] snapshot) {
        requireLength("leaky bucket", snapshot, 4);
        LeakyBucketState s = new LeakyBucketState();
        s.tat = snapshot[0];
        s.frac = snapshot[1];
        s.last = snapshot[2];
        s.emptySeen = snapshot[3];
        return s;
    }

    @Override
    public long expiresAt(Params p) {
        return tat == Long.MIN_VALUE ? Long.MIN_VALUE : tat + (frac > 0 ? 1 : 0);
    }
}
