package dev.sluice.lease;

import static dev.sluice.lease.LeaseTests.admitted;
import static dev.sluice.lease.LeaseTests.manual;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.TestClock;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.SharedStoreOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Claiming ahead (docs/leased-mode.md, "Claiming ahead"): the round claims, for keys with demand in the last interval,
 * the slices of the frames that start before the next round, so that requests in those frames find a slice held and
 * make no call. On a hand-moved clock over an in-memory counter store, with every call to the store logged.
 */
class LeasedClaimAheadTest {

    private static final String KEY = "client:abc";
    private static final long ORACLE_LIMIT = 1L << 40;

    private final TestClock clock = new TestClock("2026-01-01T12:00:00.600Z");
    private final InMemoryCounterStore shared = InMemoryCounterStore.create();

    private RateLimiter limiter(LeasedStore store, Algorithm algorithm, long limit, Duration window) {
        return LeaseTests.limiter(store, clock, algorithm, limit, window);
    }

    /**
     * A probe's limiter ({@link LeasedStore#bindProbe}) claims as any other, on its requests and ahead, and its claims
     * are counted apart: the stats' claims and claims ahead are the requests' alone.
     */
    @Test
    void aProbesClaimsAreCountedApart() {
        FlakyCounterStore toA = new FlakyCounterStore(shared);
        LeasedStore a = manual(toA, Duration.ofMillis(500));
        RateLimiter requests = limiter(a, Algorithm.FIXED_WINDOW, 20, Duration.ofSeconds(1));
        RateLimiter probe = a.bindProbe(
                new LimiterConfig(Algorithm.FIXED_WINDOW, 1_000, Duration.ofSeconds(1), clock, false, 1, false));

        // at :00.600 the probe claims 1, then 2 on its requests; a request claims 1 on its own
        assertEquals(3, admitted(probe, "sluice-health:0", 3));
        assertEquals(1, admitted(requests, KEY, 1));
        assertEquals(List.of("load(1)", "cas(1)[true]", "cas(1)[true]", "load(1)", "cas(1)[true]"), toA.takeLog());
        assertEquals(1, a.stats().claims());
        assertEquals(2, a.stats().probeClaims());

        // at :00.700 a round claims ahead for both keys (the next window starts before the next round): one each
        clock.set(Instant.parse("2026-01-01T12:00:00.700Z"));
        a.refresh();
        assertEquals(1, a.stats().claimsAhead());
        assertEquals(3, a.stats().probeClaims());
        assertEquals(1, a.stats().claims());
    }

