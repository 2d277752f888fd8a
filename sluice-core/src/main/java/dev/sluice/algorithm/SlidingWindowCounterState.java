package dev.sluice.algorithm;

/**
 * {@code SLIDING_WINDOW_COUNTER}: counters of epoch-aligned sub-windows {@code [k·S, (k+1)·S)},
 * {@code S = W/buckets} rounded down to the nanosecond. Sub-window {@code k} counts while its start is after
 * {@code now−W}, so it expires at {@code k·S + W}; with {@code strict} it counts while any part of it overlaps
 * {@code (now−W, now]}, so it expires one sub-window later.
 *
 * <p>Example, 3 per 60 s in sub-windows of 15 s: at 12:01:10 the sub-window [12:00:00, 12:00:15) no longer counts
 * (its start is not after 12:00:10), but with {@code strict} it does, since [12:00:10, 12:00:15) is inside the window.
 */
final class SlidingWindowCounterState extends ExpiringLogState {

    @Override
    long expiryOf(Params p, long now) {
        long start = Math.floorDiv(now, p.subWindow) * p.subWindow;
        return start + p.window + (p.strict ? p.subWindow : 0);
    }
}
