package dev.sluice.lease;

import static dev.sluice.lease.LeaseTests.manual;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.JointDecision;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import dev.sluice.TestClock;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.SharedStoreOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Spans (docs/leased-mode.md, "Spans"): a sub-window counter key asked less than about once per sub-window holds one
 * slice good in every sub-window up to the next round, counted in the record at the span's first and last sub-window,
 * instead of a slice per sub-window. On a hand-moved clock over an in-memory counter store.
 */
class LeasedSpanTest {

    private static final String KEY = "client:abc";
    private static final long ORACLE_LIMIT = 1L << 40;
    private static final long MS = 1_000_000L;

    private final TestClock clock = new TestClock("2026-01-01T12:00:00.005Z");
    private final InMemoryCounterStore shared = InMemoryCounterStore.create();

    /**
     * One instance, a sub-window counter of 100 a second in 100 sub-windows of 10 ms, a round every 100 ms: three
     * requests an interval, each in a sub-window of its own.
     *
     * <ol>
     *   <li>:00.005, the key's first request: it reads the record and claims 1 in the sub-window of :00.000.
     *   <li>:00.025: the slice is spent, and the key has been asked twice in this interval: the claim takes a span from
     *       this sub-window to the one of the next round (:00.020 to :00.120, 11 sub-windows), 2 + 2·√2 → 5 permits,
     *       counted at :00.020 and again at :00.120. A slice per sub-window would hold 2 in each, 22 in all.
     *   <li>:00.065: from the span, no call.
     *   <li>The round at :00.100 writes the two requests taken from the span into their own sub-windows (:00.020 and
     *       :00.060) and takes them off both ends, and claims the next span in the same write, from the sub-window
     *       after the first span's last to the one of the next round (:00.130 to :00.200), for the 3 requests of the
     *       interval scaled to its 8 sub-windows: 2.4 + 2·√2.4 → 6.
     *   <li>:00.125 and :00.135: from the first span, then from the second, which starts where the first ends; no call.
     * </ol>
     */
    @Test
    void theWorkedExample() {
        FlakyCounterStore toA = new FlakyCounterStore(shared);
        LeasedStore a = manual(toA, Duration.ofMillis(100));
        RateLimiter limiter = limiter(a, 100, Duration.ofSeconds(1), 100);

        assertTrue(limiter.tryAcquire(KEY).allowed());
        assertEquals(List.of("load(1)", "cas(1)[true]"), toA.takeLog());
        assertEquals(Map.of(at(0), 1L), record(limiter));

        at("00.025");
        assertTrue(limiter.tryAcquire(KEY).allowed());
        assertEquals(List.of("cas(1)[true]"), toA.takeLog(), "one claim, for a span");
        assertEquals(Map.of(at(0), 1L, at(20), 5L, at(120), 5L), record(limiter));
        assertEquals(4, held(limiter).spans());

        at("00.065");
        assertTrue(limiter.tryAcquire(KEY).allowed());
        assertEquals(List.of(), toA.takeLog(), "from the span");
        assertEquals(3, held(limiter).spans());

        at("00.100");
        a.refresh();
        assertEquals(List.of("cas(1)[true]"), toA.takeLog(), "one write: the span's uses, and the next span");
        assertEquals(
                Map.of(at(0), 1L, at(20), 5L - 2 + 1, at(60), 1L, at(120), 5L - 2, at(130), 6L, at(200), 6L),
                record(limiter));
        assertEquals(3 + 6, held(limiter).spans());
        assertEquals(1, a.stats().claimsAhead());

        at("00.125");
        assertTrue(limiter.tryAcquire(KEY).allowed());
        at("00.135");
        assertTrue(limiter.tryAcquire(KEY).allowed());
        assertEquals(List.of(), toA.takeLog(), "from the first span, then the second");
        assertEquals(5, held(limiter).spans(), "the first span's 2 left go back with the next write");
        assertEquals(2, a.stats().spans(), "one span claimed on a request, one by the round");
        a.close();
        assertEquals(
                Map.of(at(0), 1L, at(20), 1L, at(60), 1L, at(120), 1L, at(130), 1L),
                record(limiter),
                "once closed, the record holds what was admitted, each in its own sub-window");
    }

