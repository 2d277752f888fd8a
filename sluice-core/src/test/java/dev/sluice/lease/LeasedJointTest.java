package dev.sluice.lease;

import static dev.sluice.lease.LeaseTests.admitted;
import static dev.sluice.lease.LeaseTests.manual;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.JointDecision;
import dev.sluice.RateLimiter;
import dev.sluice.TestAwait;
import dev.sluice.TestClock;
import dev.sluice.internal.JointDecider;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import dev.sluice.spi.SharedStoreOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Joint requests ({@link RateLimiter#tryAcquireAll}) over limiters of one {@link LeasedStore}: one step over the
 * slices this instance holds ({@link LeaseJoint}), with claims made with no lock held. On a hand-moved clock over an
 * in-memory counter store, with every call to the store logged.
 */
class LeasedJointTest {

    private final TestClock clock = new TestClock("2026-01-01T12:00:00.100Z");
    private final InMemoryCounterStore shared = InMemoryCounterStore.create();

    private RateLimiter limiter(LeasedStore store, Algorithm algorithm, long limit, Duration window) {
        return LeaseTests.limiter(store, clock, algorithm, limit, window);
    }

    private long stored(RateLimiter limiter, String key) {
        return shared.load(List.of(new CounterKey(SharedStoreOptions.shape(limiter.config()), key)))
                .get(0)
                .total();
    }

    /**
     * A request limited per client (5 a minute) and per user (3 a minute). The first three pass both and take from
     * both; the fourth is refused by the user's limit and takes nothing from the client's, which then admits two
     * alone. Once the instance closes, the store counts exactly what was admitted.
     */
    @Test
    void aJointRequestTakesFromEveryLimitOrFromNone() {
        LeasedStore store = manual(new FlakyCounterStore(shared), Duration.ofSeconds(1));
        RateLimiter perClient = limiter(store, Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1));
        RateLimiter perUser = limiter(store, Algorithm.FIXED_WINDOW, 3, Duration.ofMinutes(1));
        assertSame(JointDecider.of(perClient), JointDecider.of(perUser), "one decider for the store's limiters");
        for (int i = 0; i < 3; i++) {
            JointDecision d =
                    RateLimiter.tryAcquireAll(Acquisition.of(perClient, "client"), Acquisition.of(perUser, "user"));
            assertTrue(d.allowed(), "request " + (i + 1) + ": " + d);
        }
        JointDecision fourth =
                RateLimiter.tryAcquireAll(Acquisition.of(perClient, "client"), Acquisition.of(perUser, "user"));
        assertFalse(fourth.allowed(), fourth.toString());
        assertTrue(fourth.decision(0).allowed(), "the client's limit alone would admit it: " + fourth);
        assertFalse(fourth.decision(1).allowed(), "the user's refuses it: " + fourth);
        assertEquals(2, admitted(perClient, "client", 5), "the refused request took nothing from the client's limit");
        store.close();
        assertEquals(5, stored(perClient, "client"));
        assertEquals(3, stored(perUser, "user"));
    }

    /**
     * The user's limit is spent and its record, as last read, has no room: a joint request is refused at once,
     * without a call, and the client's key, which this instance has never read, is not claimed for it.
     */
    @Test
    void aPartThatMustBeRefusedRefusesTheRequestBeforeAnyClaim() {
        FlakyCounterStore calls = new FlakyCounterStore(shared);
        LeasedStore store = manual(calls, Duration.ofSeconds(1));
        RateLimiter perClient = limiter(store, Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1));
        RateLimiter perUser = limiter(store, Algorithm.FIXED_WINDOW, 3, Duration.ofMinutes(1));
        assertEquals(3, admitted(perUser, "user", 4));
        calls.takeLog();

        JointDecision d =
                RateLimiter.tryAcquireAll(Acquisition.of(perClient, "client"), Acquisition.of(perUser, "user"));
        assertFalse(d.allowed(), d.toString());
        assertEquals(List.of(), calls.takeLog(), "no call: the user's part decides it");
        store.close();
        assertEquals(0, stored(perClient, "client"), "nothing claimed for the client");
    }

    /**
     * A part whose slice is short claims on the request's thread with no lock held, and the request is decided again
     * over the slices. The first request on two keys new here reads and claims each (two calls each); the second
     * claims each again, for twice the demand (one call each); the third is taken from the slices, with no call.
     */
    @Test
    void shortSlicesAreClaimedOneAfterTheOtherThenTheRequestIsTakenWhole() {
        FlakyCounterStore calls = new FlakyCounterStore(shared);
        LeasedStore store = manual(calls, Duration.ofSeconds(1));
        RateLimiter perClient = limiter(store, Algorithm.SLIDING_TAIL, 100, Duration.ofMinutes(1));
        RateLimiter perUser = limiter(store, Algorithm.SLIDING_WINDOW_COUNTER, 100, Duration.ofMinutes(1));
        List<Acquisition> parts = List.of(Acquisition.of(perClient, "client", 2), Acquisition.of(perUser, "user", 3));
        assertTrue(RateLimiter.tryAcquireAll(parts).allowed());
        assertEquals(List.of("load(1)", "cas(1)[true]", "load(1)", "cas(1)[true]"), calls.takeLog());
        assertTrue(RateLimiter.tryAcquireAll(parts).allowed());
        assertEquals(List.of("cas(1)[true]", "cas(1)[true]"), calls.takeLog(), "slices of 4 and 6 more");
        assertTrue(RateLimiter.tryAcquireAll(parts).allowed());
        assertEquals(List.of(), calls.takeLog(), "2 and 3 were left");
        store.close();
        assertEquals(6, stored(perClient, "client"), "what was admitted: the unused slices went back");
        assertEquals(9, stored(perUser, "user"));
    }

    /**
     * The store goes down while the client's slice holds a permit and the user's key was never read. The user's part
     * claims, the call fails, and the request is then taken and given back part by part, each part getting the failure
     * policy's answer as alone: the user's refused (FAIL_CLOSED), the client's permit given back to its slice, where
     * a request on the client alone then finds it.
     */
    @Test
    void whenAClaimFailsTheFailurePolicyAnswersTheShortPartAndTheOthersKeepTheirSlices() {
        FlakyCounterStore calls = new FlakyCounterStore(shared);
        LeasedStore store = LeasedStore.builder(calls)
                .interval(Duration.ofSeconds(1))
                .failurePolicy(FailurePolicy.FAIL_CLOSED)
                .manualRounds()
                .build();
        RateLimiter perClient = limiter(store, Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
        RateLimiter perUser = limiter(store, Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
        assertEquals(2, admitted(perClient, "client", 2), "slices of 1 and 2: one permit left");
        calls.down = true;
        calls.takeLog();
        JointDecision d =
                RateLimiter.tryAcquireAll(Acquisition.of(perClient, "client"), Acquisition.of(perUser, "user"));
        assertFalse(d.allowed(), d.toString());
        assertTrue(d.decision(1).failed(), "the user's part: the failure policy's answer, " + d);
        assertEquals(List.of("load(1)[down]"), calls.takeLog(), "one call: the user's claim, which failed");
        assertTrue(perClient.tryAcquire("client").allowed(), "the client's permit is still in its slice");
        assertFalse(perClient.tryAcquire("client").allowed(), "and that was the last");
        assertEquals(List.of(), calls.takeLog(), "no call while the store is failing");
    }

    /**
     * 8 threads, half naming (client, user) and half (user, client), 4 joint requests each per step, 14 steps 2 s
     * apart, under 10 a second and 100 a minute on one instance: no deadlock, exactly 10 admitted per step until the
     * minute's 100 are spent, and then none; once closed, the store counts exactly what was admitted.
     */
    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void eightThreadsAdmitExactlyWhatBothLimitsAllowInEitherOrder(Algorithm algorithm) throws Exception {
        clock.set(Instant.parse("2026-01-01T12:00:00Z"));
        LeasedStore store = manual(new FlakyCounterStore(shared), Duration.ofMillis(100));
        RateLimiter perSecond = limiter(store, algorithm, 10, Duration.ofSeconds(1));
        RateLimiter perMinute = limiter(store, algorithm, 100, Duration.ofMinutes(1));
        List<Acquisition> forward = List.of(Acquisition.of(perSecond, "k"), Acquisition.of(perMinute, "k"));
        List<Acquisition> backward = List.of(Acquisition.of(perMinute, "k"), Acquisition.of(perSecond, "k"));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        long total = 0;
        try {
            for (int step = 0; step < 14; step++) {
                clock.set(Instant.parse("2026-01-01T12:00:00Z").plusSeconds(2L * step));
                store.refresh();
                AtomicInteger passed = new AtomicInteger();
                CountDownLatch start = new CountDownLatch(1);
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    List<Acquisition> parts = t % 2 == 0 ? forward : backward;
                    futures.add(pool.submit(() -> {
                        start.await();
                        for (int i = 0; i < 4; i++) {
                            if (RateLimiter.tryAcquireAll(parts).allowed()) {
                                passed.incrementAndGet();
                            }
                        }
                        return null;
                    }));
                }
                start.countDown();
                for (Future<?> f : futures) {
                    f.get(120, TimeUnit.SECONDS); // a deadlock would fail here, not hang the build
                }
                long expected = Math.min(10, 100 - total);
                assertEquals(expected, passed.get(), algorithm + ": 32 joint requests at +" + 2 * step + " s");
                total += passed.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(100, total, algorithm + ": the minute's 100, then nothing");
        store.close();
        assertEquals(100, stored(perMinute, "k"), algorithm + ": the minute's record counts what was admitted");
    }

    /** {@link JointDecider#decideAllBy} with a deadline far off: what the service decides on its own thread. */
    private static JointDecision by(List<Acquisition> parts) {
        return JointDecider.of(parts.get(0).limiter())
                .decideAllBy(parts, System.nanoTime() + TimeUnit.MINUTES.toNanos(1));
    }

    /**
     * With a deadline, every request that needs no call is decided on the calling thread, with one part or several:
     * taken from the slices, or refused by a part that has no claim to make (its limit spent, as last read). A request
     * whose part must claim takes nothing and answers null, without a call, to be decided by {@code tryAcquireAll}.
     */
    @Test
    void withADeadlineEveryRequestThatNeedsNoCallIsDecidedOnTheCallingThread() {
        FlakyCounterStore calls = new FlakyCounterStore(shared);
        LeasedStore store = manual(calls, Duration.ofSeconds(1));
        RateLimiter perClient = limiter(store, Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
        RateLimiter perUser = limiter(store, Algorithm.FIXED_WINDOW, 3, Duration.ofMinutes(1));
        List<Acquisition> client = List.of(Acquisition.of(perClient, "client"));
        List<Acquisition> both = List.of(Acquisition.of(perClient, "client"), Acquisition.of(perUser, "user"));

        assertEquals(null, by(client), "a key never read claims first");
        assertEquals(null, by(both));
        assertEquals(List.of(), calls.takeLog(), "and no call was made for it");
        assertEquals(0, stored(perClient, "client"), "nor anything taken");

        assertEquals(3, admitted(perClient, "client", 3), "slices of 1 and 2: claimed on requests");
        assertEquals(3, admitted(perUser, "user", 3));
        assertFalse(perUser.tryAcquire("user").allowed(), "the user's 3 are spent");
        calls.takeLog();
        assertEquals(null, by(client), "the client's slice is spent: a claim to make");
        assertTrue(perClient.tryAcquire("client").allowed(), "which claims 4 (its demand), 3 left");
        calls.takeLog();

        JointDecision covered = by(client);
        assertTrue(covered != null && covered.allowed(), "covered: " + covered);
        JointDecision refused = by(both);
        assertTrue(refused != null && !refused.allowed(), "refused by the user's part: " + refused);
        assertTrue(refused.decision(0).allowed(), "the client's part alone would pass: " + refused);
        JointDecision user = by(List.of(Acquisition.of(perUser, "user")));
        assertTrue(user != null && !user.allowed(), "the user alone, refused too: " + user);
        assertEquals(List.of(), calls.takeLog(), "all without a call");
        assertEquals(2, admitted(perClient, "client", 2), "the refused joint request took nothing from the client");
        assertEquals(List.of(), calls.takeLog(), "its slice held the 2");
        store.close();
        assertEquals(7, stored(perClient, "client"));
        assertEquals(3, stored(perUser, "user"));
    }

    /**
     * Two parts covered by their slices are taken together on the calling thread; a part short of its slice, while
     * the other is covered, makes the request answer null and take nothing from either.
     */
    @Test
    void withADeadlineAJointRequestIsTakenWholeFromTheSlicesOrNotAtAll() {
        FlakyCounterStore calls = new FlakyCounterStore(shared);
        LeasedStore store = manual(calls, Duration.ofSeconds(1));
        RateLimiter perClient = limiter(store, Algorithm.SLIDING_TAIL, 100, Duration.ofMinutes(1));
        RateLimiter perUser = limiter(store, Algorithm.SLIDING_WINDOW_COUNTER, 100, Duration.ofMinutes(1));
        List<Acquisition> parts = List.of(Acquisition.of(perClient, "client", 2), Acquisition.of(perUser, "user", 3));
        assertTrue(RateLimiter.tryAcquireAll(parts).allowed());
        assertTrue(RateLimiter.tryAcquireAll(parts).allowed(), "slices of 2 + 4 and 3 + 6: 2 and 3 left");
        calls.takeLog();
        JointDecision d = by(parts);
        assertTrue(d != null && d.allowed(), "both covered: " + d);
        assertEquals(null, by(parts), "both slices spent: claims to make");
        assertEquals(List.of(), calls.takeLog(), "no call, nothing taken");
        store.close();
        assertEquals(6, stored(perClient, "client"), "what was admitted: 3 requests of 2");
        assertEquals(9, stored(perUser, "user"));
    }

    /**
     * With a deadline, a request short of its slice while another's claim on the key is under way waits for that claim
     * on its own thread, until its deadline at most. The claim (4 permits, the key's demand) is held in the store: a
     * request whose deadline passes meanwhile answers null, having made no call and taken nothing; one with time left
     * is decided once the claim ends, from the slice it brought.
     */
    @Test
    void withADeadlineARequestWaitsForAnothersClaimNoLongerThanItsDeadline() throws Exception {
        CountDownLatch inCall = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger gated = new AtomicInteger();
        FlakyCounterStore calls = new FlakyCounterStore(new CounterStore() {
            @Override
            public List<CounterSnapshot> load(List<CounterKey> keys) {
                return shared.load(keys);
            }

            @Override
            public boolean[] compareAndSet(List<CounterWrite> writes) {
                if (gated.get() > 0) {
                    inCall.countDown();
                    try {
                        assertTrue(release.await(TestAwait.GENEROUS.toSeconds(), TimeUnit.SECONDS));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return shared.compareAndSet(writes);
            }
        });
        LeasedStore store = manual(calls, Duration.ofSeconds(1));
        RateLimiter perClient = limiter(store, Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
        List<Acquisition> client = List.of(Acquisition.of(perClient, "client"));
        assertEquals(3, admitted(perClient, "client", 3), "slices of 1 and 2: a demand of 3 so far");
        calls.takeLog();
        gated.set(1);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Boolean> claiming =
                    pool.submit(() -> perClient.tryAcquire("client").allowed());
            assertTrue(inCall.await(TestAwait.GENEROUS.toSeconds(), TimeUnit.SECONDS));
            JointDecision late = JointDecider.of(perClient)
                    .decideAllBy(client, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20));
            assertEquals(null, late, "its deadline passed while the claim was held");
            assertEquals(List.of(), calls.takeLog(), "no call of its own");

            AtomicReference<Thread> waiter = new AtomicReference<>();
            Future<JointDecision> waiting = pool.submit(() -> {
                waiter.set(Thread.currentThread());
                return by(client);
            });
            TestAwait.until(
                    "the request waiting for the claim",
                    () -> waiter.get() != null && waiter.get().getState() == Thread.State.TIMED_WAITING);
            release.countDown();
            assertTrue(claiming.get(1, TimeUnit.MINUTES), "the claiming request");
            JointDecision d = waiting.get(1, TimeUnit.MINUTES);
            assertTrue(d != null && d.allowed(), "decided from the slice the claim brought: " + d);
        } finally {
            pool.shutdownNow();
        }
        assertEquals(List.of("cas(1)[true]"), calls.takeLog(), "one claim, of 4");
        store.close();
        assertEquals(5, stored(perClient, "client"), "what was admitted");
    }
}
