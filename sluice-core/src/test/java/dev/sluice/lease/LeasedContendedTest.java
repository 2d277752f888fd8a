package dev.sluice.lease;

import static dev.sluice.lease.LeaseTests.admitted;
import static dev.sluice.lease.LeaseTests.manual;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.TestClock;
import dev.sluice.lease.LeasedLimiter.Held;
import dev.sluice.memory.InMemoryCounterStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/**
 * Contended keys (docs/leased-mode.md, "Contended keys"): short claims for a key refused here, starvation for a tenth
 * of a window rather than until the next round, and no claims ahead where the slice would wait unused. On a hand-moved
 * clock over an in-memory counter store, with every call to the store logged.
 */
class LeasedContendedTest {

    private static final String KEY = "client:abc";

    private final TestClock clock = new TestClock("2026-01-01T12:00:00.100Z");
    private final InMemoryCounterStore shared = InMemoryCounterStore.create();

    private RateLimiter limiter(LeasedStore store, Algorithm algorithm, long limit, Duration window) {
        return LeaseTests.limiter(store, clock, algorithm, limit, window);
    }

    private void at(String time) {
        clock.set(Instant.parse("2026-01-01T12:00:" + time + "Z"));
    }

    /**
     * A fixed window of 100 a second, a round every second. A was refused in the last interval, so in the next window
     * its claim is sized for a tenth of the window (its demand of 20 per interval: 2), not for the 0.9 s the window has
     * left (18), which it might leave unused while others are refused.
     */
    @Test
    void aKeyRefusedHereClaimsForATenthOfTheWindow() {
        FlakyCounterStore toA = new FlakyCounterStore(shared);
        FlakyCounterStore toB = new FlakyCounterStore(shared);
        LeasedStore a = manual(toA, Duration.ofSeconds(1));
        LeasedStore b = manual(toB, Duration.ofSeconds(1));
        RateLimiter atA = limiter(a, Algorithm.FIXED_WINDOW, 100, Duration.ofSeconds(1));
        RateLimiter atB = limiter(b, Algorithm.FIXED_WINDOW, 100, Duration.ofSeconds(1));

        assertTrue(atB.tryAcquire(KEY, 90).allowed());
        assertEquals(9, admitted(atA, KEY, 20), "A gets 9 of the 10 B left (1 is not worth a claim), and is refused");

        at("01.000");
        a.refresh();
        toA.takeLog();
        at("01.100");
        assertTrue(atA.tryAcquire(KEY).allowed());
        assertEquals(List.of("cas(1)[true]"), toA.takeLog());
        LeasedLimiter.Held held = ((LeasedLimiter) atA).inspect(KEY);
        assertEquals(2, held == null ? -1 : held.granted(), "20 a second, for a tenth of a second");
        assertEquals(1, held == null ? -1 : held.used());
    }

    /**
     * A sliding tail of 10 a second, a round every second. B spent the window of :00. At :01.2 A asks for 5: the
     * previous window still weighs 0.8, so 2 are left; A claims them, is refused, and is starved for a tenth of the
     * window: a request within it makes no call. At :01.5 the previous window weighs 0.5, the record as last read shows
     * room for the 3 more A needs, and A claims them: before the next round, which would have been the first chance
     * before.
     */
    @Test
    void aStarvedKeyClaimsAgainAfterATenthOfTheWindowAsTheSlidingWindowFreesRoom() {
        FlakyCounterStore toA = new FlakyCounterStore(shared);
        FlakyCounterStore toB = new FlakyCounterStore(shared);
        LeasedStore a = manual(toA, Duration.ofSeconds(1));
        LeasedStore b = manual(toB, Duration.ofSeconds(1));
        RateLimiter atA = limiter(a, Algorithm.SLIDING_TAIL, 10, Duration.ofSeconds(1));
        RateLimiter atB = limiter(b, Algorithm.SLIDING_TAIL, 10, Duration.ofSeconds(1));
        assertTrue(atB.tryAcquire(KEY, 10).allowed());

        at("01.200");
        Decision refused = atA.tryAcquire(KEY, 5);
        assertFalse(refused.allowed());
        assertEquals(List.of("load(1)", "cas(1)[true]"), toA.takeLog(), "a read, and a claim of the 2 left");
        assertEquals(
                Duration.ofMillis(200).plusNanos(1),
                refused.retryAfter(),
                "room for the 3 beyond A's slice once the previous window weighs less than 0.6");

        at("01.250");
        assertFalse(atA.tryAcquire(KEY, 5).allowed());
        assertEquals(List.of(), toA.takeLog(), "starved: refused without a call");

        at("01.500");
        assertTrue(atA.tryAcquire(KEY, 5).allowed());
        assertEquals(List.of("cas(1)[true]"), toA.takeLog(), "one claim, for the 3 freed since");
        assertFalse(atB.tryAcquire(KEY).allowed(), "the store counts 0.5 × 10 + 5: nothing left");
    }

