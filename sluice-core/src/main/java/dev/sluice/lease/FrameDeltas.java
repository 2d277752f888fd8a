package dev.sluice.lease;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * Changes per frame not yet written, in increasing frame order, no entry zero: two arrays of longs instead of a sorted
 * map. A lease adds to it mostly at frames later than any it holds (the unused part of a slice whose frame just
 * turned), which is an append; older frames (a cancelled reservation, a slice claimed ahead whose frame passed) are
 * found by binary search. With short frames a lease collects one entry per frame between two rounds (60 for a
 * sub-window counter of 60 sub-windows in a round's window), and a sorted map of boxed numbers for each of 10,000 keys
 * made a frame's turn cost several cache misses and an allocation. Not thread-safe: the lease's lock guards it.
 */
final class FrameDeltas {

    private static final long[] NONE = new long[0];

    private long[] frames = NONE;
    private long[] values = NONE;
    private int head;
    private int size;

    boolean isEmpty() {
        return size == 0;
    }

    /** Adds {@code d} at {@code frame}, dropping the entry if it becomes zero. */
    void add(long frame, long d) {
        if (d == 0) {
            return;
        }
        int end = head + size;
        if (size == 0 || frame > frames[end - 1]) {
            makeRoom();
            frames[head + size] = frame;
            values[head + size] = d;
            size++;
            return;
        }
        int i = Arrays.binarySearch(frames, head, end, frame);
        if (i >= 0) {
            values[i] += d;
            if (values[i] == 0) {
                System.arraycopy(frames, i + 1, frames, i, end - i - 1);
                System.arraycopy(values, i + 1, values, i, end - i - 1);
                size--;
            }
            return;
        }
        makeRoom(); // may move the entries: search again
        end = head + size;
        i = -Arrays.binarySearch(frames, head, end, frame) - 1;
        System.arraycopy(frames, i, frames, i + 1, end - i);
        System.arraycopy(values, i, values, i + 1, end - i);
        frames[i] = frame;
        values[i] = d;
        size++;
    }

    /** Ensures one free slot after the last entry: moves the entries to the front, or grows the arrays. */
    private void makeRoom() {
        if (head + size < frames.length) {
            return;
        }
        if (head > 0 && size < frames.length / 2) {
            System.arraycopy(frames, head, frames, 0, size);
            System.arraycopy(values, head, values, 0, size);
        } else {
            int capacity = Math.max(4, frames.length * 2);
            long[] f = new long[capacity];
            long[] v = new long[capacity];
            System.arraycopy(frames, head, f, 0, size);
            System.arraycopy(values, head, v, 0, size);
            frames = f;
            values = v;
        }
        head = 0;
    }

    /** Drops the entries of frames before {@code from}. */
    void dropBefore(long from) {
        while (size > 0 && frames[head] < from) {
            head++;
            size--;
        }
        if (size == 0) {
            head = 0;
        }
    }

    /** The permits to give back: the sum of the negative entries, as a positive number. */
    long givingBack() {
        long sum = 0;
        for (int i = head; i < head + size; i++) {
            sum -= Math.min(0, values[i]);
        }
        return sum;
    }

    /** The entries, as a sorted map of their own. */
    Map<Long, Long> toMap() {
        TreeMap<Long, Long> m = new TreeMap<>();
        for (int i = head; i < head + size; i++) {
            m.put(frames[i], values[i]);
        }
        return m;
    }

    /** Adds every entry of {@code changes}. */
    void addAll(Map<Long, Long> changes) {
        for (Map.Entry<Long, Long> e : changes.entrySet()) {
            add(e.getKey(), e.getValue());
        }
    }

    void clear() {
        head = 0;
        size = 0;
    }
}
