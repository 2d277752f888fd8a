package dev.sluice.internal;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import org.jspecify.annotations.Nullable;

/**
 * The counts per frame of a counter store record ({@code CounterSnapshot}, {@code CounterWrite}): an immutable sorted
 * map from frame start to a positive count, kept as one array of pairs {@code [frame0, count0, frame1, count1, …]}.
 * Boxes a frame or a count only when it is read as a map entry; the limiters read the pairs themselves
 * ({@link #frame(int)}, {@link #count(int)}).
 *
 * <p>Why not a {@code TreeMap}: synchronized mode writes every dirty key's record at every flush, and a sub-window
 * counter's record holds a frame per sub-window (60 by default). As a {@code TreeMap} each frame is an entry and two
 * boxed longs, 72 bytes, and the record's unmodifiable copy a second tree of entries, allocated for every dirty key
 * at every flush. As pairs, a record of 60 frames is one array of 976 bytes, shared by the write, the store's copy
 * and the writer's snapshot.
 *
 * <p>Unmodifiable: every mutator throws {@link UnsupportedOperationException}. Equal to any map with the same entries,
 * with the same hash code and the same string as a {@code TreeMap} of them. A head, tail or sub map is a view over the
 * same array.
 */
@SuppressWarnings("JdkObsolete") // SortedMap, what the records answered before, without NavigableMap's many methods
public final class FrameMap extends AbstractMap<Long, Long> implements SortedMap<Long, Long> {

    /**
     * The first key of the range a record keeps for notes rather than frames: {@code -2^62}, a frame start before
     * 1824. Leased mode keeps each contending instance's demand there (see {@code dev.sluice.lease.DemandNotes}).
     * A store stores a note as any frame; {@link #total()} leaves notes out, and a limiter never counts them, since
     * no window of a limit that is used today reaches back that far.
     */
    public static final long NOTES_FROM = -(1L << 62);

    /** The key after the last of the notes' range: {@code -2^61}, a frame start before 1897. */
    public static final long NOTES_TO = -(1L << 61);

    private static final FrameMap EMPTY = new FrameMap(new long[0], 0, 0);

    private final long[] pairs;
    private final int from; // first pair, inclusive
    private final int to; // last pair, exclusive

    private FrameMap(long[] pairs, int from, int to) {
        this.pairs = pairs;
        this.from = from;
        this.to = to;
    }

    /** The map without frames. */
    public static FrameMap empty() {
        return EMPTY;
    }

    /**
     * The map of the first {@code n} pairs of {@code pairs}, which it takes over (the caller must not write it again):
     * frames strictly increasing, counts positive. Not checked: for pairs the caller has made so (a state's frames).
     */
    public static FrameMap wrap(long[] pairs, int n) {
        if (n < 0 || 2 * n > pairs.length) {
            throw new IllegalArgumentException("n must be in [0, " + pairs.length / 2 + "], was " + n);
        }
        return n == 0 ? EMPTY : new FrameMap(pairs, 0, n);
    }