    /**
     * The worked example of claiming ahead: A and B on one key, a fixed window of 20 a second, a round every 500 ms.
     * Slices as {@code granted(used)}, then {@code +n} for a slice claimed ahead for the next window; the store's
     * count per window.
     */
    @Test
    void theWorkedExample() {
        FlakyCounterStore toA = new FlakyCounterStore(shared);
        FlakyCounterStore toB = new FlakyCounterStore(shared);
        LeasedStore a = manual(toA, Duration.ofMillis(500));
        LeasedStore b = manual(toB, Duration.ofMillis(500));
        RateLimiter atA = limiter(a, Algorithm.FIXED_WINDOW, 20, Duration.ofSeconds(1));
        RateLimiter atB = limiter(b, Algorithm.FIXED_WINDOW, 20, Duration.ofSeconds(1));

        // 1. at :00.600 A gets 3 requests: cold start as ever, it reads and claims on the requests (1, then 2)
        assertEquals(3, admitted(atA, KEY, 3));
        assertEquals(List.of("load(1)", "cas(1)[true]", "cas(1)[true]"), toA.takeLog());
        // 2. B gets 2: it reads 3 and claims 1, then 2
        assertEquals(2, admitted(atB, KEY, 2));
        assertEquals(List.of("load(1)", "cas(1)[true]", "cas(1)[true]"), toB.takeLog());
        assertEquals("3(3)", slice(atA));
        assertEquals("3(2)", slice(atB));
        assertEquals(Map.of(sec(0), 6L), stored(atA));

        // 3. at :00.700 a round at B, then at A: the next window starts at :01, before the next round (:01.200), so
        //    each claims its slice of it: its demand of the interval, 2 and 3, plus twice its square root, 5 and 7.
        //    B's write goes first; A's meets it (a conflict), A reads and claims again, and is cut to 5: claims ahead
        //    stop at half the limit. One write per instance (one per batch of keys), none on a request.
        clock.set(Instant.parse("2026-01-01T12:00:00.700Z"));
        b.refresh();
        a.refresh();
        assertEquals(List.of("cas(1)[true]"), toB.takeLog());
        assertEquals(List.of("cas(1)[false]", "load(1)", "cas(1)[true]"), toA.takeLog());
        assertEquals("3(3)+5", slice(atA));
        assertEquals("3(2)+5", slice(atB));
        assertEquals(Map.of(sec(0), 6L, sec(1), 10L), stored(atA));
        assertEquals(5, a.unusedPermits(), "the slice claimed ahead is held unused");
        assertEquals(6, b.unusedPermits());
        assertEquals(1, a.stats().claimsAhead());
        assertEquals(1, b.stats().claimsAhead());

        // 4. at :01.100 the window has turned: A's 3 requests and B's 2 are admitted from the slices claimed ahead,
        //    with no call. B's unused 1 of the old window lapses with it (a fixed window does not count its past).
        clock.set(Instant.parse("2026-01-01T12:00:01.100Z"));
        long claimsA = a.stats().claims();
        long claimsB = b.stats().claims();
        assertEquals(3, admitted(atA, KEY, 3));
        assertEquals(2, admitted(atB, KEY, 2));
        assertEquals(List.of(), toA.takeLog());
        assertEquals(List.of(), toB.takeLog());
        assertEquals(claimsA, a.stats().claims(), "no claim on a request");
        assertEquals(claimsB, b.stats().claims(), "no claim on a request");
        assertEquals("5(3)", slice(atA));
        assertEquals("5(2)", slice(atB));

        // 5. A gets 3 more: 2 from its slice; the third finds it spent and claims on the request, as without claims
        //    ahead: its demand in this interval, 6
        assertEquals(3, admitted(atA, KEY, 3));
        assertEquals(List.of("cas(1)[true]"), toA.takeLog());
        assertEquals(claimsA + 1, a.stats().claims());
        assertEquals("11(6)", slice(atA));
        assertEquals(Map.of(sec(1), 16L), stored(atA));

        // 6. a round at :01.200: the next window starts after the next round: nothing to claim, nothing to give back
        clock.set(Instant.parse("2026-01-01T12:00:01.200Z"));
        a.refresh();
        b.refresh();
        assertEquals(List.of(), toA.takeLog());
        assertEquals(List.of(), toB.takeLog());

        // 7. a round at :01.700: neither had a request in the interval, so neither claims the window of :02 ahead,
        //    and both give back what they hold unused (A 5, B 3)
        clock.set(Instant.parse("2026-01-01T12:00:01.700Z"));
        a.refresh();
        b.refresh();
        assertEquals(List.of("cas(1)[true]"), toA.takeLog());
        assertEquals(List.of("cas(1)[false]", "load(1)", "cas(1)[true]"), toB.takeLog());
        assertEquals(Map.of(sec(1), 8L), stored(atA));
        assertEquals(0, a.unusedPermits() + b.unusedPermits());

        // 8. at :02.100 B gets a request: it holds nothing in this window, so it claims on the request
        clock.set(Instant.parse("2026-01-01T12:00:02.100Z"));
        assertEquals(1, admitted(atB, KEY, 1));
        assertEquals(List.of("cas(1)[true]"), toB.takeLog());
        assertEquals(Map.of(sec(2), 1L), stored(atB));
    }

