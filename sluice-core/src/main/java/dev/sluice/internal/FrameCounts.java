package dev.sluice.internal;

import java.util.Arrays;
import java.util.NoSuchElementException;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A small mutable map from frame start to a signed count, in increasing frame order, without zero entries: the counts
 * synchronized mode keeps per key beside its record, and the counts and claims of a write leased mode prepares (what a
 * {@code TreeMap} of boxed numbers held there before, an entry and two boxes per frame, for every busy key at every
 * round). The requests of one key land in one or two frames at a time, so a scan from the end finds the frame at once;
 * a range of frames is found by binary search ({@link #from}). Entry {@code j} is {@code (a[2j], a[2j+1])} in one
 * array, so a decision touches one array, not two. Not thread-safe: guarded by the owning key's lock.
 */
public final class FrameCounts {

    private long[] a; // frame, count, frame, count, ...
    private int size;

    /** No frames. */
    public FrameCounts() {
        this(4);
    }

    private FrameCounts(int capacity) {
        a = new long[2 * capacity];
    }

    private FrameCounts(long[] pairs, int n) {
        a = pairs;
        size = n;
    }

    /**
     * The counts of the first {@code n} pairs of {@code pairs}, which it takes over (the caller must not write it
     * again): frames strictly increasing, counts not zero. Not checked: for pairs the caller has made so.
     */
    public static FrameCounts wrap(long[] pairs, int n) {
        if (n < 0 || 2 * n > pairs.length) {
            throw new IllegalArgumentException("n must be in [0, " + pairs.length / 2 + "], was " + n);
        }
        return new FrameCounts(pairs, n);
    }

    /** The counts of a record, with room for {@code more} frames besides. */
    public static FrameCounts of(FrameMap counters, int more) {
        FrameCounts f = new FrameCounts(Math.max(2, counters.size() + more));
        for (int j = 0; j < counters.size(); j++) {
            f.a[2 * j] = counters.frame(j);
            f.a[2 * j + 1] = counters.count(j);
        }
        f.size = counters.size();
        return f;
    }

    /**
     * {@code minuend − subtrahend} frame by frame, in the frames from {@code from} on: {@code minuend} as pairs
     * {@code [frame0, count0, …]}, both in increasing frame order. One pass over both, one array.
     */
    public static FrameCounts difference(long[] minuend, FrameMap subtrahend, long from) {
        int na = minuend.length / 2;
        int nb = subtrahend.size();
        FrameCounts d = new FrameCounts(Math.max(2, na + nb));
        int i = 0;
        int j = 0;
        while (i < na || j < nb) {
            long fa = i < na ? minuend[2 * i] : Long.MAX_VALUE;
            long fb = j < nb ? subtrahend.frame(j) : Long.MAX_VALUE;
            long frame = Math.min(fa, fb);
            long count = 0;
            if (fa == frame) {
                count += minuend[2 * i + 1];
                i++;
            }
            if (fb == frame) {
                count -= subtrahend.count(j);
                j++;
            }
            if (frame >= from && count != 0) {
                d.a[2 * d.size] = frame;
                d.a[2 * d.size + 1] = count;
                d.size++;
            }
        }
        return d;
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    /** The frame of entry {@code j}, in increasing frame order. */
    public long frame(int j) {
        return a[2 * j];
    }

    /** The count of entry {@code j}. */
    public long count(int j) {
        return a[2 * j + 1];
    }

    /** The last frame. */
    public long lastFrame() {
        if (size == 0) {
            throw new NoSuchElementException("no frames");
        }
        return a[2 * size - 2];
    }

    /** The sum of the counts. */
    public long sum() {
        long s = 0;
        for (int j = 0; j < size; j++) {
            s += a[2 * j + 1];
        }
        return s;
    }

    /**
     * The index of the first entry whose frame is {@code frame} or later ({@code inclusive}) or later than it (not):
     * {@link #size()} if none. A range of frames is the entries from one such index to another.
     */
    public int from(long frame, boolean inclusive) {
        int i = FrameMap.search(a, 0, size, frame);
        return i < 0 ? -i - 1 : inclusive ? i : i + 1;
    }

    /** Sets the count of {@code frame}; drops the frame if {@code count} is zero. */
    public void put(long frame, long count) {
        int j = find(frame);
        if (j >= 0) {
            a[2 * j + 1] = count;
            if (count == 0) {
                remove(j);
            }
        } else if (count != 0) {
            insert(-j - 1, frame, count);
        }
    }

    /**
     * Adds the {@code n} pairs of frame and count of {@code pairs}, in increasing frame order: both merged in one pass,
     * where adding them one by one would move the later entries for each; a frame whose count becomes zero is dropped.
     */
    public void addInOrder(long[] pairs, int n) {
        if (n == 0) {
            return;
        }
        long[] merged = new long[Math.max(4, 2 * (size + n))];
        int m = 0;
        int i = 0;
        int j = 0;
        while (i < size || j < n) {
            long fa = i < size ? a[2 * i] : Long.MAX_VALUE;
            long fb = j < n ? pairs[2 * j] : Long.MAX_VALUE;
            long frame = Math.min(fa, fb);
            long count = 0;
            if (i < size && fa == frame) {
                count += a[2 * i++ + 1];
            }
            if (j < n && fb == frame) {
                count += pairs[2 * j++ + 1];
            }
            if (count != 0) {
                merged[2 * m] = frame;
                merged[2 * m + 1] = count;
                m++;
            }
        }
        a = merged;
        size = m;
    }

    /**
     * The counts as a record's frames.
     *
     * @throws IllegalStateException if a count is below zero
     */
    public FrameMap toFrameMap() {
        for (int j = 0; j < size; j++) {
            if (a[2 * j + 1] < 0) {
                throw new IllegalStateException("a count below zero, " + a[2 * j + 1] + ", at frame " + a[2 * j]);
            }
        }
        return FrameMap.wrap(Arrays.copyOf(a, 2 * size), size);
    }

    /** Adds {@code delta} (of either sign) to {@code frame}; drops the frame when its count becomes zero. */
    public void add(long frame, long delta) {
        if (delta == 0) {
            return;
        }
        int j = find(frame);
        if (j >= 0) {
            a[2 * j + 1] += delta;
            if (a[2 * j + 1] == 0) {
                remove(j);
            }
            return;
        }
        insert(-j - 1, frame, delta);
    }

    private void insert(int at, long frame, long count) {
        if (2 * size == a.length) {
            a = Arrays.copyOf(a, Math.max(4, a.length * 2));
        }
        System.arraycopy(a, 2 * at, a, 2 * at + 2, 2 * (size - at));
        a[2 * at] = frame;
        a[2 * at + 1] = count;
        size++;
    }

    /** Adds every count of {@code other} times {@code sign}. */
    public void addAll(FrameCounts other, int sign) {
        for (int j = 0; j < other.size; j++) {
            add(other.frame(j), sign * other.count(j));
        }
    }

    /** The frames as a sorted map. */
    public SortedMap<Long, Long> toMap() {
        TreeMap<Long, Long> m = new TreeMap<>();
        for (int j = 0; j < size; j++) {
            m.put(frame(j), count(j));
        }
        return m;
    }

    private int find(long frame) {
        for (int j = size - 1; j >= 0; j--) {
            long f = a[2 * j];
            if (f == frame) {
                return j;
            }
            if (f < frame) {
                return -(j + 1) - 1;
            }
        }
        return -1;
    }

    private void remove(int j) {
        System.arraycopy(a, 2 * j + 2, a, 2 * j, 2 * (size - j - 1));
        size--;
    }

    @Override
    public String toString() {
        return toMap().toString();
    }
}
