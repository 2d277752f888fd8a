package dev.sluice.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link FrameCounts}: what the flusher writes is the view less the record, frame by frame ({@link
 * FrameCounts#difference}); and every operation answers as a sorted map without zero entries would.
 */
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

    @Test
    void everyOperationAnswersAsASortedMapWithoutZeros() {
        Random random = new Random(29);
        for (int run = 0; run < 2_000; run++) {
            FrameCounts counts;
            TreeMap<Long, Long> map = new TreeMap<>();
            if (random.nextBoolean()) {
                counts = new FrameCounts();
            } else { // as leased mode's FrameDeltas.addedTo makes it: pairs taken over, with room to spare
                int n = random.nextInt(6);
                long[] pairs = new long[2 * n + 2 * random.nextInt(3)];
                long f = random.nextInt(5);
                for (int i = 0; i < n; i++, f += 1 + random.nextInt(4)) {
                    pairs[2 * i] = f;
                    pairs[2 * i + 1] = 1 + random.nextInt(5);
                    map.put(f, pairs[2 * i + 1]);
                }
                counts = FrameCounts.wrap(pairs, n);
            }
            for (int op = random.nextInt(30); op > 0; op--) {
                long frame = random.nextInt(40) - 5;
                long value = random.nextInt(7) - 2; // zeros and negatives too
                switch (random.nextInt(3)) {
                    case 0 -> {
                        counts.add(frame, value);
                        map.merge(frame, value, Long::sum);
                    }
                    case 1 -> {
                        counts.put(frame, value);
                        map.put(frame, value);
                    }
                    default -> {
                        int n = random.nextInt(5);
                        long[] pairs = new long[2 * n];
                        long f = frame;
                        for (int i = 0; i < n; i++, f += 1 + random.nextInt(3)) {
                            pairs[2 * i] = f;
                            pairs[2 * i + 1] = random.nextInt(7) - 2;
                            map.merge(f, pairs[2 * i + 1], Long::sum);
                        }
                        counts.addInOrder(pairs, n);
                    }
                }
                map.values().removeIf(c -> c == 0);
                assertAnswersAs(map, counts, run);
            }
        }
    }

    private static void assertAnswersAs(TreeMap<Long, Long> map, FrameCounts counts, int run) {
        String what = "run " + run + ": " + counts;
        assertEquals(map, counts.toMap(), what);
        assertEquals(map.size(), counts.size(), what);
        assertEquals(map.isEmpty(), counts.isEmpty(), what);
        assertEquals(map.values().stream().mapToLong(Long::longValue).sum(), counts.sum(), what);
        List<Long> frames = new ArrayList<>(map.keySet());
        for (long f = -7; f < 50; f++) {
            assertEquals(index(frames, map.ceilingKey(f)), counts.from(f, true), what + ", from " + f + " on");
            assertEquals(index(frames, map.higherKey(f)), counts.from(f, false), what + ", after " + f);
        }
        if (map.isEmpty()) {
            assertThrows(NoSuchElementException.class, counts::lastFrame);
        } else {
            assertEquals(map.lastKey(), counts.lastFrame(), what);
        }
        if (map.values().stream().allMatch(c -> c > 0)) {
            assertEquals(map, counts.toFrameMap(), what);
        } else {
            IllegalStateException e = assertThrows(IllegalStateException.class, counts::toFrameMap, what);
            assertTrue(e.getMessage().startsWith("a count below zero, -"), e.getMessage());
        }
    }

    private static int index(List<Long> frames, Long frame) {
        return frame == null ? frames.size() : frames.indexOf(frame);
    }
}
