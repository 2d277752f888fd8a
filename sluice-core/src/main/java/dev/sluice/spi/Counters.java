package dev.sluice.spi;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/** Validation and copying of counts per frame for the counter store records. */
final class Counters {

    private Counters() {}

    static Map<Long, Long> copy(Map<Long, Long> counters) {
        Objects.requireNonNull(counters, "counters must not be null");
        TreeMap<Long, Long> copy = new TreeMap<>();
        for (Map.Entry<Long, Long> e : counters.entrySet()) {
            Long frame = Objects.requireNonNull(e.getKey(), "a frame must not be null");
            Long count = Objects.requireNonNull(e.getValue(), "the count of frame " + frame + " must not be null");
            if (count < 0) {
                throw new IllegalArgumentException("the count of frame " + frame + " must be >= 0, was " + count);
            }
            if (count > 0) {
                copy.put(frame, count);
            }
        }
        return Collections.unmodifiableMap(copy);
    }

    static long total(Map<Long, Long> counters) {
        long sum = 0;
        for (long c : counters.values()) {
            sum += c;
        }
        return sum;
    }
}
