package dev.sluice.lease;

import dev.sluice.internal.FrameCounts;
import dev.sluice.internal.FrameMap;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * Changes per frame not yet written, in increasing frame order, no entry zero: one array of longs, each entry's frame
 * beside its change, instead of a sorted map. A lease adds to it mostly at frames later than any it holds (the unused
 * part of a slice whose frame just turned), which is an append; older frames (a cancelled reservation, a slice claimed
 * ahead whose frame passed) are found by binary search. With short frames a lease collects one entry per frame between
 * two rounds (60 for a sub-window counter of 60 sub-windows in a round's window), and a sorted map of boxed numbers for
 * each of 10,000 keys made a frame's turn cost several cache misses and an allocation; a frame and its change side by
 * side make an append touch one cache line of one array where two arrays took a miss each. Not thread-safe: the
 * lease's lock guards it.
 */
final class FrameDeltas {

    private static final long[] NONE = new long[0];

    /** Entry {@code i} of the list is {@code entries[2 * (head + i)]}, its frame, and the next long, its change. */
    private long[] entries = NONE;

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
        if (size == 0 || frame > entries[2 * (end - 1)]) {
            makeRoom();
            int at = 2 * (head + size);
            entries[at] = frame;
            entries[at + 1] = d;
            size++;
            return;
        }
        int i = search(frame);
        if (i >= 0) {
            entries[2 * i + 1] += d;
            if (entries[2 * i + 1] == 0) {
                System.arraycopy(entries, 2 * (i + 1), entries, 2 * i, 2 * (end - i - 1));
                size--;
            }
            return;
        }
        makeRoom(); // may move the entries: search again
        end = head + size;
        i = -search(frame) - 1;
        System.arraycopy(entries, 2 * i, entries, 2 * (i + 1), 2 * (end - i));
        entries[2 * i] = frame;
        entries[2 * i + 1] = d;
        size++;
    }

    /** The index of the entry of {@code frame}, or {@code -(insertion point) - 1}. */
    private int search(long frame) {
        return FrameMap.search(entries, head, head + size, frame);
    }

    /** Ensures one free entry after the last: moves the entries to the front, or grows the array. */
    private void makeRoom() {
        if (2 * (head + size) < entries.length) {
            return;
        }
        if (head > 0 && 2 * size < entries.length / 2) {
            System.arraycopy(entries, 2 * head, entries, 0, 2 * size);
        } else {
            long[] e = new long[Math.max(8, entries.length * 2)];
            System.arraycopy(entries, 2 * head, e, 0, 2 * size);
            entries = e;
        }
        head = 0;
    }

    /** Drops the entries of frames before {@code from}. */
    void dropBefore(long from) {
        while (size > 0 && entries[2 * head] < from) {
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
            sum -= Math.min(0, entries[2 * i + 1]);
        }
        return sum;
    }

    /** The entries, as a sorted map of their own. */
    Map<Long, Long> toMap() {
        TreeMap<Long, Long> m = new TreeMap<>();
        for (int i = head; i < head + size; i++) {
            m.put(entries[2 * i], entries[2 * i + 1]);
        }
        return m;
    }

    /**
     * The counts of {@code base} (frames in increasing order, counts above zero) with these changes added, only those
     * left above zero: one pass over both in frame order.
     */
    FrameCounts addedTo(FrameMap base) {
        int bn = base.size();
        int end = head + size;
        long[] pairs = new long[2 * (bn + size)];
        int n = 0;
        for (int b = 0, i = head; b < bn || i < end; ) {
            long frame;
            long count;
            if (i == end || (b < bn && base.frame(b) < entries[2 * i])) {
                frame = base.frame(b);
                count = base.count(b++);
            } else if (b == bn || entries[2 * i] < base.frame(b)) {
                frame = entries[2 * i];
                count = entries[2 * i++ + 1];
            } else {
                frame = base.frame(b);
                count = base.count(b++) + entries[2 * i++ + 1];
            }
            if (count > 0) {
                pairs[2 * n] = frame;
                pairs[2 * n + 1] = count;
                n++;
            }
        }
        return FrameCounts.wrap(pairs, n);
    }

    /** A copy of these changes, which later changes to this one leave as it is. */
    FrameDeltas copy() {
        FrameDeltas c = new FrameDeltas();
        if (size > 0) {
            c.entries = Arrays.copyOfRange(entries, 2 * head, 2 * (head + size));
            c.size = size;
        }
        return c;
    }

    /** Adds every entry of {@code other}. */
    void addAll(FrameDeltas other) {
        for (int i = other.head; i < other.head + other.size; i++) {
            add(other.entries[2 * i], other.entries[2 * i + 1]);
        }
    }

    void clear() {
        head = 0;
        size = 0;
    }
}
