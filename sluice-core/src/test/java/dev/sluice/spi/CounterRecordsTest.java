package dev.sluice.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link CounterSnapshot} and {@link CounterWrite} copy their counts: in increasing frame order whatever the map given,
 * without zero counts, immutable, detached from the map given, and a bad entry is refused with a message naming it.
 */
class CounterRecordsTest {

    private static final CounterKey KEY = new CounterKey("shape", "client:abc");

    @Test
    void anyMapIsCopiedInFrameOrderWithoutZeros() {
        Map<Long, Long> unordered = new HashMap<>();
        for (long f = 50; f > 0; f--) {
            unordered.put(f * 1_000_003L, f % 7);
        }
        TreeMap<Long, Long> sorted = new TreeMap<>(unordered);
        for (Map<Long, Long> given : List.of(unordered, sorted)) {
            Map<Long, Long> copied = new CounterSnapshot(1, given).counters();
            List<Long> frames = new ArrayList<>(copied.keySet());
            List<Long> expected = new ArrayList<>();
            for (Map.Entry<Long, Long> e : sorted.entrySet()) {
                if (e.getValue() > 0) {
                    expected.add(e.getKey());
                    assertEquals(e.getValue(), copied.get(e.getKey()));
                }
            }
            assertEquals(expected, frames);
            assertTrue(copied.values().stream().allMatch(c -> c > 0));
        }
    }

    @Test
    void aCopyOfASortedMapIsDetachedAndImmutable() {
        TreeMap<Long, Long> given = new TreeMap<>(Map.of(1L, 2L, 3L, 4L));
        CounterSnapshot snapshot = new CounterSnapshot(7, given);
        CounterWrite write = new CounterWrite(KEY, 7, 8, snapshot.counters(), 10);
        given.put(5L, 6L);
        assertEquals(Map.of(1L, 2L, 3L, 4L), snapshot.counters());
        assertEquals(Map.of(1L, 2L, 3L, 4L), write.counters());
        assertThrows(
                UnsupportedOperationException.class, () -> snapshot.counters().put(9L, 9L));
        assertThrows(UnsupportedOperationException.class, () -> write.counters().clear());
    }

    @Test
    void aRecordMadeFromAnotherRecordsCountsSharesThem() {
        CounterWrite write = new CounterWrite(KEY, 0, 8, new TreeMap<>(Map.of(1L, 2L, 3L, 4L)), 10);
        CounterSnapshot snapshot = new CounterSnapshot(8, write.counters());
        assertSame(write.counters(), snapshot.counters());
        assertEquals(Map.of(1L, 2L, 3L, 4L), snapshot.counters());
        assertEquals(snapshot.counters(), Map.of(1L, 2L, 3L, 4L));
        assertEquals(Map.of(1L, 2L, 3L, 4L).hashCode(), snapshot.counters().hashCode());
        assertEquals(new CounterSnapshot(8, Map.of(3L, 4L, 1L, 2L)), snapshot);
        assertEquals(4L, snapshot.counters().get(3L));
        assertEquals("{1=2, 3=4}", snapshot.counters().toString());
    }

    @Test
    void aBadEntryIsRefusedWithItsFrame() {
        Map<Long, Long> nullCount = new HashMap<>();
        nullCount.put(42L, null);
        NullPointerException npe = assertThrows(NullPointerException.class, () -> new CounterSnapshot(1, nullCount));
        assertEquals("the count of frame 42 must not be null", npe.getMessage());

        Map<Long, Long> nullFrame = new HashMap<>();
        nullFrame.put(null, 1L);
        npe = assertThrows(NullPointerException.class, () -> new CounterWrite(KEY, 0, 1, nullFrame, 0));
        assertEquals("a frame must not be null", npe.getMessage());

        IllegalArgumentException iae = assertThrows(
                IllegalArgumentException.class, () -> new CounterSnapshot(1, new TreeMap<>(Map.of(42L, -3L))));
        assertEquals("the count of frame 42 must be >= 0, was -3", iae.getMessage());
    }
}