    /**
     * The map of {@code counters}' entries with a count above zero, in increasing frame order: {@code counters} itself
     * if it is a frame map. Checks every entry: a null frame or count, or a count below 0, is refused with a message
     * naming it; the messages are built only for a bad entry.
     */
    public static FrameMap copyOf(Map<Long, Long> counters) {
        Objects.requireNonNull(counters, "counters must not be null");
        if (counters instanceof FrameMap) {
            return (FrameMap) counters;
        }
        long[] p = new long[2 * counters.size()];
        int n = 0;
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
            if (count > 0) {
                p[2 * n] = frame;
                p[2 * n + 1] = count;
                n++;
            }
        }
        if (!inOrder(p, n)) {
            sortPairs(p, n);
        }
        return wrap(p, n);
    }

    private static boolean inOrder(long[] p, int n) {
        for (int j = 1; j < n; j++) {
            if (p[2 * j] <= p[2 * j - 2]) {
                return false;
            }
        }
        return true;
    }

    /** Sorts the first {@code n} pairs by frame; a map's frames are distinct. */
    private static void sortPairs(long[] p, int n) {
        Integer[] order = new Integer[n];
        for (int j = 0; j < n; j++) {
            order[j] = j;
        }
        Arrays.sort(order, Comparator.comparingLong(j -> p[2 * j]));
        long[] sorted = new long[2 * n];
        for (int j = 0; j < n; j++) {
            sorted[2 * j] = p[2 * order[j]];
            sorted[2 * j + 1] = p[2 * order[j] + 1];
        }
        System.arraycopy(sorted, 0, p, 0, 2 * n);
    }

    /** The number of frames. */
    @Override
    public int size() {
        return to - from;
    }

    @Override
    public boolean isEmpty() {
        return to == from;
    }

    /** The start of the {@code j}-th frame, {@code 0 ≤ j < size()}, in increasing order. */
    public long frame(int j) {
        return pairs[2 * (from + Objects.checkIndex(j, size()))];
    }

    /** The count of the {@code j}-th frame, {@code 0 ≤ j < size()}: positive. */
    public long count(int j) {
        return pairs[2 * (from + Objects.checkIndex(j, size())) + 1];
    }

    /** Whether {@code key} lies in the range of notes ({@link #NOTES_FROM} to {@link #NOTES_TO}): not a frame. */
    public static boolean isNote(long key) {
        return key >= NOTES_FROM && key < NOTES_TO;
    }

    /** The sum of the counts over all frames; notes ({@link #isNote}) are not frames and are left out. */
    public long total() {
        long sum = 0;
        for (int i = from; i < to; i++) {
            if (!isNote(pairs[2 * i])) {
                sum += pairs[2 * i + 1];
            }
        }
        return sum;
    }

    /** The index of {@code frame} among the pairs if present, else {@code -(insertion point) - 1}. */
    private int search(long frame) {
        return search(pairs, from, to, frame);
    }

    /**
     * The index of the pair of {@code frame} among pairs {@code from} to {@code to} (exclusive) of {@code pairs}, each a
     * frame and then its count, in increasing frame order, if present; else {@code -(insertion point) - 1}, as
     * {@link java.util.Arrays#binarySearch(long[], long)} answers.
     */
    public static int search(long[] pairs, int from, int to, long frame) {
        int lo = from;
        int hi = to - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long f = pairs[2 * mid];
            if (f < frame) {
                lo = mid + 1;
            } else if (f > frame) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -(lo + 1);
    }

    /** The first pair whose frame is at least {@code frame}. */
    private int ceiling(long frame) {
        int i = search(frame);
        return i >= 0 ? i : -i - 1;
    }

    @Override
    public @Nullable Long get(@Nullable Object key) {
        if (!(key instanceof Long)) {
            return null;
        }
        int i = search((Long) key);
        return i >= 0 ? pairs[2 * i + 1] : null;
    }

    @Override
    public boolean containsKey(@Nullable Object key) {
        return key instanceof Long && search((Long) key) >= 0;
    }

    @Override
    public @Nullable Comparator<? super Long> comparator() {
        return null;
    }

    @Override
    public Long firstKey() {
        if (isEmpty()) {
            throw new NoSuchElementException();
        }
        return pairs[2 * from];
    }

    @Override
    public Long lastKey() {
        if (isEmpty()) {
            throw new NoSuchElementException();
        }
        return pairs[2 * (to - 1)];
    }

    @Override
    public SortedMap<Long, Long> subMap(Long fromKey, Long toKey) {
        if (fromKey > toKey) {
            throw new IllegalArgumentException("fromKey > toKey: " + fromKey + " > " + toKey);
        }
        return view(ceiling(fromKey), ceiling(toKey));
    }

    @Override
    public SortedMap<Long, Long> headMap(Long toKey) {
        return view(from, ceiling(toKey));
    }

    @Override
    public SortedMap<Long, Long> tailMap(Long fromKey) {
        return tail(fromKey);
    }

    /** {@link #tailMap} without boxing: the frames from {@code fromFrame} on, a view over the same array. */
    public FrameMap tail(long fromFrame) {
        return view(ceiling(fromFrame), to);
    }

    private FrameMap view(int f, int t) {
        return f == from && t == to ? this : new FrameMap(pairs, f, Math.max(f, t));
    }

    @Override
    public Set<Map.Entry<Long, Long>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public Iterator<Map.Entry<Long, Long>> iterator() {
                return new Iterator<>() {
                    private int next = from;

                    @Override
                    public boolean hasNext() {
                        return next < to;
                    }

                    @Override
                    public Map.Entry<Long, Long> next() {
                        if (next >= to) {
                            throw new NoSuchElementException();
                        }
                        int i = next++;
                        return new AbstractMap.SimpleImmutableEntry<>(pairs[2 * i], pairs[2 * i + 1]);
                    }
                };
            }

            @Override
            public int size() {
                return to - from;
            }
        };
    }

    @Override
    public Long put(Long key, Long value) {
        throw new UnsupportedOperationException("counts per frame are immutable");
    }

    @Override
    public Long remove(@Nullable Object key) {
        throw new UnsupportedOperationException("counts per frame are immutable");
    }

    @Override
    public void putAll(Map<? extends Long, ? extends Long> m) {
        throw new UnsupportedOperationException("counts per frame are immutable");
    }

    @Override
    public void clear() {
        throw new UnsupportedOperationException("counts per frame are immutable");
    }

    @Override
    public int hashCode() {
        int h = 0;
        for (int i = from; i < to; i++) {
            h += Long.hashCode(pairs[2 * i]) ^ Long.hashCode(pairs[2 * i + 1]);
        }
        return h;
    }

    @Override
    public boolean equals(@Nullable Object o) {
        if (o instanceof FrameMap) {
            FrameMap m = (FrameMap) o;
            return Arrays.equals(pairs, 2 * from, 2 * to, m.pairs, 2 * m.from, 2 * m.to);
        }
        return super.equals(o);
    }
}