    /**
     * A slice claimed ahead counts against every window its frame falls in, and a claim made later in the current
     * frame counts the slices claimed ahead of the frames it shares a window with. Sub-window counter, 40 a second,
     * sub-windows of 100 ms, a round every 300 ms. If the request's claim looked at the current frame only, B would
     * get 34 and the sub-window of :00.3 would start with 54 counted.
     */
    @Test
    void aClaimInTheCurrentFrameCountsTheSlicesClaimedAheadOfLaterFrames() {
        clock.set(Instant.parse("2026-01-01T12:00:00.050Z"));
        FlakyCounterStore toA = new FlakyCounterStore(shared);
        FlakyCounterStore toB = new FlakyCounterStore(shared);
        LeasedStore a = manual(toA, Duration.ofMillis(300));
        LeasedStore b = manual(toB, Duration.ofMillis(300));
        RateLimiter atA = limiter(a, Algorithm.SLIDING_WINDOW_COUNTER, 40, Duration.ofSeconds(1));
        RateLimiter atB = limiter(b, Algorithm.SLIDING_WINDOW_COUNTER, 40, Duration.ofSeconds(1));

        assertTrue(atA.tryAcquire(KEY, 6).allowed());
        assertEquals(List.of("load(1)", "cas(1)[true]"), toA.takeLog());

        // a round at :00.060 claims ahead for the sub-windows of :00.1, :00.2 and :00.3 (all start before :00.360):
        // 6 a round is 2 a sub-window, so slices of 2 + 2·√2 → 5; the third is cut to 4 so that the sub-window of
        // :00.3 starts with no more than half the limit counted (6 + 5 + 5 + 4 = 20)
        clock.set(Instant.parse("2026-01-01T12:00:00.060Z"));
        a.refresh();
        assertEquals(List.of("cas(1)[true]"), toA.takeLog());
        assertEquals(Map.of(sub(0), 6L, sub(1), 5L, sub(2), 5L, sub(3), 4L), stored(atA));
        assertEquals(14, a.unusedPermits());

        // B asks for 25 at :00.070: now 34 are left, but at :00.3 only 20 will be, so B may claim 20: it claims them
        // and the request is refused; a request for 20 is then admitted from B's slice, with no call
        clock.set(Instant.parse("2026-01-01T12:00:00.070Z"));
        assertFalse(atB.tryAcquire(KEY, 25).allowed());
        assertEquals(List.of("load(1)", "cas(1)[true]"), toB.takeLog());
        assertTrue(atB.tryAcquire(KEY, 20).allowed());
        assertEquals(List.of(), toB.takeLog());
        assertEquals(Map.of(sub(0), 26L, sub(1), 5L, sub(2), 5L, sub(3), 4L), stored(atA));

        // at :00.300 A's 4 are its slice: admitted with no call. The slices of :00.1 and :00.2 passed unused: A gives
        // them back with its next write
        clock.set(Instant.parse("2026-01-01T12:00:00.300Z"));
        assertTrue(atA.tryAcquire(KEY, 4).allowed());
        assertEquals(List.of(), toA.takeLog());
        assertEquals(10, a.unusedPermits());
    }

    /**
     * An instance that dies holding slices claimed ahead blocks the others only until those slices' frames stop
     * counting: here the sub-windows of :00.1 to :00.3, until :01.1 to :01.3.
     */
    @Test
    void slicesClaimedAheadByAnInstanceThatDiesLapseWithTheirFrames() {
        clock.set(Instant.parse("2026-01-01T12:00:00.050Z"));
        FlakyCounterStore toA = new FlakyCounterStore(shared);
        LeasedStore dead = manual(toA, Duration.ofMillis(300));
        RateLimiter atDead = limiter(dead, Algorithm.SLIDING_WINDOW_COUNTER, 40, Duration.ofSeconds(1));
        assertTrue(atDead.tryAcquire(KEY, 6).allowed());
        clock.set(Instant.parse("2026-01-01T12:00:00.060Z"));
        dead.refresh(); // claims 5, 5 and 4 ahead, then dies: no round, no close
        assertEquals(14, dead.unusedPermits());

        RateLimiter alive = limiter(
                manual(new FlakyCounterStore(shared), Duration.ofMillis(300)),
                Algorithm.SLIDING_WINDOW_COUNTER,
                40,
                Duration.ofSeconds(1));
        clock.set(Instant.parse("2026-01-01T12:00:01.000Z")); // the 6 used at :00.0 no longer count; the 14 do
        assertTrue(alive.tryAcquire(KEY, 26).allowed());
        assertFalse(alive.tryAcquire(KEY, 1).allowed());
        clock.set(Instant.parse("2026-01-01T12:00:01.300Z")); // the last of the dead slices has stopped counting
        assertTrue(alive.tryAcquire(KEY, 14).allowed());
        assertFalse(alive.tryAcquire(KEY, 1).allowed());
    }

