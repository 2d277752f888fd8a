package dev.sluice.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.internal.FrameMap;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** {@link FrameCounts#difference}: what the flusher writes is the view less the record, frame by frame. */
class FrameCountsTest {

    @Test
    void theDifferenceKeepsTheFramesFromTheGivenOneThatDoNotCancel() {
        long[] view = {10, 5, 20, 7, 30, 2, 50, 1};
        FrameMap record = FrameMap.copyOf(new TreeMap<>(Map.of(0L, 9L, 20L, 7L, 30L, 3L, 40L, 4L)));
        // frame 0: only in the record, before 10: dropped; 10: +5; 20: cancels; 30: -1 (a cancel gave back);
        // 40: only in the record, -4; 50: only in the view, +1
        assertEquals(
                Map.of(10L, 5L, 30L, -1L, 40L, -4L, 50L, 1L),
                FrameCounts.difference(view, record, 10).toMap());
        assertEquals(
                Map.of(40L, -4L, 50L, 1L),
                FrameCounts.difference(view, record, 31).toMap());
        assertEquals(
                Map.of(),
                FrameCounts.difference(new long[0], FrameMap.empty(), 0).toMap());
        assertEquals(
                Map.of(0L, -9L),
                FrameCounts.difference(new long[0], FrameMap.copyOf(Map.of(0L, 9L)), 0)
                        .toMap());
    }

    @Test
    void aRecordsCountsTakeNewFramesAfterThem() {
        FrameCounts merged = FrameCounts.of(FrameMap.copyOf(Map.of(10L, 1L, 20L, 2L)), 1);
        merged.add(30, 3);
        merged.add(20, -2);
        merged.add(5, 1);
        assertEquals(Map.of(5L, 1L, 10L, 1L, 30L, 3L), merged.toMap());
    }
}
