package dev.sluice.algorithm;

import dev.sluice.Decision;

/**
 * {@code TOKEN_BUCKET}: capacity {@code L}, refilled continuously at {@code L/W}, full at first.
 *
 * <p>Tokens are exact rationals {@code tokens + frac/W}: a refill over {@code Δ} nanoseconds adds
 * {@code Δ·L/W} tokens, carried as whole tokens and a remainder {@code frac < W}, so no refill is ever rounded
 * away, however often the bucket is read. Example, 3 per 60 s (a token each 20 s): drained at 12:00:00, it holds
 * 0.5 tokens at 12:00:10 and a request of cost 1 is told to retry after 10 s.
 *
 * <p>With {@code countRejected}, a rejected request drains the bucket to empty (never below), so a key that stops
 * sending is full again within one window.
 *
 * <p>A reservation's place is the time it was taken. Once the bucket has been full after that time, the refill
 * has already given its tokens back: its cancel returns nothing (else a bucket refilled and drained again would
 * get them twice, letting {@code 2L} through at one instant). The state remembers the newest time it was seen
 * full ({@code fullSeen}) for that; a fresh state is seen full at its first request, so a state evicted once full
 * and created again answers every cancel exactly as the evicted one would have.
 */
final class TokenBucketState extends AlgorithmState {

    private long tokens;
    private long frac; // numerator over W of the fractional token, 0 when full
    private long last = Long.MIN_VALUE; // the newest time seen (the time of the last refill)
    private long fullSeen = Long.MIN_VALUE; // the newest time the bucket was seen full

    TokenBucketState(Params p) {
        this.tokens = p.limit;
    }

    private TokenBucketState(long tokens, long frac, long last, long fullSeen) {
        this.tokens = tokens;
        this.frac = frac;
        this.last = last;
        this.fullSeen = fullSeen;
    }

    @Override
    public TokenBucketState copy() {
        return new TokenBucketState(tokens, frac, last, fullSeen);
    }

    /** Refills up to {@code now}; a {@code now} older than the newest time seen refills nothing. */
    private long advance(Params p, long now) {
        if (now > last) {
            if (tokens < p.limit) {
                long elapsed = now - last;
                if (elapsed >= p.window) {
                    tokens = p.limit;
                    frac = 0;
                } else if (!refillWithoutDivision(p, elapsed)) {
                    long whole = ExactMath.mulAddDiv(elapsed, p.limit, frac, p.byWindow);
                    if (whole >= p.limit - tokens) { // not tokens + whole ≥ L: that sum overflows for L > 2^62
                        tokens = p.limit;
                        frac = 0;
                    } else {
                        frac = elapsed * p.limit + frac - whole * p.window; // exact: the true remainder is in [0, W)
                        tokens += whole;
                    }
                }
            }
            last = now;
        }
        if (tokens >= p.limit) {
            fullSeen = last;
        }
        return last;
    }

    /**
     * The two common refills that need no division: requests faster than the refill (less than one token accrues)
     * and a bucket that refills to full between requests (a key below its rate). Returns false, changing nothing,
     * when neither applies or when a product would overflow a long; then the caller divides.
     */
    private boolean refillWithoutDivision(Params p, long elapsed) {
        long accrued = elapsed * p.limit;
        if (Math.multiplyHigh(elapsed, p.limit) != 0 || accrued < 0 || accrued + frac < 0) {
            return false;
        }
        long sum = accrued + frac; // Δ·L + frac, over W: what has accrued since the last whole token
        if (sum < p.window) {
            frac = sum;
            return true;
        }
        long missing = p.limit - tokens;
        long toFull = missing * p.window;
        if (Math.multiplyHigh(missing, p.window) == 0 && toFull >= 0 && sum >= toFull) {
            tokens = p.limit;
            frac = 0;
            return true;
        }
        return false;
    }

    /** Time until the bucket holds {@code n} tokens. */
    private long untilTokens(Params p, long n) {
        if (tokens >= n) {
            return 0;
        }
        if (frac == 0 && n - tokens == 1) {
            return p.tokenNanos; // one whole token short, the case after one request on a full bucket
        }
        return ExactMath.mulSubDivCeil(n - tokens, p.window, frac, p.byLimit);
    }

    @Override
    public Decision decide(Params p, long now, long cost, boolean consume) {
        advance(p, now);
        boolean ok = tokens >= cost;
        if (consume) {
            if (ok) {
                tokens -= cost;
            } else if (p.countRejected) {
                tokens = 0;
                frac = 0;
            }
        }
        if (ok) {
            return Decision.allowed(p.limit, tokens, untilTokens(p, p.limit));
        }
        long retry = untilTokens(p, cost);
        return Decision.denied(p.limit, tokens, untilFullAfter(p, cost, retry), retry);
    }

    /**
     * {@code untilTokens(L)}, given {@code retry = untilTokens(cost)} for a {@code cost} the bucket lacks. When
     * {@code W/L} is whole ({@code tokenNanosRemainder == 0}, as for 100/s or 1,000/day), the
     * {@code L − cost} tokens after the first {@code cost} take exactly {@code (L − cost)·W/L} more, and the
     * second division is saved: {@code ⌈((L−t)·W − f)/L⌉ = (L−c)·W/L + ⌈((c−t)·W − f)/L⌉}.
     */
    private long untilFullAfter(Params p, long cost, long retry) {
        if (p.tokenNanosRemainder == 0) {
            return (p.limit - cost) * p.tokenNanosFloor + retry; // at most W: no overflow
        }
        return untilTokens(p, p.limit);
    }

    @Override
    public long place(Params p, long now) {
        return last;
    }

    @Override
    public boolean giveBack(Params p, long now, long cost, long place) {
        long t = advance(p, now);
        if (tokens >= p.limit || fullSeen > place) {
            return false;
        }
        tokens = cost >= p.limit - tokens ? p.limit : tokens + cost; // not tokens + cost: it overflows for L > 2^62
        if (tokens == p.limit) {
            frac = 0;
            fullSeen = t;
        }
        return true;
    }

    /** {@code [tokens, frac, last, fullSeen]}. */
    @Override
    public long[] snapshot() {
        return new long[] {tokens, frac, last, fullSeen};
    }

    static TokenBucketState restore(long[] snapshot) {
        requireLength("token bucket", snapshot, 4);
        return new TokenBucketState(snapshot[0], snapshot[1], snapshot[2], snapshot[3]);
    }

    @Override
    public long expiresAt(Params p) {
        return tokens >= p.limit ? Long.MIN_VALUE : last + untilTokens(p, p.limit);
    }
}
