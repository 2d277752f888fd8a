package dev.sluice.spi;

import java.util.AbstractMap;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

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
        if (counters instanceof Frozen) {
            return counters; // made here, checked, and immutable: a snapshot of a write's counts shares them
        }
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
        return new Frozen(copy);
    }

    /**
     * The counts {@link #copy} makes: a sorted map no one holds a writable reference to, so a record made from another
     * record's counts shares them instead of copying them again (a write, the store's snapshot of it, the writer's).
     */
    @SuppressWarnings("JdkObsolete") // SortedMap, what copy() answered before, without NavigableMap's many methods
    private static final class Frozen extends AbstractMap<Long, Long> implements SortedMap<Long, Long> {

        private final SortedMap<Long, Long> counts;

        Frozen(NavigableMap<Long, Long> counts) {
            this.counts = Collections.unmodifiableSortedMap(counts);
        }

        @Override
        public int size() {
            return counts.size();
        }

        @Override
        public boolean isEmpty() {
            return counts.isEmpty();
        }

        @Override
        public boolean containsKey(Object key) {
            return counts.containsKey(key);
        }

        @Override
        public @Nullable Long get(Object key) {
            return counts.get(key);
        }

        @Override
        public Set<Map.Entry<Long, Long>> entrySet() {
            return counts.entrySet();
        }

        @Override
        public Set<Long> keySet() {
            return counts.keySet();
        }

        @Override
        public Collection<Long> values() {
            return counts.values();
        }

        @Override
        public @Nullable Comparator<? super Long> comparator() {
            return null;
        }

        @Override
        public SortedMap<Long, Long> subMap(Long fromKey, Long toKey) {
            return counts.subMap(fromKey, toKey);
        }

        @Override
        public SortedMap<Long, Long> headMap(Long toKey) {
            return counts.headMap(toKey);
        }

        @Override
        public SortedMap<Long, Long> tailMap(Long fromKey) {
            return counts.tailMap(fromKey);
        }

        @Override
        public Long firstKey() {
            return counts.firstKey();
        }

        @Override
        public Long lastKey() {
            return counts.lastKey();
        }

        @Override
        public boolean equals(@Nullable Object o) {
            return counts.equals(o);
        }

        @Override
        public int hashCode() {
            return counts.hashCode();
        }

        @Override
        public String toString() {
            return counts.toString();
        }
    }

    static long total(Map<Long, Long> counters) {
        long sum = 0;
        for (long c : counters.values()) {
            sum += c;
        }
        return sum;
    }
}
