package dev.sluice.sync;

import dev.sluice.internal.FrameMap;
import java.util.Arrays;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A small mutable map from frame start to a signed count, in increasing frame order, without zero entries. The
 * requests of one key land in one or two frames at a time, so a scan from the end finds the frame at once. Entry
 * {@code j} is {@code (a[2j], a[2j+1])} in one array, so a decision touches one array, not two.
 * Not thread-safe: guarded by the owning key's lock.
 */
final class FrameCounts {

    private long[] a; // frame, count, frame, count, ...
    private int size;

    private FrameCounts(int capacity) {
        a = new long[2 * capacity];
    }

    /** The counts of a record, with room for {@code more} frames besides. */
    static FrameCounts of(FrameMap counters, int more) {
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
    static FrameCounts difference(long[] minuend, FrameMap subtrahend, long from) {
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

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    long frame(int j) {
        return a[2 * j];
    }

    long count(int j) {
        return a[2 * j + 1];
    }

    /** Adds {@code delta} (of either sign) to {@code frame}; drops the frame when its count becomes zero. */
    void add(long frame, long delta) {
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
        int at = -j - 1;
        if (2 * size == a.length) {
            a = Arrays.copyOf(a, Math.max(4, a.length * 2));
        }
        System.arraycopy(a, 2 * at, a, 2 * at + 2, 2 * (size - at));
        a[2 * at] = frame;
        a[2 * at + 1] = delta;
        size++;
    }

    /** Adds every count of {@code other} times {@code sign}. */
    void addAll(FrameCounts other, int sign) {
        for (int j = 0; j < other.size; j++) {
            add(other.frame(j), sign * other.count(j));
        }
    }

    /** The frames as a sorted map. */
    SortedMap<Long, Long> toMap() {
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
