package dev.sluice.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.internal.FrameMap;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** {@link FrameDeltas} against a sorted map doing the same: random adds, at new, held and older frames, and drops. */
class FrameDeltasTest {

    @Test
    void behavesAsASortedMapOfNonZeroSums() {
        Random random = new Random(11);
        for (int run = 0; run < 200; run++) {
            FrameDeltas deltas = new FrameDeltas();
            TreeMap<Long, Long> model = new TreeMap<>();
            long newest = 0;
            for (int op = 0; op < 300; op++) {
                int kind = random.nextInt(10);
                if (kind < 5) { // a later frame: the common append
                    newest += 1 + random.nextInt(3);
                    add(deltas, model, newest, random.nextInt(7) - 3);
                } else if (kind < 8) { // any frame held so far, or between them
                    add(deltas, model, random.nextInt((int) newest + 1), random.nextInt(7) - 3);
                } else if (kind < 9) {
                    long from = random.nextInt((int) newest + 2);
                    deltas.dropBefore(from);
                    model.headMap(from).clear();
                } else if (random.nextInt(20) == 0) {
                    deltas.clear();
                    model.clear();
                }
                assertEquals(model, deltas.toMap());
                assertEquals(model.isEmpty(), deltas.isEmpty());
                long back = 0;
                for (long v : model.values()) {
                    back -= Math.min(0, v);
                }
                assertEquals(back, deltas.givingBack());
            }
        }
    }

    @Test
    void addedToARecordKeepsTheSumsAboveZeroAndACopyStaysAsItWas() {
        Random random = new Random(17);
        for (int run = 0; run < 500; run++) {
            FrameDeltas deltas = new FrameDeltas();
            TreeMap<Long, Long> changes = new TreeMap<>();
            for (int op = random.nextInt(12); op > 0; op--) {
                add(deltas, changes, random.nextInt(20), random.nextInt(9) - 4);
            }
            TreeMap<Long, Long> record = new TreeMap<>();
            for (int f = 0; f < 20; f++) {
                if (random.nextBoolean()) {
                    record.put((long) f, 1L + random.nextInt(4));
                }
            }
            TreeMap<Long, Long> expected = new TreeMap<>(record);
            changes.forEach((f, d) -> expected.merge(f, d, Long::sum));
            expected.values().removeIf(c -> c <= 0);
            assertEquals(expected, deltas.addedTo(FrameMap.copyOf(record)).toFrameMap());

            FrameDeltas copy = deltas.copy();
            deltas.add(100, 1);
            deltas.dropBefore(10);
            assertEquals(changes, copy.toMap());
            FrameDeltas again = new FrameDeltas();
            again.addAll(copy);
            assertEquals(changes, again.toMap());
        }
    }

    @Test
    void addAllAddsEveryEntry() {
        FrameDeltas deltas = new FrameDeltas();
        deltas.add(5, 2);
        FrameDeltas changes = new FrameDeltas();
        changes.add(1, 4);
        changes.add(5, -2);
        changes.add(9, -1);
        deltas.addAll(changes);
        assertEquals(Map.of(1L, 4L, 9L, -1L), deltas.toMap());
    }

    private static void add(FrameDeltas deltas, TreeMap<Long, Long> model, long frame, long d) {
        deltas.add(frame, d);
        if (d != 0) {
            model.merge(frame, d, (a, b) -> a + b == 0 ? null : a + b);
        }
    }
}
