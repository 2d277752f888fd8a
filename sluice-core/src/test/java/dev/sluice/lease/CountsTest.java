package dev.sluice.lease;

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

/** {@link Counts} answers as the {@code TreeMap} of boxed numbers it replaces, for every operation a write uses. */
class CountsTest {

    @Test
    void everyOperationAnswersAsASortedMap() {
        Random random = new Random(29);
        for (int run = 0; run < 2_000; run++) {
            Counts counts;
            TreeMap<Long, Long> map = new TreeMap<>();
            if (random.nextBoolean()) {
                counts = new Counts();
            } else { // as FrameDeltas.addedTo makes it: pairs taken over, with room to spare
                int n = random.nextInt(6);
                long[] pairs = new long[2 * n + 2 * random.nextInt(3)];
                long f = random.nextInt(5);
                for (int i = 0; i < n; i++, f += 1 + random.nextInt(4)) {
                    pairs[2 * i] = f;
                    pairs[2 * i + 1] = 1 + random.nextInt(5);
                    map.put(f, pairs[2 * i + 1]);
                }
                counts = Counts.wrap(pairs, n);
            }
            for (int op = random.nextInt(30); op > 0; op--) {
                long frame = random.nextInt(40) - 5;
                long value = random.nextInt(7) - 2; // zeros and negatives too: a map keeps them
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
                            pairs[2 * i + 1] = 1 + random.nextInt(4);
                            map.merge(f, pairs[2 * i + 1], Long::sum);
                        }
                        counts.addInOrder(pairs, n);
                    }
                }
                assertSame(map, counts, run);
            }
        }
    }

    private static void assertSame(TreeMap<Long, Long> map, Counts counts, int run) {
        String what = "run " + run + ": " + counts;
        assertEquals(map.size(), counts.size(), what);
        assertEquals(map.isEmpty(), counts.isEmpty(), what);
        List<Long> frames = new ArrayList<>(map.keySet());
        int i = 0;
        long sum = 0;
        for (Map.Entry<Long, Long> e : map.entrySet()) {
            assertEquals(e.getKey(), counts.frame(i), what);
            assertEquals(e.getValue(), counts.count(i), what);
            sum += e.getValue();
            i++;
        }
        assertEquals(sum, counts.sum(), what);
        for (long f = -7; f < 50; f++) {
            assertEquals(index(frames, map.ceilingKey(f)), counts.from(f, true), what + ", from " + f + " on");
            assertEquals(index(frames, map.higherKey(f)), counts.from(f, false), what + ", after " + f);
        }
        if (map.isEmpty()) {
            assertThrows(NoSuchElementException.class, counts::lastFrame);
        } else {
            assertEquals(map.lastKey(), counts.lastFrame(), what);
        }
        if (map.values().stream().allMatch(c -> c >= 0)) {
            TreeMap<Long, Long> positive = new TreeMap<>(map);
            positive.values().removeIf(c -> c == 0);
            assertEquals(positive, counts.toFrameMap(), what);
        } else {
            IllegalStateException e = assertThrows(IllegalStateException.class, counts::toFrameMap, what);
            assertTrue(e.getMessage().startsWith("a count below zero, -"), e.getMessage());
        }
    }

    private static int index(List<Long> frames, Long frame) {
        return frame == null ? frames.size() : frames.indexOf(frame);
    }
}
