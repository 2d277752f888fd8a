package dev.sluice.algorithm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.TestClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Edge cases of the window states that the random comparison with the oracles reaches rarely. */
class WindowStateTest {

    private static final long S = 1_000_000_000L;

    private static Params params(Algorithm algorithm, long limit, long windowNanos, int buckets, boolean strict) {
        return new Params(new LimiterConfig(
                algorithm, limit, Duration.ofNanos(windowNanos), new TestClock(), false, buckets, strict));
    }

    @Test
    void windowsBeforeTheEpochAreAlignedToo() {
        Params p = params(Algorithm.FIXED_WINDOW, 1, 60 * S, 60, false);
        AlgorithmState s = AlgorithmState.create(Algorithm.FIXED_WINDOW, p);
        assertEquals(Decision.allowed(1, 0, 30 * S), s.decide(p, -30 * S, 1, true), "window [-60 s, 0)");
        assertEquals(Decision.denied(1, 0, S, S), s.decide(p, -S, 1, true));
        assertTrue(s.decide(p, 0, 1, true).allowed(), "window [0, 60 s)");

        Params tail = params(Algorithm.SLIDING_TAIL, 2, 60 * S, 60, false);
        AlgorithmState t = AlgorithmState.create(Algorithm.SLIDING_TAIL, tail);
        t.decide(tail, -30 * S, 2, true);
        assertEquals(1, t.decide(tail, 30 * S, 1, false).remaining(), "floor(2·30/60) = 1 from [-60 s, 0)");

        Params swc = params(Algorithm.SLIDING_WINDOW_COUNTER, 1, 60 * S, 4, false);
        AlgorithmState c = AlgorithmState.create(Algorithm.SLIDING_WINDOW_COUNTER, swc);
        c.decide(swc, -S, 1, true); // sub-window [-15 s, 0) counts until 45 s
        assertEquals(Decision.denied(1, 0, 45 * S + 1, 45 * S + 1), c.decide(swc, -1, 1, false));
        assertFalse(c.decide(swc, 45 * S - 1, 1, false).allowed());
        assertTrue(c.decide(swc, 45 * S, 1, false).allowed());
    }

    @Test
    void theTailForgetsAWindowThatIsNotTheOneBefore() {
        Params p = params(Algorithm.SLIDING_TAIL, 3, 60 * S, 60, false);
        AlgorithmState s = AlgorithmState.create(Algorithm.SLIDING_TAIL, p);
        long start = 1_767_268_800L * S; // 12:00:00
        s.decide(p, start, 3, true);
        long place = s.place(p, start);
        assertEquals(0, s.decide(p, start + 60 * S, 1, false).remaining(), "12:01:00: the whole previous window");
        Decision twoLater = s.decide(p, start + 120 * S, 1, true);
        assertEquals(Decision.allowed(3, 2, 60 * S + 1), twoLater, "12:02:00: window 12:00 is not the previous one");
        assertFalse(s.giveBack(p, start + 120 * S, 3, place), "nothing to give back to");
        assertEquals(2, s.decide(p, start + 120 * S, 1, false).remaining());
    }

