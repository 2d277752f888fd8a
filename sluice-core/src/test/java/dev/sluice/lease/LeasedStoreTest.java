package dev.sluice.lease;

import static dev.sluice.lease.LeaseTests.admitted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.Reservation;
import dev.sluice.SluiceException;
import dev.sluice.TestAwait;
import dev.sluice.TestClock;
import dev.sluice.internal.Latches;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.SharedStoreOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Leased mode's semantics on a hand-moved clock, over an in-memory counter store. */
class LeasedStoreTest {

    private static final String KEY = "client:abc";
    private static final long L = 100;

    private final TestClock clock = new TestClock("2026-01-01T12:00:00Z");
    private final InMemoryCounterStore shared = InMemoryCounterStore.create();

    private static LeasedStore instance(InMemoryCounterStore counters) {
        return LeasedStore.builder(counters).manualRounds().build();
    }

    private RateLimiter limiter(LeasedStore store, Algorithm algorithm, long limit, Duration window) {
        return LeaseTests.limiter(store, clock, algorithm, limit, window);
    }

    private long stored(RateLimiter limiter, String key) {
        return shared.read(new CounterKey(SharedStoreOptions.shape(limiter.config()), key))
                .total();
    }

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"TOKEN_BUCKET", "LEAKY_BUCKET", "SLIDING_LOG"})
    void bindRefusesTheAlgorithmsWhoseStateIsNotCountsPerFrame(Algorithm algorithm) {
        LeasedStore store = instance(shared);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RateLimiter.builder(algorithm)
                .limit(10, Duration.ofMinutes(1))
                .store(store)
                .build());
        assertTrue(e.getMessage().contains(algorithm.name()), e.getMessage());
    }

    /** Sub-windows much shorter than the round: the round would claim dozens ahead per key; an operator is told. */
    @Test
    void aSubWindowCounterOfManySubWindowsPerRoundIsWarnedOf() {
        Duration round = LeasedStore.DEFAULT_INTERVAL;
        LimiterConfig minute = RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER) // 60 sub-windows of 1 s
                .limit(10, Duration.ofMinutes(1))
                .build()
                .config();
        assertNull(LeasedStore.subWindowWarning(minute, round));
        LimiterConfig fixed = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(10, Duration.ofMillis(1))
                .build()
                .config();
        assertNull(LeasedStore.subWindowWarning(fixed, round), "one frame per window: nothing to warn of");
        LimiterConfig second = RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER) // 60 of 16.7 ms: 6 a round
                .limit(10, Duration.ofSeconds(1))
                .build()
                .config();
        assertNull(LeasedStore.subWindowWarning(second, round));

        LimiterConfig short_ = RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER) // 60 of 1.7 ms: 60 a round
                .limit(10, Duration.ofMillis(100))
                .build()
                .config();
        assertEquals(
                "leased SLIDING_WINDOW_COUNTER of 60 sub-windows of 1666666ns: every round of 100ms claims about"
                        + " 60 of them ahead for every busy key, which with many keys can cost the round more than its"
                        + " interval (see docs/leased-mode.md, Known limits); use at most 10 buckets, or a longer"
                        + " window",
                LeasedStore.subWindowWarning(short_, round));
        LimiterConfig shorter = RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER) // 60 of 0.8 ms: 120 a round
                .limit(10, Duration.ofMillis(50))
                .build()
                .config();
        assertTrue(
                LeasedStore.subWindowWarning(shorter, round).contains("about 120 of them ahead")
                        && LeasedStore.subWindowWarning(shorter, round).contains("use at most 5 buckets"),
                LeasedStore.subWindowWarning(shorter, round));
        try (LeasedStore store = instance(shared)) { // binding it still works: a warning, not a refusal
            assertTrue(RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER)
                    .limit(10, Duration.ofMillis(100))
                    .clock(clock)
                    .store(store)
                    .build()
                    .tryAcquire(KEY)
                    .allowed());
        }
    }

    @Test
    @SuppressWarnings("deprecation") // refreshInterval, the old name of interval, still names itself
    void builderRefusesBadValuesNamingThem() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LeasedStore.builder(shared)
                        .batchSize(0))
                .getMessage()
                .contains("0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LeasedStore.builder(shared)
                        .refreshInterval(Duration.ZERO))
                .getMessage()
                .contains("refreshInterval"));
    }

    /**
     * 64 threads on one instance, the clock frozen inside one window: exactly L admitted, the store holds exactly L,
     * and what this instance holds unused is the difference (none here: the demand spent every slice).
     */
    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void sixtyFourThreadsOnOneInstanceAdmitExactlyTheLimit(Algorithm algorithm) throws Exception {
        LeasedStore store = instance(shared);
        RateLimiter limiter = limiter(store, algorithm, L, Duration.ofMinutes(1));
        long admitted = hammer(List.of(limiter), 64, 20);
        assertEquals(L, admitted);
        assertEquals(L, stored(limiter, KEY));
        assertEquals(0, store.unusedPermits());
    }

    /**
     * Four instances of 16 threads each on one key: never more than L admitted, and the store's count is what was
     * admitted plus what the instances hold unused; once they close, exactly what was admitted.
     */
    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void fourInstancesOfSixteenThreadsNeverAdmitOverTheLimit(Algorithm algorithm) throws Exception {
        List<LeasedStore> stores = new ArrayList<>();
        List<RateLimiter> limiters = new ArrayList<>();
        for (int j = 0; j < 4; j++) {
            LeasedStore s = instance(shared);
            stores.add(s);
            limiters.add(limiter(s, algorithm, L, Duration.ofMinutes(1)));
        }
        long admitted = hammer(limiters, 16, 20);
        long unused = stores.stream().mapToLong(LeasedStore::unusedPermits).sum();
        assertEquals(stored(limiters.get(0), KEY), admitted + unused);
        assertTrue(admitted <= L, "admitted " + admitted);
        assertEquals(L, admitted, "with 1,280 requests for 100 permits every slice is spent");
        stores.forEach(LeasedStore::close);
        assertEquals(admitted, stored(limiters.get(0), KEY));
    }

    /** Runs {@code threads} threads per limiter, each making {@code requests} requests at once; the admitted count. */
    private static long hammer(List<RateLimiter> limiters, int threads, int requests) throws Exception {
        int all = threads * limiters.size();
        ExecutorService pool = Executors.newFixedThreadPool(all);
        try {
            CyclicBarrier start = new CyclicBarrier(all);
            List<Future<Long>> results = new ArrayList<>();
            for (RateLimiter limiter : limiters) {
                for (int t = 0; t < threads; t++) {
                    results.add(pool.submit(() -> {
                        start.await();
                        long n = 0;
                        for (int r = 0; r < requests; r++) {
                            if (limiter.tryAcquire(KEY).allowed()) {
                                n++;
                            }
                        }
                        return n;
                    }));
                }
            }
            long admitted = 0;
            for (Future<Long> f : results) {
                admitted += f.get(60, TimeUnit.SECONDS);
            }
            return admitted;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A key new to every instance, flooded on all of them at once before any round: each instance holds no slice, so
     * each claims before it admits, and together they admit exactly the limit, never more.
     */
    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void aFloodOnAKeyNewToEveryInstanceAdmitsTheLimitAndNoMore(Algorithm algorithm) {
        List<RateLimiter> limiters = new ArrayList<>();
        for (int j = 0; j < 30; j++) {
            limiters.add(limiter(instance(shared), algorithm, 50, Duration.ofSeconds(1)));
        }
        long admitted = 0;
        for (int r = 0; r < 1000; r++) { // 1,000 requests within 100 ms, every instance's first before any round
            clock.set(Instant.parse("2026-01-01T12:00:00Z").plusNanos(r * 100_000L));
            if (limiters.get(r % 30).tryAcquire(KEY).allowed()) {
                admitted++;
            }
        }
        assertEquals(50, admitted);
    }

    /**
     * Three instances, random costs and times over a minute of 10 s windows, rounds now and then: the algorithm's own
     * measure of all admitted requests (an exact limiter told every one) never passes the limit.
     */
    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void randomTrafficOnThreeInstancesNeverPassesTheLimit(Algorithm algorithm) {
        List<LeasedStore> stores = new ArrayList<>();
        List<RateLimiter> limiters = new ArrayList<>();
        for (int j = 0; j < 3; j++) {
            LeasedStore s = LeasedStore.builder(shared)
                    .interval(Duration.ofSeconds(1))
                    .manualRounds()
                    .build();
            stores.add(s);
            limiters.add(limiter(s, algorithm, 20, Duration.ofSeconds(10)));
        }
        RateLimiter oracle = oracle(algorithm, 1L << 40, Duration.ofSeconds(10));
        Random random = new Random(7);
        long start = clock.nanos();
        long admitted = 0;
        for (int r = 0; r < 5000; r++) {
            clock.advanceNanos(random.nextInt(40_000_000));
            if (random.nextInt(50) == 0) {
                stores.get(random.nextInt(3)).refresh();
            }
            long cost = 1 + random.nextInt(3);
            Decision d = limiters.get(random.nextInt(3)).tryAcquire(KEY, cost);
            if (d.allowed()) {
                admitted += cost;
                oracle.tryAcquire(KEY, cost);
                long measure = (1L << 40) - oracle.peek(KEY, 1).remaining();
                assertTrue(measure <= 20, "measure " + measure + " after request " + r);
            }
        }
        long windows = (clock.nanos() - start) / 10_000_000_000L;
        assertTrue(admitted >= 20 * windows * 9 / 10, "admitted " + admitted + " in " + windows + " windows of 20");
    }

    private RateLimiter oracle(Algorithm a, long l, Duration w) {
        RateLimiterBuilder b = RateLimiter.builder(a).limit(l, w).clock(clock);
        if (a == Algorithm.SLIDING_WINDOW_COUNTER) {
            b.buckets(10);
        }
        return b.store(InMemoryStore.create()).build();
    }

    /**
     * An instance that dies holding a slice (never closed, never rounds again): the others are refused what it holds
     * until its frame stops counting (the end of the window for a fixed window), and then admit the whole limit.
     */
    @Test
    void aDeadInstancesSliceLapsesWhenItsWindowEnds() {
        LeasedStore dead = instance(shared);
        RateLimiter atDead = limiter(dead, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        RateLimiter alive = limiter(instance(shared), Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        for (int j = 0; j < 4; j++) {
            atDead.tryAcquire(KEY); // claims 1 and 2 and 4 (slow start), uses 4: holds 3 unused
        }
        assertEquals(3, dead.unusedPermits());
        assertEquals(7, stored(atDead, KEY));
        clock.advance(Duration.ofSeconds(10));
        assertEquals(3, admitted(alive, KEY, 10), "10 - 7: the dead instance's 3 unused are not handed out");
        clock.set(Instant.parse("2026-01-01T12:01:00Z"));
        assertEquals(10, admitted(alive, KEY, 20), "a new window: the dead slice has lapsed");
    }

    /**
     * For the sliding tail, an instance gone quiet: the unused part of its previous window's slice goes back with its
     * next write, so that window weighs only what was admitted in it.
     */
    @Test
    void theSlidingTailGivesBackTheUnusedSliceOfThePreviousWindow() {
        LeasedStore store = LeasedStore.builder(shared)
                .interval(Duration.ofSeconds(1))
                .manualRounds()
                .build();
        RateLimiter limiter = limiter(store, Algorithm.SLIDING_TAIL, 10, Duration.ofMinutes(1));
        for (int j = 0; j < 4; j++) {
            limiter.tryAcquire(KEY); // slices of 1, 2, 4: holds 7, used 4
        }
        assertEquals(7, stored(limiter, KEY));
        clock.set(Instant.parse("2026-01-01T12:01:00Z"));
        assertTrue(store.refresh());
        assertEquals(4, stored(limiter, KEY), "the previous window now holds only what was admitted in it");
        assertEquals(0, store.unusedPermits());
    }

    /**
     * A round marks a key busy only while its own call about that key is under way: a request that must claim on
     * another key, whose write comes later in the round or came earlier, claims at once instead of waiting for the
     * whole round (over many keys, many calls). The store here holds the round's write of one key until the request on
     * the other has been answered; with the mark held for the whole round that request would wait for it, and the test
     * would fail at its bound. Afterwards the store counts exactly what was admitted plus what is held.
     */
    @Test
    void aRequestWaitsForTheRoundOnlyWhileTheRoundsCallAboutItsOwnKeyIsUnderWay() throws Exception {
        AtomicBoolean armed = new AtomicBoolean();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch open = new CountDownLatch(1);
        FlakyCounterStore gated = new FlakyCounterStore(shared);
        gated.beforeWrite = writes -> {
            if (writes.stream().anyMatch(w -> w.key().key().equals("a")) && armed.getAndSet(false)) {
                entered.countDown();
                Latches.awaitUninterruptibly(open); // the round's write of "a", held until the test opens it
            }
        };
        LeasedStore store =
                LeasedStore.builder(gated).batchSize(1).manualRounds().build();
        RateLimiter limiter = twoKeysKept(store);
        armed.set(true);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<Boolean> refreshed = threads.submit(store::refresh); // no demand since: both slices go back
            assertTrue(entered.await(TestAwait.GENEROUS.toSeconds(), TimeUnit.SECONDS), "the round writes \"a\"");
            // more than the 3 left of the slice of "b": a claim
            Future<Decision> onB = threads.submit(() -> limiter.tryAcquire("b", 10));
            assertTrue(
                    onB.get(TestAwait.GENEROUS.toSeconds(), TimeUnit.SECONDS).allowed(),
                    "answered while the round's write of \"a\" waits");
            assertFalse(refreshed.isDone());
            open.countDown();
            assertTrue(refreshed.get(TestAwait.GENEROUS.toSeconds(), TimeUnit.SECONDS));
        } finally {
            open.countDown();
            threads.shutdownNow();
        }
        assertExact(store, limiter);
    }

    /**
     * A claim that a request starts on a key after the round has passed over its keys, but before the round comes to
     * write that one, is waited for by the round, which then writes from what the claim left: the store holds the
     * round's first write until the claim is under way, then the claim until the round is seen waiting for it. Both
     * end, and the store counts exactly what was admitted plus what is held.
     */
    @Test
    void theRoundWaitsForAClaimUnderWayOnAKeyItIsAboutToWrite() throws Exception {
        AtomicReference<String> first = new AtomicReference<>();
        AtomicReference<String> claimOn = new AtomicReference<>();
        CountDownLatch roundHeld = new CountDownLatch(1);
        CountDownLatch roundGoes = new CountDownLatch(1);
        CountDownLatch claimHeld = new CountDownLatch(1);
        CountDownLatch claimGoes = new CountDownLatch(1);
        FlakyCounterStore gated = new FlakyCounterStore(shared);
        LeasedStore store =
                LeasedStore.builder(gated).batchSize(1).manualRounds().build();
        RateLimiter limiter = twoKeysKept(store);
        gated.beforeWrite = writes -> {
            String key = writes.get(0).key().key();
            if (first.compareAndSet(null, key)) { // the round's first write, of one key
                roundHeld.countDown();
                Latches.awaitUninterruptibly(roundGoes);
            } else if (key.equals(claimOn.get()) && claimHeld.getCount() > 0) { // the request's claim on the other
                claimHeld.countDown();
                Latches.awaitUninterruptibly(claimGoes);
            }
        };
        AtomicReference<Thread> roundThread = new AtomicReference<>();
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<Boolean> refreshed = threads.submit(() -> {
                roundThread.set(Thread.currentThread());
                return store.refresh(); // no demand since: both slices go back, one write each
            });
            assertTrue(roundHeld.await(TestAwait.GENEROUS.toSeconds(), TimeUnit.SECONDS));
            String other = first.get().equals("a") ? "b" : "a";
            claimOn.set(other);
            Future<Decision> claim = threads.submit(() -> limiter.tryAcquire(other, 10)); // beyond its slice
            assertTrue(claimHeld.await(TestAwait.GENEROUS.toSeconds(), TimeUnit.SECONDS));
            roundGoes.countDown();
            TestAwait.until("the round waiting for the claim on \"" + other + "\"", () -> Arrays.stream(
                            roundThread.get().getStackTrace())
                    .anyMatch(f -> f.getMethodName().equals("prepareForRound")
                            && roundThread.get().getState() == Thread.State.WAITING));
            claimGoes.countDown();
            assertTrue(
                    claim.get(TestAwait.GENEROUS.toSeconds(), TimeUnit.SECONDS).allowed());
            assertTrue(refreshed.get(TestAwait.GENEROUS.toSeconds(), TimeUnit.SECONDS));
        } finally {
            roundGoes.countDown();
            claimGoes.countDown();
            threads.shutdownNow();
        }
        assertExact(store, limiter);
    }

    /**
     * A fixed window of {@link #L} a minute on {@code store} with keys "a" and "b", each asked 4 times and kept by a
     * round (the interval had demand), so that the next round gives both slices back, one write each.
     */
    private RateLimiter twoKeysKept(LeasedStore store) {
        RateLimiter limiter = limiter(store, Algorithm.FIXED_WINDOW, L, Duration.ofMinutes(1));
        for (String key : List.of("a", "b")) {
            assertEquals(4, admitted(limiter, key, 4)); // slices of 1, 2 and 4: holds 7, used 4
        }
        assertTrue(store.refresh());
        return limiter;
    }

    /** The store counts exactly what {@link #twoKeysKept}'s keys admitted (4 on one, 14 on the other) plus what is held. */
    private void assertExact(LeasedStore store, RateLimiter limiter) {
        assertEquals(
                4 + 14 + store.unusedPermits(),
                stored(limiter, "a") + stored(limiter, "b"),
                "4 admitted on one key, 14 on the other, and what is held");
    }

    /** An idle key's slice goes back at the next round; the key is then dropped. */
    @Test
    void anIdleKeysSliceGoesBackAtTheNextRound() {
        LeasedStore store = instance(shared);
        RateLimiter limiter = limiter(store, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        for (int j = 0; j < 4; j++) {
            limiter.tryAcquire(KEY);
        }
        assertTrue(store.refresh()); // the interval had demand: the slice is kept
        assertEquals(7, stored(limiter, KEY));
        assertTrue(store.refresh()); // no demand since: all of it goes back
        assertEquals(4, stored(limiter, KEY));
        assertEquals(0, store.unusedPermits());
        clock.advance(Duration.ofMinutes(2));
        assertTrue(store.refresh());
        assertEquals(1, store.stats().evictions());
    }

    @Test
    void aCancelledReservationGoesBackIntoTheSliceOrToTheStore() {
        LeasedStore store = instance(shared);
        RateLimiter limiter = limiter(store, Algorithm.SLIDING_TAIL, 10, Duration.ofMinutes(1));
        Reservation r = limiter.reserve(KEY, 3);
        assertTrue(r.decision().allowed());
        assertTrue(r.cancel());
        assertFalse(r.cancel());
        assertEquals(3, store.unusedPermits(), "back in the slice");
        assertEquals(10, admitted(limiter, KEY, 20), "the cancelled permits were admitted again");
        Reservation old = limiter.reserve(KEY, 1);
        assertFalse(old.decision().allowed());

        clock.set(Instant.parse("2026-01-01T12:00:30Z"));
        LeasedStore other = instance(shared);
        RateLimiter two = limiter(other, Algorithm.SLIDING_TAIL, 10, Duration.ofMinutes(1));
        assertFalse(two.tryAcquire(KEY).allowed());
    }

    @Test
    void aReservationCancelledAfterItsWindowTurnedGivesBackToTheStore() {
        LeasedStore store = instance(shared);
        RateLimiter limiter = limiter(store, Algorithm.SLIDING_TAIL, 10, Duration.ofMinutes(1));
        Reservation r = limiter.reserve(KEY, 4);
        assertTrue(r.decision().allowed());
        assertEquals(4, stored(limiter, KEY));
        clock.set(Instant.parse("2026-01-01T12:01:00Z"));
        assertTrue(r.cancel());
        assertTrue(store.refresh());
        assertEquals(0, stored(limiter, KEY));
    }

    /**
     * The store goes down: requests the slice held covers are admitted; the first one it does not cover claims, the
     * claim fails, and it gets the failure policy's answer (default: refused, marked as failed); the next ones get it
     * without a call. Once a round reaches the store again, claims resume.
     */
    @Test
    void inAnOutageTheSliceHeldIsSpentAndThenTheFailurePolicyAnswers() {
        FlakyCounterStore flaky = new FlakyCounterStore(shared);
        LeasedStore store = LeasedStore.builder(flaky).manualRounds().build();
        RateLimiter limiter = limiter(store, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        for (int j = 0; j < 4; j++) {
            assertTrue(limiter.tryAcquire(KEY).allowed()); // slices of 1, 2 and 4: holds 7, used 4
        }
        long held = store.unusedPermits();
        assertEquals(3, held);
        flaky.down = true;
        int calls = flaky.calls.get();
        assertEquals(held, admitted(limiter, KEY, (int) held), "the slice held is spent without the store");
        assertEquals(calls, flaky.calls.get());
        Decision refused = limiter.tryAcquire(KEY);
        assertFalse(refused.allowed());
        assertTrue(refused.failed());
        assertEquals(calls + 1, flaky.calls.get(), "one claim found the store down");
        for (int j = 0; j < 5; j++) {
            assertTrue(limiter.tryAcquire(KEY).failed());
        }
        assertEquals(calls + 1, flaky.calls.get(), "no request waits for a store known to be down");
        assertFalse(store.refresh());
        assertEquals(2, store.stats().storeFailures(), "the claim, and the round's probe");
        flaky.down = false;
        assertTrue(store.refresh());
        assertTrue(limiter.tryAcquire(KEY).allowed());
        assertEquals(8 + store.unusedPermits(), stored(limiter, KEY), "7 admitted before, 1 now, and the new slice");
    }

    /**
     * A claim the store applied but whose answer was lost (the connection dropped) is in doubt: not taken then, so the
     * request gets the failure policy. The next read of the record finds the version the claim wrote: it was applied
     * and nobody wrote since, so its slice is this instance's after all, and the next requests spend it without a
     * call. The store counts exactly what was admitted plus what is held.
     */
    @Test
    void aClaimWhoseAnswerWasLostIsTakenWhenTheNextReadFindsItApplied() {
        FlakyCounterStore flaky = new FlakyCounterStore(shared);
        LeasedStore store = LeasedStore.builder(flaky).manualRounds().build();
        RateLimiter limiter = limiter(store, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        assertTrue(limiter.tryAcquire(KEY).allowed());
        flaky.takeLog();
        flaky.loseAnswers = true;
        Decision lost = limiter.tryAcquire(KEY, 5);
        assertFalse(lost.allowed());
        assertTrue(lost.failed());
        assertEquals(List.of("cas(1)[answer lost]"), flaky.takeLog());
        assertEquals(7, stored(limiter, KEY), "the store applied the claim: 6, the demand seen");
        assertEquals(0, store.unusedPermits(), "not taken: in doubt");
        long claimed = store.stats().permitsClaimed();

        flaky.loseAnswers = false;
        assertTrue(store.refresh());
        assertEquals(List.of("load(1)"), flaky.takeLog(), "the round reads the key in doubt");
        assertEquals(6, store.unusedPermits(), "the read found the claim applied: its slice is held");
        assertEquals(claimed + 6, store.stats().permitsClaimed());
        assertTrue(limiter.tryAcquire(KEY, 5).allowed());
        assertEquals(List.of(), flaky.takeLog(), "spent from the slice, without a call");
        assertEquals(7, stored(limiter, KEY), "6 admitted, 1 held");
        assertEquals(1, store.unusedPermits());
    }

    /**
     * A claim in doubt that the store did not apply: the next read finds the version the claim expected, and there is
     * nothing to take. A later claim takes the room.
     */
    @Test
    void aClaimInDoubtThatWasNotAppliedIsDropped() {
        FlakyCounterStore flaky = new FlakyCounterStore(shared);
        LeasedStore store = LeasedStore.builder(flaky).manualRounds().build();
        RateLimiter limiter = limiter(store, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        assertTrue(limiter.tryAcquire(KEY).allowed());
        flaky.down = true;
        assertTrue(limiter.tryAcquire(KEY, 5).failed());
        flaky.down = false;
        assertTrue(store.refresh());
        assertEquals(0, store.unusedPermits());
        assertEquals(1, stored(limiter, KEY));
        assertTrue(limiter.tryAcquire(KEY, 9).allowed());
        assertEquals(10, stored(limiter, KEY));
        assertFalse(limiter.tryAcquire(KEY).allowed());
    }

    @Test
    void failOpenAdmitsAndThrowThrowsWhenTheSliceIsSpentInAnOutage() {
        FlakyCounterStore flaky = new FlakyCounterStore(shared);
        RateLimiter open = limiter(
                LeasedStore.builder(flaky)
                        .failurePolicy(FailurePolicy.FAIL_OPEN)
                        .manualRounds()
                        .build(),
                Algorithm.FIXED_WINDOW,
                10,
                Duration.ofMinutes(1));
        RateLimiter throwing = limiter(
                LeasedStore.builder(flaky)
                        .failurePolicy(FailurePolicy.THROW)
                        .manualRounds()
                        .build(),
                Algorithm.FIXED_WINDOW,
                10,
                Duration.ofHours(1));
        flaky.down = true;
        Decision d = open.tryAcquire(KEY);
        assertTrue(d.allowed());
        assertTrue(d.failed());
        assertThrows(SluiceException.class, () -> throwing.tryAcquire(KEY));
    }

    /**
     * One instance alone answers as the in-memory store does: {@code remaining} (the slice left plus the room the
     * record leaves), {@code resetAfter}, and for the refusal {@code retryAfter}, request by request. But for the
     * sliding tail's {@code resetAfter}, which counts the slice held as spent (the record does): never earlier.
     */
    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void oneInstanceAnswersRemainingAndResetAsTheInMemoryStoreDoes(Algorithm algorithm) {
        clock.set(Instant.parse("2026-01-01T12:00:10Z"));
        RateLimiter leased = limiter(instance(shared), algorithm, 10, Duration.ofMinutes(1));
        RateLimiter memory = oracle(algorithm, 10, Duration.ofMinutes(1));
        for (int j = 0; j < 10; j++) {
            Decision l = leased.tryAcquire(KEY);
            Decision m = memory.tryAcquire(KEY);
            assertTrue(l.allowed());
            assertEquals(m.remaining(), l.remaining(), "remaining after request " + j);
            if (algorithm == Algorithm.SLIDING_TAIL) {
                assertTrue(l.resetAfter().compareTo(m.resetAfter()) >= 0, "resetAfter after request " + j);
            } else {
                assertEquals(m.resetAfter(), l.resetAfter(), "resetAfter after request " + j);
            }
        }
        Decision l = leased.tryAcquire(KEY);
        Decision m = memory.tryAcquire(KEY);
        assertFalse(l.allowed());
        assertEquals(0, l.remaining());
        assertEquals(m.retryAfter(), l.retryAfter());
    }

    @Test
    void peekClaimsNothing() {
        LeasedStore store = instance(shared);
        RateLimiter limiter = limiter(store, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        assertTrue(limiter.peek(KEY, 10).allowed());
        assertEquals(0, stored(limiter, KEY));
        assertEquals(10, admitted(limiter, KEY, 10));
        assertFalse(limiter.peek(KEY, 1).allowed());
    }

    @Test
    void aClosedLimiterGivesBackItsSlicesAndRefusesRequests() {
        LeasedStore store = instance(shared);
        RateLimiter limiter = limiter(store, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        for (int j = 0; j < 4; j++) {
            limiter.tryAcquire(KEY);
        }
        assertEquals(7, stored(limiter, KEY));
        limiter.close();
        assertEquals(4, stored(limiter, KEY));
        assertThrows(IllegalStateException.class, () -> limiter.tryAcquire(KEY));
    }

    @Test
    void theBackgroundRoundGivesBackAnIdleSlice() {
        AtomicLong failures = new AtomicLong();
        try (LeasedStore store = LeasedStore.builder(shared)
                .interval(Duration.ofMillis(10))
                .failureListener(e -> failures.incrementAndGet())
                .build()) {
            RateLimiter limiter = limiter(store, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
            for (int j = 0; j < 4; j++) {
                limiter.tryAcquire(KEY);
            }
            dev.sluice.TestAwait.until("the idle slice is given back", () -> stored(limiter, KEY) == 4);
            assertEquals(0, failures.get());
        }
    }
}
