package dev.sluice.spi;

import dev.sluice.internal.FrameMap;
import java.util.Map;

/** Validation and copying of counts per frame for the counter store records. */
final class Counters {

    private Counters() {}

    /**
     * An unmodifiable copy of {@code counters} in increasing frame order, without the frames counting 0
     * ({@link FrameMap#copyOf}): {@code counters} itself if it is such a copy already, so a record made from another
     * record's counts (a write, the store's snapshot of it, the writer's) shares them. Checks every entry: a null frame
     * or count, or a count below 0, is refused with a message naming it.
     */
    static Map<Long, Long> copy(Map<Long, Long> counters) {
        return FrameMap.copyOf(counters);
    }

    static long total(Map<Long, Long> counters) {
        long sum = 0;
        if (counters instanceof FrameMap) {
            FrameMap m = (FrameMap) counters;
            for (int j = 0; j < m.size(); j++) {
                sum += m.count(j);
            }
            return sum;
        }
        for (long c : counters.values()) {
            sum += c;
        }
        return sum;
    }
}