    /**
     * Steady state: three keys, each asked every 3 ms, rounds exactly at every interval. Once a round has claimed
     * ahead, no request claims: every round is one call for the three keys (a batch), and nothing else calls the
     * store. For the fixed window and the sliding tail a window of 100 ms and a round every 100 ms; for the sub-window
     * counter sub-windows of 100 ms and a round every 300 ms (three sub-windows claimed ahead per round). Closing the
     * store gives back the slices claimed ahead: the store then counts exactly what was admitted.
     */
    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void inTheSteadyStateRequestsMakeNoClaimOfTheirOwn(Algorithm algorithm) {
        boolean subWindows = algorithm == Algorithm.SLIDING_WINDOW_COUNTER;
        long interval = subWindows ? 300 : 100;
        Duration window = subWindows ? Duration.ofSeconds(1) : Duration.ofMillis(100);
        clock.set(Instant.parse("2026-01-01T12:00:00Z"));
        FlakyCounterStore to = new FlakyCounterStore(shared);
        LeasedStore store = manual(to, Duration.ofMillis(interval));
        RateLimiter limiter = limiter(store, algorithm, 100_000, window);
        String[] keys = {"a", "b", "c"};
        long claims = 0;
        List<Long> admittedAt = new ArrayList<>();
        for (int ms = 1; ms <= 3_000; ms++) {
            clock.set(Instant.parse("2026-01-01T12:00:00Z").plusMillis(ms));
            if (ms % interval == 0) {
                to.takeLog();
                store.refresh();
                if (ms >= 2 * interval) {
                    assertEquals(List.of("cas(3)[true][true][true]"), to.takeLog(), "the round at " + ms + " ms");
                }
                if (ms == 2 * interval) {
                    claims = store.stats().claims();
                }
            }
            assertTrue(limiter.tryAcquire(keys[ms % 3]).allowed());
            admittedAt.add((long) ms);
            if (ms >= 2 * interval) {
                assertEquals(List.of(), to.takeLog(), "the request at " + ms + " ms");
            }
        }
        assertEquals(claims, store.stats().claims(), "claims on requests after the second round");
        assertTrue(store.stats().claimsAhead() >= 3 * (3_000 / interval - 1));

        long unused = store.unusedPermits();
        assertTrue(unused > 0);
        long counted = 0;
        for (String k : keys) {
            counted += total(limiter, k);
        }
        long lifetime = algorithm == Algorithm.SLIDING_TAIL ? 200 : subWindows ? 1_000 : 100;
        long live = admittedAt.stream()
                .filter(ms -> ms / 100 * 100 + lifetime > 3_000)
                .count();
        assertEquals(live + unused, counted, "the store counts what was admitted plus what is held");
        store.close();
        counted = 0;
        for (String k : keys) {
            counted += total(limiter, k);
        }
        assertEquals(live, counted, "once closed, exactly what was admitted");
    }

    /**
     * Rounds come late: a background round runs an interval after the last one ended, so with rounds that take time
     * they come more than an interval apart. Here every 113 ms with an interval of 100 ms and a window of 100 ms (the
     * sliding tail counting two): a window that starts in the 13 ms after the interval would find no slice claimed
     * ahead if the round claimed only an interval ahead, and its first request would claim. The round claims as far
     * ahead as the last round came late, so after the first rounds no request claims, and the store counts what was
     * admitted plus what is held.
     */
    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_TAIL"})
    void roundsThatComeLateStillClaimEveryWindowAhead(Algorithm algorithm) {
        clock.set(Instant.parse("2026-01-01T12:00:00Z"));
        FlakyCounterStore to = new FlakyCounterStore(shared);
        LeasedStore store = manual(to, Duration.ofMillis(100));
        RateLimiter limiter = limiter(store, algorithm, 100_000, Duration.ofMillis(100));
        String[] keys = {"a", "b", "c"};
        long claims = 0;
        List<Long> admittedAt = new ArrayList<>();
        for (int ms = 1; ms <= 3_000; ms++) {
            clock.set(Instant.parse("2026-01-01T12:00:00Z").plusMillis(ms));
            if (ms % 113 == 0) {
                store.refresh();
                if (ms == 3 * 113) {
                    claims = store.stats().claims();
                }
            }
            to.takeLog();
            assertTrue(limiter.tryAcquire(keys[ms % 3]).allowed());
            admittedAt.add((long) ms);
            if (ms > 3 * 113) {
                assertEquals(List.of(), to.takeLog(), "the request at " + ms + " ms");
            }
        }
        assertEquals(claims, store.stats().claims(), "claims on requests after the third round");

        store.refresh(); // every lease in the frame of the last request, each slice of an older one given back
        assertCountsAdmittedPlusHeld(
                store, limiter, keys, admittedAt, 100, algorithm == Algorithm.SLIDING_TAIL ? 200 : 100);
    }

