package dev.sluice.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.internal.FrameCounts;
import dev.sluice.internal.FrameMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The demand notes a record keeps beside its frames, and the share of the room a claim may take by them. */
class DemandNotesTest {

    private static final long SECOND = 1_000_000_000L;
    private static final long NOW = 1_767_268_800L * SECOND; // 2026-01-01T12:00:00Z

    @Test
    void aNoteKeepsItsTagAndLapseAndIsNoFrame() {
        long key = DemandNotes.key(12_345, NOW + SECOND);
        assertTrue(FrameMap.isNote(key));
        assertFalse(FrameMap.isNote(NOW));
        assertEquals(12_345, DemandNotes.tag(key));
        assertEquals(NOW + SECOND + 10_000_000L, DemandNotes.lapse(key), "rounded up to the next hundredth");
        FrameMap record = FrameMap.copyOf(new TreeMap<>(Map.of(key, 1_000L, NOW, 7L)));
        assertEquals(7, record.total(), "a note is not counted as admissions");
    }

    @Test
    void othersCountsTheLiveNotesOfOtherInstancesOnly() {
        TreeMap<Long, Long> m = new TreeMap<>();
        m.put(DemandNotes.key(1, NOW + SECOND), 30L); // this instance's
        m.put(DemandNotes.key(2, NOW + SECOND), 20L);
        m.put(DemandNotes.key(3, NOW - SECOND), 500L); // lapsed
        m.put(NOW, 40L);
        FrameMap record = FrameMap.copyOf(m);
        assertEquals(20, DemandNotes.others(record, 1, NOW));
        assertTrue(DemandNotes.holds(record, 1, NOW));
        assertFalse(DemandNotes.holds(record, 1, NOW + 2 * SECOND));

        FrameCounts write = new FrameCounts();
        write.put(NOW, 41L);
        DemandNotes.carry(record, write, 1, NOW, 35, NOW + 2 * SECOND);
        assertEquals(
                Map.of(DemandNotes.key(2, NOW + SECOND), 20L, DemandNotes.key(1, NOW + 2 * SECOND), 35L, NOW, 41L),
                write.toFrameMap(),
                "the other's live note carried, this one's replaced, the lapsed one dropped");
    }

    /**
     * The instances of one process never share a tag: a simulation of many instances in one process then behaves the
     * same whatever the tags' random start (two that shared one would not cap each other's claims).
     */
    @Test
    void theTagsOfOneProcessAreDistinctAndNeverZero() {
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 200_000; i++) {
            int tag = DemandNotes.newTag();
            assertTrue(tag > 0 && tag < 1 << 22, "a tag of 22 bits, not 0: " + tag);
            assertTrue(seen.add(tag), "tag " + tag + " made twice, the second time after " + i + " others");
        }
    }

    /** Ten instances with equal demand, each asking for more than a limit of 50 in turn: the room goes round them. */
    @Test
    void aClaimTakesItsDemandsShareOfTheRoomLeft() {
        assertEquals(5, SliceSizing.fairShare(1, 50, 10, 90));
        assertEquals(5, SliceSizing.fairShare(1, 45, 10, 90));
        assertEquals(4, SliceSizing.fairShare(1, 40, 10, 90));
        assertEquals(3, SliceSizing.fairShare(3, 1, 10, 90), "at least the need (the caller cuts it to the room)");
        assertEquals(50, SliceSizing.fairShare(1, 50, 10, 0), "no other demand: the whole room");
    }
}