    /**
     * A fixed window of 20 a second, a round every 500 ms (as in the worked example of claiming ahead). At the round
     * of :00.7 the window of :01 starts before the next round, and A had 3 requests: it would claim 3 + 2·√3 → 7 ahead.
     * But B holds 15 and A 3: the key has 2 left now, less than that slice. It is contended across the instances, and
     * A claims nothing ahead; its requests in the next window claim as they come.
     */
    @Test
    void aKeyWithLessRoomThanTheSliceAheadClaimsNothingAhead() {
        at("00.600");
        FlakyCounterStore toA = new FlakyCounterStore(shared);
        FlakyCounterStore toB = new FlakyCounterStore(shared);
        LeasedStore a = manual(toA, Duration.ofMillis(500));
        LeasedStore b = manual(toB, Duration.ofMillis(500));
        RateLimiter atA = limiter(a, Algorithm.FIXED_WINDOW, 20, Duration.ofSeconds(1));
        RateLimiter atB = limiter(b, Algorithm.FIXED_WINDOW, 20, Duration.ofSeconds(1));
        assertEquals(3, admitted(atA, KEY, 3));
        assertTrue(atB.tryAcquire(KEY, 15).allowed());

        at("00.700");
        a.refresh();
        assertEquals(0, a.stats().claimsAhead());
        LeasedLimiter.Held held = ((LeasedLimiter) atA).inspect(KEY);
        assertTrue(held != null && held.ahead().isEmpty(), "nothing held ahead: " + held);

        at("01.100");
        toA.takeLog();
        assertEquals(3, admitted(atA, KEY, 3));
        assertEquals(List.of("cas(1)[true]"), toA.takeLog(), "the new window's first request claims");
    }

    /**
     * A sub-window counter of 1,000 a second in 10 sub-windows, 3 requests an interval. With a round every 100 ms (a
     * tenth of the window) a sub-window expects 3 and is claimed ahead a slice of its own; with a round every second it
     * expects 0.3, more likely to pass empty than not, and gets no slice of its own: the round claims one span over the
     * next second's sub-windows instead, 3 + 2·√3 → 7 permits, counted in the record at its first and its last
     * sub-window (14 in all; at :01.01 the 3 admitted at :00.05 no longer count).
     */
    @Test
    void withRoundsLongerThanATenthOfTheWindowSparseFramesShareOneSpan() {
        Held shortRounds = heldAfterARoundWithThreeRequestsAnInterval(Duration.ofMillis(100));
        assertFalse(shortRounds.ahead().isEmpty(), "a slice per sub-window ahead: " + shortRounds);
        assertEquals(0, shortRounds.spans());

        Held longRounds = heldAfterARoundWithThreeRequestsAnInterval(Duration.ofSeconds(1));
        assertEquals(Map.of(), longRounds.ahead(), "no sub-window has a slice of its own");
        assertEquals(7, longRounds.spans());
        assertEquals(
                2 * 7, longRounds.global(), "the span at both of its ends (the 3 admitted at :00.05 count no more)");
    }

    private Held heldAfterARoundWithThreeRequestsAnInterval(Duration interval) {
        at("00.050");
        LeasedStore store = manual(new FlakyCounterStore(InMemoryCounterStore.create()), interval);
        RateLimiter limiter = limiter(store, Algorithm.SLIDING_WINDOW_COUNTER, 1_000, Duration.ofSeconds(1));
        assertEquals(3, admitted(limiter, KEY, 3));
        clock.set(clock.instant().plus(interval).minusMillis(40)); // the round, 10 ms into a sub-window
        store.refresh();
        assertEquals(1, store.stats().claimsAhead());
        Held held = ((LeasedLimiter) limiter).inspect(KEY);
        store.close();
        return Objects.requireNonNull(held);
    }