    /**
     * Sparse keys (docs/leased-mode.md, "Sparse keys"): three keys, each asked once every 350 ms (less than once per
     * interval), a window of 1 s (10 sub-windows of 100 ms for the sub-window counter), a round every 100 ms. Once the
     * first second has passed, no request calls the store: the round keeps each key's slice between its requests and
     * tops it up (or claims its next sub-window ahead) in its one batched write, at most one call a round. The store
     * counts what was admitted plus what is held, and once closed exactly what was admitted.
     */
    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void aSparseKeyIsCoveredFromMemoryWithAtMostOneCallPerRound(Algorithm algorithm) {
        boolean subWindows = algorithm == Algorithm.SLIDING_WINDOW_COUNTER;
        clock.set(Instant.parse("2026-01-01T12:00:00Z"));
        FlakyCounterStore to = new FlakyCounterStore(shared);
        LeasedStore store = manual(to, Duration.ofMillis(100));
        RateLimiter limiter = limiter(store, algorithm, 1_000, Duration.ofSeconds(1));
        String[] keys = {"a", "b", "c"};
        List<Long> admittedAt = new ArrayList<>();
        for (int ms = 1; ms <= 3_000; ms++) {
            clock.set(Instant.parse("2026-01-01T12:00:00Z").plusMillis(ms));
            if (ms % 100 == 0) {
                to.takeLog();
                store.refresh();
                List<String> round = to.takeLog();
                if (ms > 1_000) {
                    assertTrue(
                            round.size() <= 1 && !round.toString().contains("false"),
                            "the round at " + ms + ": " + round);
                }
            }
            for (int k = 0; k < keys.length; k++) {
                if ((ms + 117 * k) % 350 == 0) {
                    assertTrue(limiter.tryAcquire(keys[k]).allowed());
                    admittedAt.add((long) ms);
                    if (ms > 1_000) {
                        assertEquals(List.of(), to.takeLog(), "the request on " + keys[k] + " at " + ms + " ms");
                    }
                }
            }
        }
        assertCountsAdmittedPlusHeld(
                store,
                limiter,
                keys,
                admittedAt,
                subWindows ? 100 : 1_000,
                algorithm == Algorithm.SLIDING_TAIL ? 2_000 : 1_000);
    }

    /**
     * At 3 s: the store counts, in the frames that still count (of {@code frameMs}, counting for {@code lifetimeMs}),
     * what was admitted at {@code admittedAt} plus what the instance holds unused; once the store is closed, exactly
     * what was admitted.
     */
    private void assertCountsAdmittedPlusHeld(
            LeasedStore store,
            RateLimiter limiter,
            String[] keys,
            List<Long> admittedAt,
            long frameMs,
            long lifetimeMs) {
        long live = admittedAt.stream()
                .filter(ms -> ms / frameMs * frameMs + lifetimeMs > 3_000)
                .count();
        long counted = 0;
        for (String k : keys) {
            counted += live(limiter, k, lifetimeMs);
        }
        assertEquals(live + store.unusedPermits(), counted, "the store counts what was admitted plus what is held");
        store.close();
        counted = 0;
        for (String k : keys) {
            counted += live(limiter, k, lifetimeMs);
        }
        assertEquals(live, counted, "once closed, exactly what was admitted");
    }

