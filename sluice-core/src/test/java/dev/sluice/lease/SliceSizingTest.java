package dev.sluice.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Slice sizing alone: numbers in, numbers out, worked by hand. */
class SliceSizingTest {

    private static final long MS = 1_000_000L;

    private static LimiterConfig config(Algorithm algorithm, long limit, Duration window, int buckets) {
        RateLimiterBuilder b = RateLimiter.builder(algorithm).limit(limit, window);
        if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
            b.buckets(buckets);
        }
        try (RateLimiter l = b.build()) {
            return l.config();
        }
    }

    /** A sliding tail of 500 per 5 s, rounds every second: a tenth of a window is 500 ms, shorter than a round. */
    private final SliceSizing tail =
            new SliceSizing(config(Algorithm.SLIDING_TAIL, 500, Duration.ofSeconds(5), 60), 5_000 * MS, 1_000 * MS);

    @Test
    void theBarsComeFromTheWindowAndTheRound() {
        assertEquals(10, tail.minClaim, "what the window frees in a tenth of a round: 500 × 100 ms / 5 s");
        assertEquals(500 * MS, tail.shortHorizon, "the shorter of a round and a tenth of the window");
        assertEquals(50, tail.contendedClaim, "what the window frees in the short horizon: 500 × 500 ms / 5 s");
        SliceSizing fixed =
                new SliceSizing(config(Algorithm.FIXED_WINDOW, 500, Duration.ofSeconds(5), 60), 5_000 * MS, 1_000 * MS);
        assertEquals(fixed.minClaim, fixed.contendedClaim, "a fixed window's room does not grow within its frame");
        SliceSizing tiny =
                new SliceSizing(config(Algorithm.FIXED_WINDOW, 3, Duration.ofMinutes(1), 60), 60_000 * MS, 100 * MS);
        assertEquals(1, tiny.minClaim, "at least one permit");
    }

    @Test
    void theExpectedDemandIsTheIntervalsCutToTheFrameOrTheShortHorizon() {
        assertEquals(40, tail.expected(40, false, 5_000 * MS), "a whole interval left in the frame");
        assertEquals(20, tail.expected(40, true, 5_000 * MS), "contended: the short horizon, half an interval");
        assertEquals(10, tail.expected(40, false, 250 * MS), "a quarter of an interval left in the frame");
        assertEquals(1, tail.expected(1, false, 1 * MS), "rounded up: a size, not a count");
        assertEquals(0, tail.expected(0, false, 5_000 * MS));
    }

    @Test
    void aClaimIsWorthTheRoomOfATenthOfARoundOrMoreWhenContended() {
        long left = 5_000 * MS;
        assertEquals(10, tail.worth(false, 0, false, 50, left), "the least claim");
        assertEquals(5, tail.worth(false, 0, false, 5, left), "no more than the demand expected");
        assertEquals(50, tail.worth(true, 0, false, 500, left), "contended: the short horizon's room");
        assertEquals(
                75, tail.worth(true, 8, false, 500, left), "one that won half its claims waits for half as much again");
        assertEquals(100, tail.worth(true, 16, false, 500, left), "one that always wins waits for twice as much");
        assertEquals(60, tail.worth(true, 16, false, 60, left), "never more than the demand expected");
    }

    @Test
    void aContendedSlidingTailHoldingItsShareWaitsForTwiceTheBar() {
        long left = 5_000 * MS;
        assertEquals(100, tail.worth(true, 0, true, 500, left), "twice the short horizon's room");
        assertEquals(100, tail.worth(true, 16, true, 500, left), "a winner's bar is no higher for it");
        assertEquals(60, tail.worth(true, 0, true, 60, left), "never more than the demand expected");
        assertEquals(30, tail.worth(true, 0, true, 500, 300 * MS), "near the window's end, what still frees");
        SliceSizing fixed =
                new SliceSizing(config(Algorithm.FIXED_WINDOW, 500, Duration.ofSeconds(5), 60), 5_000 * MS, 1_000 * MS);
        assertEquals(fixed.contendedClaim, fixed.worth(true, 0, true, 500, left), "only the sliding tail waits");
    }

    @Test
    void anInstanceHoldsItsShareOnceGrantedItsDemandsPartOfTheLimitRoundedDown() {
        assertFalse(SliceSizing.holdsItsShare(50, 49, 500, 0), "no other demand noted: no share");
        assertFalse(SliceSizing.holdsItsShare(50, 4, 500, 4_500), "ten alike: 5 each");
        assertTrue(SliceSizing.holdsItsShare(50, 5, 500, 4_500));
        assertTrue(SliceSizing.holdsItsShare(50, 1, 500, 14_500), "thirty alike: 1.67 each, rounded down to 1");
        assertFalse(SliceSizing.holdsItsShare(50, 0, 1, 1_000_000), "at least 1");
        assertFalse(SliceSizing.holdsItsShare(50, 24, 3_000, 1_000), "three quarters of the demand: 37");
        assertTrue(SliceSizing.holdsItsShare(1_000_000_000_000L, 500_000_000_000L, 1, 1), "a large limit: no overflow");
    }

    @Test
    void aContendedSlidingTailNearItsWindowsEndWaitsOnlyForWhatStillFrees() {
        assertEquals(30, tail.worth(true, 16, false, 500, 300 * MS), "what 300 ms free: 500 × 300 ms / 5 s");
        assertEquals(1, tail.worth(true, 16, false, 500, 3 * MS), "at least one permit");
        assertEquals(10, tail.worth(false, 0, false, 500, 3 * MS), "not contended: the least claim, as before");
        SliceSizing fixed =
                new SliceSizing(config(Algorithm.FIXED_WINDOW, 500, Duration.ofSeconds(5), 60), 5_000 * MS, 1_000 * MS);
        assertEquals(
                fixed.contendedClaim,
                fixed.worth(true, 0, false, 500, 3 * MS),
                "a fixed window frees nothing within its frame: its bar stays");
    }

    @Test
    void aClaimAsksForTheDemandExpectedAndAtLeastTheNeed() {
        assertEquals(30, SliceSizing.claim(2, 30));
        assertEquals(5, SliceSizing.claim(5, 3));
    }

    @Test
    void slicesAheadCoverTheDemandAndTwiceItsSquareRoot() {
        assertEquals(1, SliceSizing.aheadSlice(0), "at least one");
        assertEquals(2, SliceSizing.aheadSlice(0.5), "0.5 + 2 × 0.71 = 1.9, rounded up");
        assertEquals(8, SliceSizing.aheadSlice(4), "4 + 2 × 2");
        assertEquals(15, SliceSizing.aheadSlice(9), "9 + 2 × 3, exactly: no rounding up past it");
    }

    @Test
    void theDemandAheadIsPerFrameAndNoneForARareFrameWhenRoundsAreLong() {
        assertEquals(40.0, tail.aheadDemand(40), "a frame longer than a round: a round's demand");
        assertEquals(0.0, tail.aheadDemand(0));
        // sub-windows of 100 ms, rounds every second: a tenth of the round's demand per frame
        LimiterConfig swc = config(Algorithm.SLIDING_WINDOW_COUNTER, 600, Duration.ofMinutes(1), 600);
        assertEquals(0.5, new SliceSizing(swc, 100 * MS, 1_000 * MS).aheadDemand(5), 1e-12);
        // rounds every 10 s, more than a tenth of the window: a frame expecting 0.05 requests gets no slice ahead
        assertEquals(0.0, new SliceSizing(swc, 100 * MS, 10_000 * MS).aheadDemand(5));
        assertEquals(1.0, new SliceSizing(swc, 100 * MS, 10_000 * MS).aheadDemand(100), 1e-12, "but one expecting 1");
    }

    /**
     * A sub-window counter of 1,000 a second in 100 sub-windows of 10 ms, rounds every 100 ms: ten sub-windows start
     * before the next round. Three requests an interval expect 0.3 a sub-window, a slice of 2 in each (20 in all); one
     * span takes 3 + 2·√3 → 7, counted twice (14): a span. Five an interval: 2 in each (20) against 2 × 10: not. Fewer
     * than two an interval: no span (a key asked once may not be asked again). One frame, or more than a window's: no
     * span either.
     */
    @Test
    void aSpanWhereItHoldsLessThanASliceInEveryFrame() {
        SliceSizing sub = new SliceSizing(
                config(Algorithm.SLIDING_WINDOW_COUNTER, 1_000, Duration.ofSeconds(1), 100), 10 * MS, 100 * MS);
        assertTrue(sub.spans(3, sub.aheadDemand(3), 10, 100));
        assertFalse(sub.spans(5, sub.aheadDemand(5), 10, 100), "a tie goes to a slice per frame");
        assertFalse(sub.spans(1, sub.aheadDemand(1), 10, 100), "fewer than two requests expected");
        assertFalse(sub.spans(3, sub.aheadDemand(3), 1, 100), "one frame");
        assertFalse(sub.spans(3, sub.aheadDemand(3), 101, 100), "more than a window's frames");
        assertTrue(sub.spans(3, 0, 10, 100), "no slice per frame at all (rounds too long for one): a span");
    }

    /**
     * The frames of an interval count as the whole interval, though each is the window over the sub-windows rounded
     * down: 60 sub-windows of 100 ms are 1,666,666 ns each, 99,999,960 ns in all.
     */
    @Test
    void aSpanOfAnIntervalsFramesExpectsTheIntervalsDemand() {
        SliceSizing sub = new SliceSizing(
                config(Algorithm.SLIDING_WINDOW_COUNTER, 1_000, Duration.ofMillis(100), 60), 1_666_666, 100 * MS);
        assertEquals(2.0, sub.spanDemand(2, 60));
        assertEquals(1.0, sub.spanDemand(2, 30), 1e-6);
    }
}
