package dev.sluice.algorithm;

import dev.sluice.Algorithm;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * The counter algorithms seen as counts per <em>frame</em>: the window ({@code FIXED_WINDOW}, {@code SLIDING_TAIL})
 * or sub-window ({@code SLIDING_WINDOW_COUNTER}) a permit was taken in, named by its start in nanoseconds since
 * the epoch. Their whole state is such counts, and the counts of several holders add up: the state of requests
 * admitted in two places is the state of the frame-by-frame sums. That is what synchronized mode stores and merges.
 *
 * <pre>
 * algorithm               frame size   a frame counts while now &lt; start + lifetime
 * FIXED_WINDOW            W            lifetime W      (the current window only)
 * SLIDING_TAIL            W            lifetime 2W     (the current and the previous window)
 * SLIDING_WINDOW_COUNTER  S = W/b      lifetime W      (sub-windows whose start is after now − W)
 *   strict                S            lifetime W + S  (... or that overlap (now − W, now] at all)
 * </pre>
 *
 * Stateless; all methods are static.
 */
public final class FrameStates {

    private FrameStates() {}

    /**
     * The algorithms that keep their state as counts per frame, in {@link Algorithm}'s order: what synchronized and
     * leased mode keep. Unmodifiable.
     */
    public static final Set<Algorithm> ALGORITHMS = Collections.unmodifiableSet(
            EnumSet.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER, Algorithm.SLIDING_TAIL));

    /** Whether {@code algorithm} keeps its state as counts per frame: one of {@link #ALGORITHMS}. */
    public static boolean supports(Algorithm algorithm) {
        return ALGORITHMS.contains(algorithm);
    }

    /**
     * How long after its start a frame still counts, in nanoseconds; at most {@code Long.MAX_VALUE / 4} (some 73
     * years), so that a frame start near the present plus its lifetime never overflows.
     */
    public static long lifetime(Algorithm algorithm, Params p) {
        long cap = Long.MAX_VALUE / 4;
        long w = Math.min(p.window, cap);
        switch (require(algorithm)) {
            case FIXED_WINDOW:
                return w;
            case SLIDING_TAIL:
                return Math.min(2 * w, cap);
            default:
                return Math.min(expiryOffset(p), cap);
        }
    }

    /** The start of the frame a {@link AlgorithmState#place place} names. */
    public static long frameOf(Algorithm algorithm, Params p, long place) {
        if (require(algorithm) == Algorithm.SLIDING_WINDOW_COUNTER) {
            return place - expiryOffset(p);
        }
        return place * p.window;
    }

    /** How long after its start a sub-window's permits expire: what {@code SlidingWindowCounterState} adds. */
    private static long expiryOffset(Params p) {
        return p.window + (p.strict ? p.subWindow : 0);
    }

    /**
     * The state that holds {@code counts[j]} in frame {@code frames[j]} for {@code j < n}: frames strictly
     * increasing and epoch-aligned to the frame size, counts positive. A state restored from the frame-by-frame
     * sums of several states decides as one state that had seen all their requests.
     */
    public static AlgorithmState restore(Algorithm algorithm, Params p, long[] frames, long[] counts, int n) {
        AlgorithmState s = AlgorithmState.create(require(algorithm), p);
        restoreInto(algorithm, p, s, frames, counts, n);
        return s;
    }

    /**
     * Makes {@code state}, a state of {@code algorithm}, hold what {@link #restore} builds from the same counts, in
     * place: its key and lock stay as they are, so a table that holds it holds the restored state. Call holding its
     * lock (whose release then fails every optimistic read that overlapped the change).
     */
    public static void restoreInto(
            Algorithm algorithm, Params p, AlgorithmState state, long[] frames, long[] counts, int n) {
        switch (require(algorithm)) {
            case FIXED_WINDOW:
                if (n == 0) {
                    ((FixedWindowState) state).set(Long.MIN_VALUE, 0);
                } else {
                    ((FixedWindowState) state).set(Math.floorDiv(frames[n - 1], p.window), counts[n - 1]);
                }
                return;
            case SLIDING_TAIL: {
                if (n == 0) {
                    ((SlidingTailState) state).set(Long.MIN_VALUE, 0, 0);
                    return;
                }
                long last = frames[n - 1];
                long prev = n >= 2 && frames[n - 2] == last - p.window ? counts[n - 2] : 0;
                ((SlidingTailState) state).set(Math.floorDiv(last, p.window), counts[n - 1], prev);
                return;
            }
            default: {
                long offset = expiryOffset(p);
                long[] expiries = new long[n];
                for (int j = 0; j < n; j++) {
                    expiries[j] = frames[j] + offset;
                }
                ((ExpiringLogState) state).restore(expiries, counts, n);
            }
        }
    }

    /**
     * The counts per frame that {@code state} holds, the inverse of {@link #restore}: pairs {@code (frame, count)} in
     * one array, {@code [frame0, count0, frame1, count1, ...]}, frames strictly increasing, counts positive. Frames
     * that no longer count may be among them until a decision on the state lets them go.
     */
    public static long[] frames(Algorithm algorithm, Params p, AlgorithmState state) {
        if (require(algorithm) == Algorithm.SLIDING_WINDOW_COUNTER) {
            return ((ExpiringLogState) state).pairs(expiryOffset(p));
        }
        long[] s = state.snapshot();
        if (algorithm == Algorithm.FIXED_WINDOW) { // {window, count}
            return s[1] > 0 ? new long[] {s[0] * p.window, s[1]} : new long[0];
        }
        long cur = s[0] * p.window; // SLIDING_TAIL: {window, cur, prev}
        if (s[2] > 0) {
            return s[1] > 0 ? new long[] {cur - p.window, s[2], cur, s[1]} : new long[] {cur - p.window, s[2]};
        }
        return s[1] > 0 ? new long[] {cur, s[1]} : new long[0];
    }

    private static Algorithm require(Algorithm algorithm) {
        if (!supports(algorithm)) {
            throw new IllegalArgumentException(algorithm + " does not keep counts per frame");
        }
        return algorithm;
    }
}