    /**
     * A sub-window's slice claimed ahead is held to the sub-window's end (docs/leased-mode.md, "Sparse keys"): a key
     * asked once in one interval and not in the next still finds, in the sub-window claimed ahead for it, the slice
     * claimed for that sub-window. The round after the quiet interval neither gives the slice back (a write) nor
     * leaves the next request to claim it again (another); the round after the sub-window ends gives back what it
     * did not use. Sub-windows of 100 ms, a round every 100 ms.
     */
    @Test
    void aSubWindowsSliceClaimedAheadIsHeldToItsEndThroughAQuietInterval() {
        clock.set(Instant.parse("2026-01-01T12:00:00.050Z"));
        FlakyCounterStore to = new FlakyCounterStore(shared);
        LeasedStore store = manual(to, Duration.ofMillis(100));
        RateLimiter limiter = limiter(store, Algorithm.SLIDING_WINDOW_COUNTER, 1_000, Duration.ofSeconds(1));

        assertEquals(1, admitted(limiter, KEY, 1)); // cold start: read and claim on the request
        assertEquals(List.of("load(1)", "cas(1)[true]"), to.takeLog());
        clock.set(Instant.parse("2026-01-01T12:00:00.100Z"));
        store.refresh(); // demand in the interval: the sub-window of :00.200 is claimed ahead, 1 + 2 = 3
        assertEquals(List.of("cas(1)[true]"), to.takeLog());
        assertEquals("0(0)+3", slice(limiter));

        clock.set(Instant.parse("2026-01-01T12:00:00.200Z"));
        store.refresh(); // a quiet interval, but the sub-window's slice lasts no longer than the next round: kept
        assertEquals(List.of(), to.takeLog(), "the round after a quiet interval makes no call");
        assertEquals("3(0)", slice(limiter));
        clock.set(Instant.parse("2026-01-01T12:00:00.250Z"));
        long claims = store.stats().claims();
        assertEquals(1, admitted(limiter, KEY, 1));
        assertEquals(List.of(), to.takeLog(), "the request is covered by the slice claimed ahead");
        assertEquals(claims, store.stats().claims());

        clock.set(Instant.parse("2026-01-01T12:00:00.300Z"));
        // the sub-window ended: its unused 2 go back in the write that claims the next one ahead; the key, asked again
        // within four intervals, is now kept, so the same write also tops up the current sub-window
        store.refresh();
        assertEquals(List.of("cas(1)[true]"), to.takeLog());
        assertEquals(Map.of(sub(0), 1L, sub(2), 1L, sub(3), 3L, sub(4), 3L), stored(limiter));
        store.close();
        assertEquals(Map.of(sub(0), 1L, sub(2), 1L), stored(limiter), "once closed, exactly what was admitted");
    }

    /** The counts of the record of {@code key} in the frames that still count at 12:00:03. */
    private long live(RateLimiter limiter, String key, long lifetimeMs) {
        long c = 0;
        for (Map.Entry<Long, Long> e : shared.read(new CounterKey(SharedStoreOptions.shape(limiter.config()), key))
                .counters()
                .entrySet()) {
            if (e.getKey() + lifetimeMs * 1_000_000L > sec(3)) {
                c += e.getValue();
            }
        }
        return c;
    }

    private Map<Long, Long> stored(RateLimiter limiter) {
        return shared.read(new CounterKey(SharedStoreOptions.shape(limiter.config()), KEY))
                .counters();
    }

    private long total(RateLimiter limiter, String key) {
        return shared.read(new CounterKey(SharedStoreOptions.shape(limiter.config()), key))
                .total();
    }

    /** The frame of the second {@code s} after 12:00:00, in nanoseconds since the epoch. */
    private static long sec(int s) {
        return Instant.parse("2026-01-01T12:00:00Z").plusSeconds(s).getEpochSecond() * 1_000_000_000L;
    }

    /** The sub-window of 100 ms number {@code n} after 12:00:00. */
    private static long sub(int n) {
        return sec(0) + n * 100_000_000L;
    }

    private static String slice(RateLimiter limiter) {
        LeasedLimiter.Held h = ((LeasedLimiter) limiter).inspect(KEY);
        if (h == null) {
            return "-";
        }
        long ahead = h.ahead().values().stream().mapToLong(Long::longValue).sum();
        return h.granted() + "(" + h.used() + ")" + (ahead > 0 ? "+" + ahead : "");
    }

    /**
     * Claims ahead under concurrency: four instances on one key, each with two threads requesting while its round
     * runs on a third, through four window turns (forty sub-window turns) in steps of 25 ms, seconds below the limit
     * and seconds far over it in turn, a round due every 100 ms, so that rounds claim ahead and give back while requests spend, and frames start on slices claimed
     * ahead. Every request of a step is decided at the step's time, so an exact limiter told what each step admitted
     * gives the algorithm's measure of the admitted traffic: it never passes the limit. The threads are released
     * together by a latch per step; the counts are exact, the interleaving is whatever the machine makes of it.
     */
    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void concurrentRequestsAndRoundsAcrossFrameTurnsNeverPassTheLimit(Algorithm algorithm) throws Exception {
        concurrentRequestsAndRounds(algorithm, 50, 10, 8);
    }

