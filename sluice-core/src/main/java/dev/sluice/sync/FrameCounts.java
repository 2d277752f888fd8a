package dev.sluice.sync;

import java.util.Arrays;
import java.util.Map;
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

    FrameCounts() {
        this(2);
    }

    private FrameCounts(int capacity) {
        a = new long[2 * capacity];
    }

    /** Takes over {@code pairs}, {@code [frame0, count0, frame1, count1, ...]}: frames increasing, counts non-zero. */
    static FrameCounts ofPairs(long[] pairs) {
        FrameCounts f = new FrameCounts(0);
        f.a = pairs;
        f.size = pairs.length / 2;
        return f;
    }

    static FrameCounts of(Map<Long, Long> counters) {
        FrameCounts f = new FrameCounts(Math.max(2, counters.size()));
        for (Map.Entry<Long, Long> e : counters.entrySet()) {
            f.add(e.getKey(), e.getValue());
        }
        return f;
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

    long get(long frame) {
        int j = find(frame);
        return j >= 0 ? count(j) : 0;
    }

    long total() {
        long sum = 0;
        for (int j = 0; j < size; j++) {
            sum += count(j);
        }
        return sum;
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

    /** Drops the frames that start before {@code start}. */
    void dropBefore(long start) {
        int k = 0;
        while (k < size && frame(k) < start) {
            k++;
        }
        if (k > 0) {
            System.arraycopy(a, 2 * k, a, 0, 2 * (size - k));
            size -= k;
        }
    }

    FrameCounts copy() {
        FrameCounts c = new FrameCounts(Math.max(2, size));
        System.arraycopy(a, 0, c.a, 0, 2 * size);
        c.size = size;
        return c;
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
