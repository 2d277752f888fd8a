package dev.sluice.sync;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * A small mutable map from frame start to a signed count, in increasing frame order, without zero entries. The
 * requests of one key land in one or two frames at a time, so a scan from the end finds the frame at once.
 * Not thread-safe: guarded by the owning key's monitor.
 */
final class FrameCounts {

    private long[] frames;
    private long[] counts;
    private int size;

    FrameCounts() {
        this(2);
    }

    private FrameCounts(int capacity) {
        frames = new long[capacity];
        counts = new long[capacity];
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
        return frames[j];
    }

    long count(int j) {
        return counts[j];
    }

    long get(long frame) {
        int j = find(frame);
        return j >= 0 ? counts[j] : 0;
    }

    long total() {
        long sum = 0;
        for (int j = 0; j < size; j++) {
            sum += counts[j];
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
            counts[j] += delta;
            if (counts[j] == 0) {
                remove(j);
            }
            return;
        }
        int at = -j - 1;
        if (size == frames.length) {
            frames = Arrays.copyOf(frames, size * 2);
            counts = Arrays.copyOf(counts, size * 2);
        }
        System.arraycopy(frames, at, frames, at + 1, size - at);
        System.arraycopy(counts, at, counts, at + 1, size - at);
        frames[at] = frame;
        counts[at] = delta;
        size++;
    }

    /** Adds every count of {@code other} times {@code sign}. */
    void addAll(FrameCounts other, int sign) {
        for (int j = 0; j < other.size; j++) {
            add(other.frames[j], sign * other.counts[j]);
        }
    }

    /** Drops the frames that start before {@code start}. */
    void dropBefore(long start) {
        int k = 0;
        while (k < size && frames[k] < start) {
            k++;
        }
        if (k > 0) {
            System.arraycopy(frames, k, frames, 0, size - k);
            System.arraycopy(counts, k, counts, 0, size - k);
            size -= k;
        }
    }

    FrameCounts copy() {
        FrameCounts c = new FrameCounts(Math.max(2, size));
        System.arraycopy(frames, 0, c.frames, 0, size);
        System.arraycopy(counts, 0, c.counts, 0, size);
        c.size = size;
        return c;
    }

    /** The frames as a sorted map. */
    TreeMap<Long, Long> toMap() {
        TreeMap<Long, Long> m = new TreeMap<>();
        for (int j = 0; j < size; j++) {
            m.put(frames[j], counts[j]);
        }
        return m;
    }

    private int find(long frame) {
        for (int j = size - 1; j >= 0; j--) {
            if (frames[j] == frame) {
                return j;
            }
            if (frames[j] < frame) {
                return -(j + 1) - 1;
            }
        }
        return -1;
    }

    private void remove(int j) {
        System.arraycopy(frames, j + 1, frames, j, size - j - 1);
        System.arraycopy(counts, j + 1, counts, j, size - j - 1);
        size--;
    }

    @Override
    public String toString() {
        return toMap().toString();
    }
}