    /**
     * The same with spans (docs/leased-mode.md, "Spans"): the sub-window counter in 100 sub-windows of 10 ms, so that
     * a round claims ahead the ten that start before the next one, a limit of 400 a second, and the seconds below it
     * sparse (each thread asks in about one step of two: 40 a second per instance, 160 in all): a span each round
     * rather than ten slices.
     */
    @Test
    void concurrentRequestsAndRoundsOnSpansNeverPassTheLimit() throws Exception {
        concurrentRequestsAndRounds(Algorithm.SLIDING_WINDOW_COUNTER, 400, 100, 2);
    }

    /**
     * @param limit      the limit per second
     * @param subWindows the sub-window counter's sub-windows
     * @param sparse     in a second below the limit, each thread asks once in a step with a chance of 1 in this
     */
    private void concurrentRequestsAndRounds(Algorithm algorithm, long limit, int subWindows, int sparse)
            throws Exception {
        int instances = 4;
        int threadsPer = 2;
        List<LeasedStore> stores = new ArrayList<>();
        List<RateLimiter> limiters = new ArrayList<>();
        for (int j = 0; j < instances; j++) {
            LeasedStore s = LeasedStore.builder(shared)
                    .interval(Duration.ofMillis(100))
                    .manualRounds()
                    .build();
            stores.add(s);
            RateLimiterBuilder b = RateLimiter.builder(algorithm).limit(limit, Duration.ofSeconds(1));
            if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
                b.buckets(subWindows);
            }
            limiters.add(b.clock(clock).store(s).build());
        }
        RateLimiterBuilder exact = RateLimiter.builder(algorithm).limit(ORACLE_LIMIT, Duration.ofSeconds(1));
        if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
            exact.buckets(subWindows);
        }
        RateLimiter oracle = exact.clock(clock).build();
        ExecutorService pool = Executors.newFixedThreadPool(instances * (threadsPer + 1));
        Random seeds = new Random(7);
        long admittedInAll = 0;
        try {
            for (int step = 0; step < 160; step++) {
                // a second below the limit (which rounds claim ahead for), then a second far
                // over it (about 2,400 a second, which spends every slice and is refused), and so on
                boolean heavy = (step / 40) % 2 == 1;
                AtomicLong admitted = new AtomicLong();
                CountDownLatch go = new CountDownLatch(1);
                List<Future<?>> running = new ArrayList<>();
                for (int j = 0; j < instances; j++) {
                    RateLimiter limiter = limiters.get(j);
                    for (int t = 0; t < threadsPer; t++) {
                        Random random = new Random(seeds.nextLong());
                        int requests = heavy ? random.nextInt(16) : random.nextInt(sparse) == 0 ? 1 : 0;
                        running.add(pool.submit(() -> {
                            go.await();
                            for (int r = 0; r < requests; r++) {
                                if (limiter.tryAcquire(KEY).allowed()) {
                                    admitted.incrementAndGet();
                                }
                            }
                            return null;
                        }));
                    }
                    LeasedStore store = stores.get(j);
                    boolean round = step % 4 == j % 4; // each instance's round every 100 ms, the four staggered
                    running.add(pool.submit(() -> {
                        go.await();
                        if (round) {
                            store.refresh();
                        }
                        return null;
                    }));
                }
                go.countDown();
                for (Future<?> f : running) {
                    f.get(1, TimeUnit.MINUTES);
                }
                long n = admitted.get();
                admittedInAll += n;
                if (n > 0) {
                    oracle.tryAcquire(KEY, n);
                    long measure = ORACLE_LIMIT - oracle.peek(KEY, 1).remaining();
                    assertTrue(measure <= limit, algorithm + " admitted " + measure + " at step " + step);
                }
                clock.advance(Duration.ofMillis(25));
            }
        } finally {
            pool.shutdownNow();
        }
        long ahead = stores.stream().mapToLong(s -> s.stats().claimsAhead()).sum();
        assertTrue(ahead > 0, "rounds must have claimed ahead");
        assertTrue(admittedInAll >= 2 * limit, "the limit was reached in more than one window: " + admittedInAll);
        for (LeasedStore s : stores) {
            assertEquals(0, s.stats().storeFailures(), "store failures at " + s);
            s.close();
        }
    }
}