    /**
     * A joint request over two limits that each hold a span (a limit per client and one per user, the sub-window
     * counter in 100 sub-windows of 10 ms, rounds every 100 ms): taken from both spans, in sub-windows that have no
     * slice of their own, with no call. Then the user's span is spent: a joint request that its span and its
     * sub-window cannot cover claims for the user's part alone, and takes from the client's span only once it is
     * admitted; the record of each key holds what was admitted, each permit in its own sub-window, once the instance
     * closes.
     */
    @Test
    void aJointRequestTakesFromBothSpansOrFromNeither() {
        FlakyCounterStore toA = new FlakyCounterStore(shared);
        LeasedStore a = manual(toA, Duration.ofMillis(100));
        RateLimiter perClient = limiter(a, 100, Duration.ofSeconds(1), 100);
        RateLimiter perUser = limiter(a, 100, Duration.ofSeconds(1), 100);
        // two requests on each key in this interval, in sub-windows of their own: the second claims a span
        for (String at : new String[] {"00.005", "00.025"}) {
            at(at);
            assertTrue(RateLimiter.tryAcquireAll(Acquisition.of(perClient, "c"), Acquisition.of(perUser, "u"))
                    .allowed());
        }
        toA.takeLog();
        assertEquals(4, heldOf(perClient, "c").spans());
        assertEquals(4, heldOf(perUser, "u").spans());

        at("00.045");
        JointDecision d = RateLimiter.tryAcquireAll(Acquisition.of(perClient, "c"), Acquisition.of(perUser, "u"));
        assertTrue(d.allowed(), d.toString());
        assertEquals(List.of(), toA.takeLog(), "both parts from their spans");
        assertEquals(3, heldOf(perClient, "c").spans());
        assertEquals(3, heldOf(perUser, "u").spans());

        at("00.055");
        assertTrue(perUser.tryAcquire("u", 3).allowed(), "the user's span spent alone");
        assertEquals(0, heldOf(perUser, "u").spans());
        toA.takeLog();
        at("00.065");
        JointDecision e = RateLimiter.tryAcquireAll(Acquisition.of(perClient, "c"), Acquisition.of(perUser, "u"));
        assertTrue(e.allowed(), e.toString());
        assertEquals(1, toA.takeLog().stream().filter(c -> c.startsWith("cas")).count(), "one claim: the user's");
        assertEquals(2, heldOf(perClient, "c").spans(), "the client's part from its span, once the user's was claimed");
        a.close();
        assertEquals(
                Map.of(at(0), 1L, at(20), 1L, at(40), 1L, at(60), 1L),
                record(perClient, "c"),
                "the client's admissions, each in its own sub-window");
        assertEquals(
                Map.of(at(0), 1L, at(20), 1L, at(40), 1L, at(50), 3L, at(60), 1L), record(perUser, "u"), "the user's");
    }