    @Test
    void theLogRingGrowsAndShrinksWithoutLosingAnEntry() {
        long window = 10_000;
        Params p = params(Algorithm.SLIDING_LOG, 5_000, window, 60, false);
        AlgorithmState s = AlgorithmState.create(Algorithm.SLIDING_LOG, p);
        long t0 = 1_767_268_800L * S;
        long[] places = new long[3_000];
        for (int i = 0; i < 3_000; i++) { // 3000 distinct instants: the ring grows to 4096
            assertTrue(s.decide(p, t0 + i, 1, true).allowed());
            places[i] = s.place(p, t0 + i);
        }
        assertTrue(s.giveBack(p, t0 + 3_000, 1, places[1_234]), "an entry in the middle");
        assertFalse(s.giveBack(p, t0 + 3_000, 1, places[1_234]), "now empty");
        assertEquals(2_001, s.decide(p, t0 + 3_000, 1, false).remaining());
        // at t0 + W + 2000 the entries of t0 .. t0 + 2000 have expired: 999 live, the ring shrinks by halves
        Decision d = s.decide(p, t0 + window + 2_000, 1, false);
        assertEquals(5_000 - 999, d.remaining(), d.toString());
        assertEquals(999, d.resetAfterNanos(), "the newest entry expires at t0 + 2999 + W");
        assertTrue(s.giveBack(p, t0 + window + 2_000, 1, places[2_500]));
        assertEquals(5_000 - 998, s.decide(p, t0 + window + 2_000, 1, false).remaining());
        for (int i = 0; i < 100; i++) { // and grows again
            s.decide(p, t0 + window + 2_001 + i, 1, true);
        }
        assertEquals(5_000 - 998, s.decide(p, t0 + window + 2_100, 1, false).remaining(), "898 old, 100 new");
        assertEquals(5_000 - 100, s.decide(p, t0 + window + 3_000, 1, false).remaining());
        assertEquals(5_000, s.decide(p, t0 + 2 * window + 2_101, 1, false).remaining());
        assertEquals(Long.MIN_VALUE, s.expiresAt(p), "nothing left");
    }

    @Test
    void aLogRequestAtAClockSteppedBackJoinsTheNewestEntry() {
        Params p = params(Algorithm.SLIDING_LOG, 3, 60 * S, 60, false);
        AlgorithmState s = AlgorithmState.create(Algorithm.SLIDING_LOG, p);
        long t = 1_767_268_800L * S;
        s.decide(p, t + 30 * S, 1, true);
        Decision d = s.decide(p, t, 1, true);
        assertEquals(Decision.allowed(3, 1, 90 * S), d, "counted until the newest entry expires, 12:01:30");
        assertEquals(t + 90 * S, s.place(p, t), "its place is the newest entry");
        assertTrue(s.giveBack(p, t, 1, s.place(p, t)));
        assertEquals(2, s.decide(p, t, 1, false).remaining());
    }

    @Test
    void framesReadBackWhatRestoreWasGivenAndWhatDecisionsAdded() {
        long w = 60 * S;
        Params fixed = params(Algorithm.FIXED_WINDOW, 100, w, 60, false);
        Params tail = params(Algorithm.SLIDING_TAIL, 100, w, 60, false);
        Params swc = params(Algorithm.SLIDING_WINDOW_COUNTER, 100, w, 4, false);
        Params strict = params(Algorithm.SLIDING_WINDOW_COUNTER, 100, w, 4, true);
        long s = 15 * S;

        assertArrayEquals(
                new long[0], FrameStates.frames(Algorithm.FIXED_WINDOW, fixed, restore(Algorithm.FIXED_WINDOW, fixed)));
        assertArrayEquals(
                new long[] {-w, 3},
                FrameStates.frames(Algorithm.FIXED_WINDOW, fixed, restore(Algorithm.FIXED_WINDOW, fixed, -w, 3)));
        assertArrayEquals(
                new long[] {w, 1, 2 * w, 4},
                FrameStates.frames(
                        Algorithm.SLIDING_TAIL, tail, restore(Algorithm.SLIDING_TAIL, tail, w, 1, 2 * w, 4)));
        assertArrayEquals(
                new long[] {w, 1},
                FrameStates.frames(Algorithm.SLIDING_TAIL, tail, restore(Algorithm.SLIDING_TAIL, tail, w, 1)));
        for (Params p : new Params[] {swc, strict}) {
            long[] pairs = {0, 2, s, 5, 3 * s, 1};
            assertArrayEquals(pairs, FrameStates.frames(Algorithm.SLIDING_WINDOW_COUNTER, p, restore(p, pairs)));
        }

        AlgorithmState t = restore(Algorithm.SLIDING_TAIL, tail, 0, 2);
        t.decide(tail, w + S, 3, true); // into the next window: the first becomes the previous
        assertArrayEquals(new long[] {0, 2, w, 3}, FrameStates.frames(Algorithm.SLIDING_TAIL, tail, t));
        t.decide(tail, 2 * w + S, 1, false); // a look that consumes nothing still moves the windows on
        assertArrayEquals(new long[] {w, 3}, FrameStates.frames(Algorithm.SLIDING_TAIL, tail, t));

        AlgorithmState c = restore(swc, new long[] {0, 2});
        c.decide(swc, s + 1, 4, true);
        assertArrayEquals(new long[] {0, 2, s, 4}, FrameStates.frames(Algorithm.SLIDING_WINDOW_COUNTER, swc, c));
        c.decide(swc, w, 1, true); // the first sub-window no longer counts
        assertArrayEquals(new long[] {s, 4, w, 1}, FrameStates.frames(Algorithm.SLIDING_WINDOW_COUNTER, swc, c));
    }

