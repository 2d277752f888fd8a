package dev.sluice.lease;

import dev.sluice.internal.FrameMap;
import java.util.Arrays;
import java.util.NoSuchElementException;

/**
 * The counts of a write while a limiter prepares it, and the claims it carries: a sorted map from frame start to count,
 * mutable, on one array of pairs {@code [frame0, count0, frame1, count1, …]} in increasing frame order. What a
 * {@code TreeMap} of boxed numbers held before, without an entry and two boxes per frame: a sub-window counter's
 * record holds a frame per sub-window, and a round prepares a write for every busy key. A count put or added stays,
 * zero included, as in a map; {@link #toFrameMap} leaves the zeros out, as a record does.
 *
 * <p>Not thread-safe: the caller holds the lease's lock.
 */
final class Counts {

    private long[] a;
    private int size;

    /** No frames. */
    Counts() {
        this(new long[8], 0);
    }

    private Counts(long[] pairs, int n) {
        this.a = pairs;
        this.size = n;
    }

    /**
     * The counts of the first {@code n} pairs of {@code pairs}, which it takes over (the caller must not write it
     * again): frames strictly increasing.
     */
    static Counts wrap(long[] pairs, int n) {
        if (n < 0 || 2 * n > pairs.length) {
            throw new IllegalArgumentException("n must be in [0, " + pairs.length / 2 + "], was " + n);
        }
        return new Counts(pairs, n);
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** The frame of entry {@code i}, in increasing frame order. */
    long frame(int i) {
        return a[2 * i];
    }

    /** The count of entry {@code i}. */
    long count(int i) {
        return a[2 * i + 1];
    }

    /** The last frame. */
    long lastFrame() {
        if (size == 0) {
            throw new NoSuchElementException("no frames");
        }
        return a[2 * size - 2];
    }

    /** The sum of the counts. */
    long sum() {
        long s = 0;
        for (int i = 0; i < size; i++) {
            s += a[2 * i + 1];
        }
        return s;
    }

    /**
     * The index of the first entry whose frame is {@code frame} or later ({@code inclusive}) or later than it (not):
     * {@link #size()} if none. A range of frames is the entries from one such index to another.
     */
    int from(long frame, boolean inclusive) {
        int lo = 0;
        int hi = size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            long f = a[2 * mid];
            if (f < frame || (!inclusive && f == frame)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** Adds {@code delta} to the count of {@code frame}, which it puts if absent. */
    void add(long frame, long delta) {
        int i = from(frame, true);
        if (i < size && a[2 * i] == frame) {
            a[2 * i + 1] += delta;
        } else {
            insert(i, frame, delta);
        }
    }

    /** Sets the count of {@code frame}. */
    void put(long frame, long count) {
        int i = from(frame, true);
        if (i < size && a[2 * i] == frame) {
            a[2 * i + 1] = count;
        } else {
            insert(i, frame, count);
        }
    }

    private void insert(int i, long frame, long count) {
        if (2 * size == a.length) {
            a = Arrays.copyOf(a, Math.max(8, 2 * a.length));
        }
        System.arraycopy(a, 2 * i, a, 2 * i + 2, 2 * (size - i));
        a[2 * i] = frame;
        a[2 * i + 1] = count;
        size++;
    }

    /**
     * Adds the {@code n} pairs of frame and count of {@code pairs}, in increasing frame order: both merged in one pass,
     * where adding them one by one would move the later entries for each.
     */
    void addInOrder(long[] pairs, int n) {
        if (n == 0) {
            return;
        }
        long[] merged = new long[Math.max(8, 2 * (size + n))];
        int m = 0;
        int i = 0;
        int j = 0;
        while (i < size || j < n) {
            long fa = i < size ? a[2 * i] : Long.MAX_VALUE;
            long fb = j < n ? pairs[2 * j] : Long.MAX_VALUE;
            if (i < size && (j == n || fa <= fb)) {
                merged[2 * m] = fa;
                merged[2 * m + 1] = a[2 * i++ + 1] + (j < n && fb == fa ? pairs[2 * j++ + 1] : 0);
            } else {
                merged[2 * m] = fb;
                merged[2 * m + 1] = pairs[2 * j++ + 1];
            }
            m++;
        }
        a = merged;
        size = m;
    }

    /**
     * The counts as a record's frames: those above zero.
     *
     * @throws IllegalStateException if a count is below zero
     */
    FrameMap toFrameMap() {
        long[] pairs = new long[2 * size];
        int n = 0;
        for (int i = 0; i < size; i++) {
            long c = a[2 * i + 1];
            if (c < 0) {
                throw new IllegalStateException("a count below zero, " + c + ", at frame " + a[2 * i]);
            }
            if (c > 0) {
                pairs[2 * n] = a[2 * i];
                pairs[2 * n + 1] = c;
                n++;
            }
        }
        return FrameMap.wrap(pairs, n);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("{");
        for (int i = 0; i < size; i++) {
            sb.append(i == 0 ? "" : ", ").append(a[2 * i]).append('=').append(a[2 * i + 1]);
        }
        return sb.append('}').toString();
    }
}
