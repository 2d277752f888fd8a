package dev.sluice.spi;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/** Validation and copying of counts per frame for the counter store records. */
final class Counters {

    private Counters() {}

    /**
     * An unmodifiable copy of {@code counters} in increasing frame order, without the frames counting 0. Checks every
     * entry: a null frame or count, or a count below 0, is refused with a message naming it. A sorted map in natural
     * order with no zero count (every record this package hands out) is copied in one pass, without a comparison per
     * entry; the messages are built only for a bad entry, not for every one.
     */
    static Map<Long, Long> copy(Map<Long, Long> counters) {
        Objects.requireNonNull(counters, "counters must not be null");
        boolean allCount = true;
        for (Map.Entry<Long, Long> e : counters.entrySet()) {
            Long frame = e.getKey();
            Long count = e.getValue();
            if (frame == null) {
                throw new NullPointerException("a frame must not be null");
            }
            if (count == null) {
                throw new NullPointerException("the count of frame " + frame + " must not be null");
            }
            if (count < 0) {
                throw new IllegalArgumentException("the count of frame " + frame + " must be >= 0, was " + count);
            }
            allCount &= count > 0;
        }
        TreeMap<Long, Long> copy;
        if (allCount && counters instanceof SortedMap && ((SortedMap<Long, Long>) counters).comparator() == null) {
            copy = new TreeMap<>((SortedMap<Long, Long>) counters); // built from the sorted entries, in linear time
        } else {
            copy = new TreeMap<>();
            for (Map.Entry<Long, Long> e : counters.entrySet()) {
                if (e.getValue() > 0) {
                    copy.put(e.getKey(), e.getValue());
                }
            }
        }
        return Collections.unmodifiableSortedMap(copy);
    }

    static long total(Map<Long, Long> counters) {
        long sum = 0;
        for (long c : counters.values()) {
            sum += c;
        }
        return sum;
    }
}