    @Test
    void aStateRestoredInPlaceDecidesAsOneBuiltFromTheSameCountsAndKeepsItsKeyAndLock() {
        long w = 60 * S;
        long s = 15 * S;
        Params fixed = params(Algorithm.FIXED_WINDOW, 10, w, 60, false);
        Params tail = params(Algorithm.SLIDING_TAIL, 10, w, 60, false);
        Params swc = params(Algorithm.SLIDING_WINDOW_COUNTER, 10, w, 4, false);
        Object[][] cases = {
            {Algorithm.FIXED_WINDOW, fixed, new long[] {w, 4}},
            {Algorithm.FIXED_WINDOW, fixed, new long[0]},
            {Algorithm.SLIDING_TAIL, tail, new long[] {0, 6, w, 2}},
            {Algorithm.SLIDING_TAIL, tail, new long[] {w, 3}},
            {Algorithm.SLIDING_TAIL, tail, new long[0]},
            {Algorithm.SLIDING_WINDOW_COUNTER, swc, new long[] {w, 2, w + s, 5, w + 3 * s, 1}},
            {Algorithm.SLIDING_WINDOW_COUNTER, swc, new long[0]},
        };
        for (Object[] c : cases) {
            Algorithm algorithm = (Algorithm) c[0];
            Params p = (Params) c[1];
            long[] pairs = (long[]) c[2];
            // a state that has decided before, with counts of its own that the restore replaces
            AlgorithmState inPlace = restore(algorithm, p, 2 * w, 7);
            inPlace.bind("k");
            inPlace.lock();
            try {
                long[] frames = new long[pairs.length / 2];
                long[] counts = new long[pairs.length / 2];
                for (int j = 0; j < frames.length; j++) {
                    frames[j] = pairs[2 * j];
                    counts[j] = pairs[2 * j + 1];
                }
                FrameStates.restoreInto(algorithm, p, inPlace, frames, counts, frames.length);
                assertArrayEquals(pairs, FrameStates.frames(algorithm, p, inPlace), algorithm + " " + pairs.length);
            } finally {
                inPlace.unlock();
            }
            assertEquals("k", inPlace.key());
            AlgorithmState built = restore(algorithm, p, pairs);
            for (long now = w; now < 3 * w; now += s / 2) {
                inPlace.lock();
                try {
                    Decision a = inPlace.decide(p, now, 1, true);
                    Decision b = built.decide(p, now, 1, true);
                    assertEquals(b, a, algorithm + " at " + now);
                } finally {
                    inPlace.unlock();
                }
            }
        }
    }

    private static AlgorithmState restore(Algorithm algorithm, Params p, long... pairs) {
        long[] frames = new long[pairs.length / 2];
        long[] counts = new long[pairs.length / 2];
        for (int j = 0; j < frames.length; j++) {
            frames[j] = pairs[2 * j];
            counts[j] = pairs[2 * j + 1];
        }
        return FrameStates.restore(algorithm, p, frames, counts, frames.length);
    }

    private static AlgorithmState restore(Params swc, long[] pairs) {
        return restore(Algorithm.SLIDING_WINDOW_COUNTER, swc, pairs);
    }
}