    /**
     * Safety with spans: three instances over one store, three keys, requests at random instants and instances with
     * costs of 1 or 2, some reserved and cancelled, some peeks, rounds at staggered times, the traffic sparse (where
     * spans are claimed), then far over the limit (where they are cut and refused), then sparse again. After every
     * step, for every window still to be measured (from the one ending now to the one ending a window later), the store's counts are never below what was admitted
     * in that window (each admission counted in its own sub-window); and at every admission the algorithm's own
     * measure of what was admitted (an exact limiter told each admission) stays within the limit.
     */
    @ParameterizedTest(name = "window {0} ms in {1}, rounds every {2} ms, limit {3}")
    @CsvSource({
        "1000, 100, 100, 400", // sub-windows of 10 ms, rounds a tenth of the window apart: spans on requests too
        "1000, 50, 100, 400", // sub-windows of 20 ms: five ahead per round
        "100, 10, 100, 40", // rounds as long as the window: spans claimed by rounds only
        "600, 120, 50, 200" // sub-windows of 5 ms, rounds every 50 ms
    })
    void theRecordNeverCountsLessThanWasAdmitted(long windowMs, int subWindows, long intervalMs, long limit) {
        Duration window = Duration.ofMillis(windowMs);
        Duration interval = Duration.ofMillis(intervalMs);
        long frame = window.toNanos() / subWindows;
        int n = 3;
        List<LeasedStore> stores = new ArrayList<>();
        List<RateLimiter> limiters = new ArrayList<>();
        for (int j = 0; j < n; j++) {
            LeasedStore s = manual(new FlakyCounterStore(shared), interval);
            stores.add(s);
            limiters.add(limiter(s, limit, window, subWindows));
        }
        RateLimiter oracle = RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER)
                .limit(ORACLE_LIMIT, window)
                .buckets(subWindows)
                .clock(clock)
                .build();
        String[] keys = {"k0", "k1", "k2"};
        Map<String, TreeMap<Long, Long>> admitted = new HashMap<>();
        List<Object[]> open = new ArrayList<>(); // not yet cancelled: key, frame, cost, reservation, the oracle's
        Random random = new Random(11);
        long start = clock.nanos();
        long[] nextRound = new long[n];
        for (int j = 0; j < n; j++) {
            nextRound[j] = start + intervalMs * MS * (j + 1) / n;
        }
        long stepNanos = 7 * MS;
        long steps = 12_000 * MS / stepNanos;
        long spansSeen = 0;
        for (long step = 0; step < steps; step++) {
            long now = start + step * stepNanos;
            boolean flood = step * stepNanos >= 4_000 * MS && step * stepNanos < 8_000 * MS;
            for (int j = 0; j < n; j++) {
                if (nextRound[j] <= now) {
                    clock.set(nanos(nextRound[j]));
                    stores.get(j).refresh();
                    nextRound[j] += intervalMs * MS;
                }
            }
            clock.set(nanos(now));
            for (int j = 0; j < n; j++) {
                for (String key : keys) {
                    // sparse: about 3 requests an interval per instance and key; a flood: one every step and more
                    double p = flood ? 1.0 : 3.0 * stepNanos / (intervalMs * MS);
                    if (random.nextDouble() >= p) {
                        continue;
                    }
                    RateLimiter limiter = limiters.get(j);
                    long cost = random.nextInt(10) == 0 ? 2 : 1;
                    int kind = random.nextInt(20);
                    boolean allowed;
                    if (kind == 0) {
                        limiter.peek(key, cost);
                        continue;
                    } else if (kind == 1) {
                        Reservation r = limiter.reserve(key, cost);
                        allowed = r.decision().allowed();
                        if (allowed) { // the exact limiter holds it too, and gives it back with it
                            open.add(new Object[] {key, (now / frame) * frame, cost, r, oracle.reserve(key, cost)});
                        }
                    } else {
                        allowed = limiter.tryAcquire(key, cost).allowed();
                        if (allowed) {
                            oracle.tryAcquire(key, cost);
                        }
                    }
                    if (allowed) {
                        admitted.computeIfAbsent(key, k -> new TreeMap<>())
                                .merge((now / frame) * frame, cost, Long::sum);
                        long measure = ORACLE_LIMIT - oracle.peek(key, 1).remaining();
                        assertTrue(measure <= limit, key + ": the measure " + measure + " at step " + step);
                    }
                    LeasedLimiter.Held h = ((LeasedLimiter) limiter).inspect(key);
                    if (h != null && h.spans() > 0) {
                        spansSeen++;
                    }
                }
            }
            if (!open.isEmpty() && random.nextInt(4) == 0) {
                Object[] o = open.remove(random.nextInt(open.size()));
                if (((Reservation) o[3]).cancel()) {
                    admitted.get((String) o[0]).merge((Long) o[1], -(Long) o[2], Long::sum);
                    assertTrue(((Reservation) o[4]).cancel());
                }
            }
            for (String key : keys) {
                assertCovers(
                        record(limiters.get(0), key),
                        admitted.getOrDefault(key, new TreeMap<>()),
                        now,
                        window.toNanos(),
                        frame,
                        key,
                        step);
            }
        }
        assertTrue(spansSeen > 100, "spans must have been held: " + spansSeen);
        assertTrue(stores.stream().mapToLong(st -> st.stats().spans()).sum() > 10, "spans must have been claimed");
        for (LeasedStore s : stores) {
            assertEquals(0, s.stats().storeFailures());
            s.close();
        }
        for (String key : keys) {
            assertCovers(
                    record(limiters.get(0), key),
                    admitted.getOrDefault(key, new TreeMap<>()),
                    clock.nanos(),
                    window.toNanos(),
                    frame,
                    key,
                    steps);
        }
    }

    /**
     * For every window still to be measured, from the one ending with the current sub-window to the one ending a
     * window later: the record's counts in the window are at least those admitted in it. (Older windows hold
     * sub-windows that no longer count, which the record drops.)
     */
    private static void assertCovers(
            Map<Long, Long> record,
            TreeMap<Long, Long> admitted,
            long now,
            long window,
            long frame,
            String key,
            long step) {
        long current = (now / frame) * frame;
        for (long g = current; g <= current + window; g += frame) {
            long stored = 0;
            for (Map.Entry<Long, Long> e : record.entrySet()) {
                if (e.getKey() > g - window && e.getKey() <= g) {
                    stored += e.getValue();
                }
            }
            long used = 0;
            for (long v : admitted.subMap(g - window, false, g, true).values()) {
                used += v;
            }
            assertTrue(
                    stored >= used,
                    key + ": the window ending with the sub-window at " + (g - current) / MS + " ms from now counts "
                            + stored + " in the store, " + used + " admitted, at step " + step);
        }
    }

    private RateLimiter limiter(LeasedStore store, long limit, Duration window, int subWindows) {
        return RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER)
                .limit(limit, window)
                .buckets(subWindows)
                .clock(clock)
                .store(store)
                .build();
    }

    /** The record of {@code key} in the store, its frames alone (no demand notes). */
    private Map<Long, Long> record(RateLimiter limiter, String key) {
        Map<Long, Long> frames = new TreeMap<>();
        for (Map.Entry<Long, Long> e : shared.read(new CounterKey(SharedStoreOptions.shape(limiter.config()), key))
                .counters()
                .entrySet()) {
            if (e.getKey() >= 0) {
                frames.put(e.getKey(), e.getValue());
            }
        }
        return frames;
    }

    private Map<Long, Long> record(RateLimiter limiter) {
        return record(limiter, KEY);
    }

    private static LeasedLimiter.Held heldOf(RateLimiter limiter, String key) {
        LeasedLimiter.Held h = ((LeasedLimiter) limiter).inspect(key);
        assertTrue(h != null, "a lease for " + key);
        return h;
    }

    private static LeasedLimiter.Held held(RateLimiter limiter) {
        LeasedLimiter.Held h = ((LeasedLimiter) limiter).inspect(KEY);
        assertTrue(h != null, "a lease for " + KEY);
        return h;
    }

    private void at(String secondsAndMillis) {
        clock.set(Instant.parse("2026-01-01T12:00:" + secondsAndMillis + "Z"));
    }

    /** The sub-window {@code ms} milliseconds after 12:00:00, in nanoseconds since the epoch. */
    private static long at(int ms) {
        return Instant.parse("2026-01-01T12:00:00Z").toEpochMilli() * MS + ms * MS;
    }

    private static Instant nanos(long epochNanos) {
        return Instant.ofEpochSecond(0, epochNanos);
    }
}
