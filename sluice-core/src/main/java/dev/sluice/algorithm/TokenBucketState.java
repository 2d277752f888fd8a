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
 */
final class TokenBucketState extends AlgorithmState {

    private long tokens;
    private long frac;  // numerator over W of the fractional token, 0 when full
    private long last;  // time of the last refill

    TokenBucketState(Params p, long now) {
        this.tokens = p.limit;
        this.last = now;
    }

    private void refill(Params p, long now) {
        if (now <= last) {
            return;
        }
        long elapsed = now - last;
        last = now;
        if (tokens >= p.limit) {
            return;
        }
        if (elapsed >= p.window) {
            tokens = p.limit;
            frac = 0;
            return;
        }
        // Two common cases need no division: requests faster than the refill (less than one token accrues)
        // and a bucket that refills to full between requests (a key below its rate).
        long accrued = elapsed * p.limit;
        if (Math.multiplyHigh(elapsed, p.limit) == 0 && accrued >= 0 && accrued + frac >= 0) {
            long sum = accrued + frac;  // Δ·L + frac, over W: the tokens accrued since the last whole one
            if (sum < p.window) {
                frac = sum;
                return;
            }
            long missing = p.limit - tokens;
            long toFull = missing * p.window;
            if (Math.multiplyHigh(missing, p.window) == 0 && toFull >= 0 && sum >= toFull) {
                tokens = p.limit;
                frac = 0;
                return;
            }
        }
        long whole = ExactMath.mulAddDiv(elapsed, p.limit, frac, p.window);
        frac = elapsed * p.limit + frac - whole * p.window;  // exact: the true remainder is in [0, W)
        tokens += whole;
        if (tokens >= p.limit) {
            tokens = p.limit;
            frac = 0;
        }
    }

    /** Time until the bucket holds {@code n} tokens. */
    private long untilTokens(Params p, long n) {
        if (tokens >= n) {
            return 0;
        }
        if (frac == 0 && n - tokens == 1) {
            return p.tokenNanos;  // one whole token short, the case after one request on a full bucket
        }
        return ExactMath.mulSubDivCeil(n - tokens, p.window, frac, p.limit);
    }

    @Override
    public Decision decide(Params p, long now, long cost, boolean consume) {
        refill(p, now);
        boolean ok = tokens >= cost;
        if (consume) {
            if (ok) {
                tokens -= cost;
            } else if (p.countRejected) {
                tokens = 0;
                frac = 0;
            }
        }
        long reset = untilTokens(p, p.limit);
        return ok ? Decision.allowed(p.limit, tokens, reset)
                : Decision.denied(p.limit, tokens, reset, untilTokens(p, cost));
    }

    @Override
    public long place(Params p, long now) {
        return 0;
    }

    @Override
    public boolean giveBack(Params p, long now, long cost, long place) {
        refill(p, now);
        if (tokens >= p.limit) {
            return false;
        }
        tokens = Math.min(p.limit, tokens + cost);
        if (tokens == p.limit) {
            frac = 0;
        }
        return true;
    }

    @Override
    public long expiresAt(Params p) {
        return tokens >= p.limit ? Long.MIN_VALUE : last + untilTokens(p, p.limit);
    }
}
