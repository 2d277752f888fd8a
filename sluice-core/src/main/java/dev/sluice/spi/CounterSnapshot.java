package dev.sluice.spi;

import dev.sluice.internal.FrameMap;
import java.util.Map;

/**
 * What a {@link CounterStore} holds for one key: counts per frame and the version of the record.
 *
 * @param version  the record's version, {@link #ABSENT} when there is no record
 * @param counters count per frame: the frame's start in nanoseconds since the epoch mapped to a positive count,
 *                 iterated in increasing frame order; empty when absent
 */
public record CounterSnapshot(long version, Map<Long, Long> counters) {

    /** The version of a key that has no record. A record never has this version. */
    public static final long ABSENT = 0;

    private static final CounterSnapshot NONE = new CounterSnapshot(ABSENT, Map.of());

    /**
     * Copies {@code counters} into an immutable map in increasing frame order, leaving out frames whose count is
     * zero.
     *
     * @throws IllegalArgumentException if a count is negative, or the version is {@link #ABSENT} while there are
     *                                  counts
     */
    public CounterSnapshot {
        counters = FrameMap.copyOf(counters);
        if (version == ABSENT && !counters.isEmpty()) {
            throw new IllegalArgumentException(
                    "an absent record (version " + ABSENT + ") has no counters, was " + counters);
        }
    }

    /** The snapshot of a key that has no record. */
    public static CounterSnapshot absent() {
        return NONE;
    }

    /** Whether the store holds a record for the key. */
    public boolean exists() {
        return version != ABSENT;
    }

    /**
     * The sum of the counts over all frames. Keys from {@code -2^62} (inclusive) to {@code -2^61} are notes core keeps
     * in the record (leased mode's demands), stored as any frame by a store but not frames: they are left out.
     */
    public long total() {
        return FrameMap.copyOf(counters).total(); // the frame map itself: no copy
    }
}
