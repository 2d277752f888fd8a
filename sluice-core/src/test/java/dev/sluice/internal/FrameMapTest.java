package dev.sluice.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** {@link FrameMap} against a {@code TreeMap} of the same entries: order, look-ups, views, equality, immutability. */
class FrameMapTest {

    @Test
    void aCopyOfAnyMapIsTheTreeMapOfItsPositiveCounts() {
        Random random = new Random(7);
        for (int round = 0; round < 200; round++) {
            Map<Long, Long> source = new HashMap<>();
            TreeMap<Long, Long> expected = new TreeMap<>();
            int n = random.nextInt(70);
            for (int j = 0; j < n; j++) {
                long frame = random.nextInt(1_000) * 1_000_000L - 500_000_000L; // negative frames too
                long count = random.nextInt(4); // some zeros, which the copy leaves out
                source.put(frame, count);
            }
            source.forEach((frame, count) -> {
                if (count > 0) {
                    expected.put(frame, count);
                }
            });
            FrameMap copy = FrameMap.copyOf(source);
            assertEquals(expected, copy);
            assertEquals(copy, expected);
            assertEquals(expected.hashCode(), copy.hashCode());
            assertEquals(expected.toString(), copy.toString());
            assertEquals(expected.values().stream().mapToLong(Long::longValue).sum(), copy.total());
            assertEquals(List.copyOf(expected.keySet()), List.copyOf(copy.keySet()));
            assertEquals(List.copyOf(expected.values()), List.copyOf(copy.values()));
            for (int j = 0; j < copy.size(); j++) {
                assertEquals(List.copyOf(expected.keySet()).get(j), copy.frame(j));
                assertEquals(List.copyOf(expected.values()).get(j), copy.count(j));
            }
            for (long frame : source.keySet()) {
                assertEquals(expected.get(frame), copy.get(frame));
                assertEquals(expected.containsKey(frame), copy.containsKey(frame));
                assertEquals(expected.containsKey(frame + 1), copy.containsKey(frame + 1));
            }
        }
    }

    @Test
    void headTailAndSubMapsAreThoseOfATreeMap() {
        TreeMap<Long, Long> expected = new TreeMap<>(Map.of(10L, 1L, 20L, 2L, 30L, 3L, 40L, 4L));
        FrameMap map = FrameMap.copyOf(expected);
        for (long from = 5; from <= 45; from += 5) {
            assertEquals(expected.headMap(from), map.headMap(from), "headMap(" + from + ")");
            assertEquals(expected.tailMap(from), map.tailMap(from), "tailMap(" + from + ")");
            assertEquals(expected.tailMap(from), map.tail(from), "tail(" + from + ")");
            for (long to = from; to <= 45; to += 5) {
                SortedMap<Long, Long> sub = map.subMap(from, to);
                assertEquals(expected.subMap(from, to), sub, "subMap(" + from + ", " + to + ")");
                assertEquals(expected.subMap(from, to).hashCode(), sub.hashCode());
                if (!sub.isEmpty()) {
                    assertEquals(expected.subMap(from, to).firstKey(), sub.firstKey());
                    assertEquals(expected.subMap(from, to).lastKey(), sub.lastKey());
                }
            }
        }
        SortedMap<Long, Long> middle = map.subMap(15L, 35L);
        assertEquals(Map.of(20L, 2L, 30L, 3L), middle);
        assertNull(middle.get(10L)); // in the array, outside the view
        assertFalse(middle.containsKey(40L));
        assertEquals(Map.of(30L, 3L), middle.tailMap(25L));
        assertEquals(5, ((FrameMap) middle).total()); // the view's counts only
        assertThrows(IllegalArgumentException.class, () -> map.subMap(30L, 20L));
    }

    @Test
    void aFrameMapIsCopiedByBeingShared() {
        FrameMap map = FrameMap.copyOf(Map.of(1L, 2L));
        assertSame(map, FrameMap.copyOf(map));
        assertSame(FrameMap.empty(), FrameMap.copyOf(Map.of(1L, 0L)));
    }

    @Test
    void wrapTakesTheFirstPairsOnly() {
        long[] pairs = {100, 1, 200, 2, 300, 3};
        assertEquals(Map.of(100L, 1L, 200L, 2L), FrameMap.wrap(pairs, 2));
        assertSame(FrameMap.empty(), FrameMap.wrap(pairs, 0));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> FrameMap.wrap(pairs, 4));
        assertEquals("n must be in [0, 3], was 4", e.getMessage());
        assertThrows(
                IndexOutOfBoundsException.class, () -> FrameMap.wrap(pairs, 2).frame(2));
        assertThrows(
                IndexOutOfBoundsException.class,
                () -> FrameMap.wrap(pairs, 3).tail(200).count(2));
    }

    @Test
    void itIsImmutable() {
        FrameMap map = FrameMap.copyOf(Map.of(1L, 2L, 3L, 4L));
        assertThrows(UnsupportedOperationException.class, () -> map.put(5L, 6L));
        assertThrows(UnsupportedOperationException.class, () -> map.remove(1L));
        assertThrows(UnsupportedOperationException.class, () -> map.putAll(Map.of(5L, 6L)));
        assertThrows(UnsupportedOperationException.class, map::clear);
        assertThrows(UnsupportedOperationException.class, () -> FrameMap.empty().clear());
        assertThrows(
                UnsupportedOperationException.class,
                () -> map.entrySet().iterator().next().setValue(9L));
        assertThrows(UnsupportedOperationException.class, () -> map.keySet().remove(1L));
        assertThrows(UnsupportedOperationException.class, () -> map.tailMap(3L).clear());
        assertEquals(Map.of(1L, 2L, 3L, 4L), map);
    }

    @Test
    void anEmptyMapHasNoFirstOrLastFrame() {
        assertTrue(FrameMap.empty().isEmpty());
        assertThrows(NoSuchElementException.class, () -> FrameMap.empty().firstKey());
        assertThrows(NoSuchElementException.class, () -> FrameMap.empty().lastKey());
        assertThrows(
                NoSuchElementException.class,
                () -> FrameMap.empty().entrySet().iterator().next());
        assertEquals("{}", FrameMap.empty().toString());
    }

    @Test
    void aLookUpOfAnythingButALongFindsNothing() {
        FrameMap map = FrameMap.copyOf(Map.of(1L, 2L));
        assertNull(map.get(1));
        assertFalse(map.containsKey("1"));
        assertNull(map.get(null));
    }

    @Test
    void entriesComeInFrameOrderWhateverTheSourcesOrder() {
        Map<Long, Long> reversed = new LinkedHashMap<>();
        reversed.put(30L, 3L);
        reversed.put(20L, 2L);
        reversed.put(10L, 1L);
        assertEquals("{10=1, 20=2, 30=3}", FrameMap.copyOf(reversed).toString());
    }
}
