package dev.sluice.algorithm;

import dev.sluice.Decision;

/**
 * {@code FIXED_WINDOW}: one counter for the epoch-aligned window {@code [k·W, (k+1)·W)}.
 *
 * <p>Example, 3 per 60 s: requests at 12:00:50, 12:00:55, 12:00:59 and 12:01:00, 12:01:01, 12:01:02 all pass,
 * six within 13 s, because the counter starts over at 12:01:00. A rejection at 12:01:50 answers "retry after
 * 10 s": the window ends at 12:02:00 and any cost up to the limit passes in a new window.
 */
final class FixedWindowState extends AlgorithmState {

    private long window = Long.MIN_VALUE; // index k of the window the count belongs to
    private long count;

    /** A state holding {@code count} in window {@code window}: what the counters of that window restore to. */
    static FixedWindowState of(long window, long count) {
        FixedWindowState s = new FixedWindowState();
        s.set(window, count);
        return s;
    }

    /** Makes this state hold {@code count} in window {@code window}. */
    void set(long window, long count) {
        this.window = window;
        this.count = count;
    }

    @Override
    public FixedWindowState copy() {
        return of(window, count);
    }

    private long advance(Params p, long now) {
        long k = windowAtLeast(window, now, p.window);
        if (k > window) {
            window = k;
            count = 0;
        }
        return Math.max(now, window * p.window);
    }

    @Override
    public Decision decide(Params p, long now, long cost, boolean consume) {
        long t = advance(p, now);
        boolean ok = count <= p.limit - cost;
        if (consume && (ok || p.countRejected)) {
            count = ExactMath.saturatedAdd(count, cost);
        }
        long untilEnd = (window + 1) * p.window - t;
        long reset = count == 0 ? 0 : untilEnd;
        long remaining = remaining(p.limit, count);
        return ok ? Decision.allowed(p.limit, remaining, reset) : Decision.denied(p.limit, remaining, reset, untilEnd);
    }

    @Override
    public long place(Params p, long now) {
        return window;
    }

    @Override
    public boolean giveBack(Params p, long now, long cost, long place) {
        advance(p, now);
        if (place != window || count == 0) {
            return false;
        }
        count = Math.max(0, count - cost);
        return true;
    }

    /** {@code [window, count]}. */
    @Override
    public long[] snapshot() {
        return new long[] {window, count};
    }

    static FixedWindowState restore(long[] snapshot) {
        requireLength("fixed window", snapshot, 2);
        FixedWindowState s = new FixedWindowState();
        s.window = snapshot[0];
        s.count = snapshot[1];
        return s;
    }

    @Override
    public long expiresAt(Params p) {
        return count == 0 ? Long.MIN_VALUE : (window + 1) * p.window;
    }
}