    /**
     * A claim writes without reading first when the record is as this instance last saw it, and a write on a changed
     * record is refused: three calls (the write, a read, the write again). A key that B writes between every two
     * claims of A's is stale at A more often than not, and from A's fifth claim on A reads it first: two calls. B stops
     * writing after A's seventh claim; A's reads then find the record as A left it, and after two of them (the ninth
     * and tenth claims) A writes without reading again.
     * Each request asks for twice the cost of the one before, so that every request claims.
     */
    @Test
    void aKeyAnotherInstanceKeepsWritingIsReadBeforeItIsWritten() {
        FlakyCounterStore toA = new FlakyCounterStore(shared);
        FlakyCounterStore toB = new FlakyCounterStore(shared);
        RateLimiter atA =
                limiter(manual(toA, Duration.ofSeconds(1)), Algorithm.FIXED_WINDOW, 1_000_000, Duration.ofHours(1));
        RateLimiter atB =
                limiter(manual(toB, Duration.ofSeconds(1)), Algorithm.FIXED_WINDOW, 1_000_000, Duration.ofHours(1));
        List<String> fresh = List.of("load(1)", "cas(1)[true]");
        List<String> stale = List.of("cas(1)[false]", "load(1)", "cas(1)[true]");
        List<String> blind = List.of("cas(1)[true]");
        List<List<String>> expected =
                List.of(fresh, stale, stale, stale, fresh, fresh, fresh, fresh, fresh, fresh, blind);
        long cost = 1;
        for (int turn = 0; turn < expected.size(); turn++, cost *= 2) {
            assertTrue(atA.tryAcquire(KEY, cost).allowed());
            assertEquals(expected.get(turn), toA.takeLog(), "A's claim " + (turn + 1));
            if (turn < 7) {
                assertTrue(atB.tryAcquire(KEY, cost).allowed());
            }
        }
    }

    /**
     * A sliding tail of 100 a second, a round every 100 ms. B spent the window of :00; from :01 on the window frees a
     * permit every 10 ms. At :01.010 A is flooded: it claims the one permit freed and is refused the rest, so the key
     * is contended here. At :01.050 the record as last read shows 4 freed since: fewer than the window frees in a tenth
     * of a window (10), the span a contended key's claims are sized for, so A is refused without a call rather than
     * claim a few permits at a time. At :01.110 there are 10, and one claim takes them all.
     */
    @Test
    void aContendedSlidingTailClaimsOnceTheWindowHasFreedATenthOfAWindowsWorth() {
        FlakyCounterStore toA = new FlakyCounterStore(shared);
        RateLimiter atA =
                limiter(manual(toA, Duration.ofMillis(100)), Algorithm.SLIDING_TAIL, 100, Duration.ofSeconds(1));
        RateLimiter atB = limiter(
                manual(new FlakyCounterStore(shared), Duration.ofMillis(100)),
                Algorithm.SLIDING_TAIL,
                100,
                Duration.ofSeconds(1));
        at("00.500");
        assertTrue(atB.tryAcquire(KEY, 100).allowed());

        at("01.010");
        assertEquals(1, admitted(atA, KEY, 50));
        assertEquals(List.of("load(1)", "cas(1)[true]"), toA.takeLog());

        at("01.050");
        assertEquals(0, admitted(atA, KEY, 20));
        assertEquals(List.of(), toA.takeLog(), "4 freed since: not yet worth a call");

        at("01.110");
        assertEquals(10, admitted(atA, KEY, 20));
        assertEquals(List.of("cas(1)[true]"), toA.takeLog(), "one claim for the 10 freed since");
    }

    /**
     * A sliding tail of 100 a second, a round every 100 ms; B spent the window of :00, and A is flooded from :01.010
     * on, so the key is contended at A. At :01.110 the window has freed 10 and A's claim takes them: a win. At :01.210
     * it has freed 10 more, but A, having won the last claim, waits for 12 and is refused without a call; B claims the
     * 10 first. At :01.330 there are 12, and A's claim takes them. Under a fixed rotation of requests the instance
     * first after each freeing instant used to take every claim (Jain's index 0.52 with 2 instances).
     */
    @Test
    void aContendedSlidingTailThatKeepsWinningClaimsWaitsForMoreRoomSoOthersClaimFirst() {
        FlakyCounterStore toA = new FlakyCounterStore(shared);
        FlakyCounterStore toB = new FlakyCounterStore(shared);
        RateLimiter atA =
                limiter(manual(toA, Duration.ofMillis(100)), Algorithm.SLIDING_TAIL, 100, Duration.ofSeconds(1));
        RateLimiter atB =
                limiter(manual(toB, Duration.ofMillis(100)), Algorithm.SLIDING_TAIL, 100, Duration.ofSeconds(1));
        at("00.500");
        assertTrue(atB.tryAcquire(KEY, 100).allowed());

        at("01.010");
        assertEquals(1, admitted(atA, KEY, 50), "the one permit freed; A is refused the rest");
        at("01.110");
        assertEquals(10, admitted(atA, KEY, 20));
        toA.takeLog();

        at("01.210");
        assertEquals(0, admitted(atA, KEY, 20));
        assertEquals(List.of(), toA.takeLog(), "10 freed, but A won the last claim: it waits for 12");
        toB.takeLog();
        assertEquals(10, admitted(atB, KEY, 20), "B claims the 10 first");

        at("01.330");
        assertEquals(12, admitted(atA, KEY, 20));
        assertEquals(List.of("cas(1)[false]", "load(1)", "cas(1)[true]"), toA.takeLog(), "one claim, after B's write");
    }
}
