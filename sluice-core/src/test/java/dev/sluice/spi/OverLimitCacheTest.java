package dev.sluice.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.JointDecision;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import dev.sluice.TestClock;
import dev.sluice.TimeSource;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The over-limit cache of exact mode ({@link SharedStoreBuilder#overLimitCache(int)}) on a store kept in this JVM by
 * the algorithms' own state machines ({@link StateMachine}, as every shared store's contract runs them), which counts
 * its calls. Timed by a hand-moved clock ({@link TimeSource#CLOCK}).
 */
class OverLimitCacheTest {

    private final TestClock clock = new TestClock("2026-01-01T12:00:10Z");

    /** A store of state machines in this JVM that counts the calls made to it. */
    static final class CountingStore {
        final AtomicInteger calls = new AtomicInteger();
        final AtomicInteger giveBacks = new AtomicInteger();
        private final Map<String, StateMachine> states = new HashMap<>(); // guarded by this

        AtomicDecider decider(LimiterConfig config) {
            return new AtomicDecider() {
                @Override
                public StoreDecision decide(String key, long cost, boolean consume, long nowNanos) {
                    calls.incrementAndGet();
                    synchronized (CountingStore.this) {
                        return states.computeIfAbsent(key, k -> StateMachine.fresh(config))
                                .decide(config, nowNanos, cost, consume);
                    }
                }

                @Override
                public boolean giveBack(String key, long cost, long place, long nowNanos) {
                    giveBacks.incrementAndGet();
                    synchronized (CountingStore.this) {
                        return states.get(key).giveBack(config, nowNanos, cost, place);
                    }
                }
            };
        }
    }

    private final CountingStore store = new CountingStore();

    private static SharedStoreOptions options(int entries) {
        return new SharedStoreOptions(
                TimeSource.CLOCK,
                FailurePolicy.THROW,
                Duration.ofSeconds(1),
                Duration.ofSeconds(1),
                "sluice",
                RateLimitListener.NONE,
                entries);
    }

    private LimiterConfig config(Algorithm algorithm, long limit, boolean countRejected) {
        return RateLimiter.builder(algorithm)
                .limit(limit, Duration.ofMinutes(1))
                .clock(clock)
                .countRejected(countRejected)
                .build()
                .config();
    }

    private SharedRateLimiter limiter(long limit, SharedJoint joint) {
        LimiterConfig c = config(Algorithm.FIXED_WINDOW, limit, false);
        return SharedRateLimiter.create(c, store.decider(c), options(100), joint);
    }

    @Test
    void refusesFromTheCacheUntilExactlyTheRetryInstantThenAsksTheStore() {
        SharedRateLimiter l = limiter(2, new SharedJoint(null, options(100)));
        assertTrue(l.tryAcquire("k").allowed());
        assertTrue(l.tryAcquire("k").allowed());
        Decision refused = l.tryAcquire("k"); // 12:00:10, the window ends at 12:01:00
        assertFalse(refused.allowed());
        assertFalse(refused.cached());
        assertEquals(Duration.ofSeconds(50), refused.retryAfter());
        assertEquals(3, store.calls.get());

        clock.at("12:00:40");
        Decision cached = l.tryAcquire("k");
        assertTrue(cached.cached());
        assertEquals(Decision.fromOverLimitCache(Decision.denied(2, 0, 20_000_000_000L, 20_000_000_000L)), cached);
        clock.set(clock.instant().plus(Duration.ofSeconds(20)).minusNanos(1)); // 12:00:59.999999999
        Decision last = l.tryAcquire("k");
        assertTrue(last.cached());
        assertEquals(1, last.retryAfterNanos());
        assertFalse(l.peek("k", 1).allowed());
        assertEquals(3, store.calls.get(), "no store call before the retry instant");

        clock.at("12:01:00");
        Decision next = l.tryAcquire("k");
        assertTrue(next.allowed());
        assertFalse(next.cached());
        assertEquals(4, store.calls.get());
    }

    @Test
    void aSmallerCostThanTheCachedRefusalGoesToTheStore() {
        SharedRateLimiter l = limiter(5, new SharedJoint(null, options(100)));
        assertTrue(l.tryAcquire("k", 3).allowed());
        assertFalse(l.tryAcquire("k", 3).allowed()); // 2 left: cost 3 refused and cached
        assertEquals(2, store.calls.get());
        assertTrue(l.tryAcquire("k", 4).cached(), "a larger cost is refused too");
        assertTrue(l.tryAcquire("k", 3).cached());
        assertEquals(2, store.calls.get());
        Decision two = l.tryAcquire("k", 2);
        assertTrue(two.allowed(), "2 were left: the store admits it");
        assertEquals(3, store.calls.get());
        Decision one = l.tryAcquire("k", 1); // none left: the store refuses cost 1, which now covers every cost
        assertFalse(one.allowed());
        assertFalse(one.cached());
        assertTrue(l.tryAcquire("k", 1).cached());
        assertTrue(l.tryAcquire("k", 3).cached());
        assertEquals(4, store.calls.get());
    }

    @Test
    void aCancelledReservationDropsTheKeysRefusal() {
        SharedRateLimiter l = limiter(2, new SharedJoint(null, options(100)));
        Reservation r = l.reserve("k", 1);
        assertTrue(r.decision().allowed());
        assertTrue(l.tryAcquire("k").allowed());
        assertFalse(l.tryAcquire("k").allowed());
        assertTrue(l.tryAcquire("k").cached());
        assertEquals(3, store.calls.get());

        assertTrue(r.cancel());
        assertEquals(1, store.giveBacks.get());
        Decision after = l.tryAcquire("k"); // the permit given back is there: the store, not the cache, answers
        assertTrue(after.allowed());
        assertEquals(4, store.calls.get());
    }

    @Test
    void aRefusalDecidedBeforeAGiveBackIsNotKept() {
        OverLimitCache cache = new OverLimitCache(10);
        OverLimitCache.Table t = cache.table();
        long before = t.giveBacks(); // read before the store call
        t.gaveBack("k"); // another thread gives permits of k back while the call is under way
        Decision refused = Decision.denied(2, 0, 50_000_000_000L, 50_000_000_000L);
        t.refused("k", 1, refused, 0, before);
        assertNull(t.refusal("k", 1, 1), "the refusal may have seen permits held for a moment only");
        assertEquals(0, cache.size());

        t.refused("k", 1, refused, 0, t.giveBacks());
        assertEquals(
                Decision.fromOverLimitCache(Decision.denied(2, 0, 49_999_999_999L, 49_999_999_999L)),
                t.refusal("k", 1, 1));
    }

    @Test
    void aJointRequestOfTwoStoresTakesAndGivesBackAndDropsWhatItGaveBack() {
        // Two stores: the joint request takes from the first, is refused by the second, gives back to the first.
        SharedRateLimiter first = limiter(1, new SharedJoint(null, options(100)));
        CountingStore otherStore = new CountingStore();
        LimiterConfig c = config(Algorithm.FIXED_WINDOW, 1, false);
        SharedRateLimiter second = SharedRateLimiter.create(c, otherStore.decider(c), options(100));
        assertTrue(second.tryAcquire("b").allowed());
        assertFalse(second.tryAcquire("b").allowed()); // b is over its limit, and cached

        JointDecision j = RateLimiter.tryAcquireAll(new Acquisition(first, "a", 1), new Acquisition(second, "b", 1));
        assertFalse(j.allowed());
        assertEquals(1, store.giveBacks.get(), "a was taken, then given back");
        assertTrue(j.decision(1).cached(), "b refused from the cache");
        Decision a = first.tryAcquire("a");
        assertTrue(a.allowed(), "the permit of a came back");
    }

    @Test
    void aJointRequestIsRefusedWithoutTheStoreOnlyWhenEveryPartIsCached() {
        SharedJoint joint = new SharedJoint(null, options(100));
        SharedRateLimiter perMinute = limiter(1, joint);
        LimiterConfig c = config(Algorithm.FIXED_WINDOW, 3, false);
        SharedRateLimiter larger = SharedRateLimiter.create(c, store.decider(c), options(100), joint);
        assertTrue(perMinute.tryAcquire("a").allowed());
        assertFalse(perMinute.tryAcquire("a").allowed()); // a cached
        int calls = store.calls.get();

        // b is not cached: the store decides (take and give back: b taken, a refused from the cache, b given back)
        JointDecision j =
                RateLimiter.tryAcquireAll(new Acquisition(larger, "b", 1), new Acquisition(perMinute, "a", 1));
        assertFalse(j.allowed());
        assertTrue(j.decision(1).cached());
        assertTrue(store.calls.get() > calls);
        assertEquals(3, larger.peek("b", 3).remaining(), "nothing of b stays taken");
    }

    /**
     * A store that cannot bound its calls by a deadline (no joint decider here, as PostgreSQL's and MongoDB's calls
     * run on the service's store pool) still answers a cached refusal on the caller's thread: it needs no call.
     */
    @Test
    void aCachedRefusalIsDecidedOnTheCallersThreadWhateverTheStore() {
        SharedRateLimiter l = limiter(1, new SharedJoint(null, options(100)));
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        List<Acquisition> k = List.of(new Acquisition(l, "k", 1));
        assertNull(RateLimiter.tryAcquireAllBy(k, deadline), "a store call this thread cannot bound");
        assertTrue(l.tryAcquire("k").allowed());
        assertFalse(l.tryAcquire("k").allowed());
        JointDecision here = RateLimiter.tryAcquireAllBy(k, deadline);
        assertTrue(here != null && here.decision(0).cached());
        assertEquals(2, store.calls.get());
    }

    @Test
    void theBoundEvictsTheOldestEntry() {
        SharedJoint joint = new SharedJoint(null, options(2));
        LimiterConfig c = config(Algorithm.FIXED_WINDOW, 1, false);
        SharedRateLimiter l = SharedRateLimiter.create(c, store.decider(c), options(2), joint);
        for (String k : List.of("k1", "k2", "k3")) {
            assertTrue(l.tryAcquire(k).allowed());
            assertFalse(l.tryAcquire(k).allowed());
        }
        assertEquals(2, joint.overLimitCacheSize());
        assertEquals(6, store.calls.get());
        assertTrue(l.tryAcquire("k3").cached());
        assertTrue(l.tryAcquire("k2").cached());
        assertFalse(l.tryAcquire("k1").cached(), "k1 was added first, and evicted");
        assertEquals(7, store.calls.get());
        assertEquals(2, joint.overLimitCacheSize());
        assertFalse(l.tryAcquire("k2").cached(), "k1 again evicted k2, now the oldest");
    }

    @Test
    void aClosedLimiterDropsItsEntries() {
        SharedJoint joint = new SharedJoint(null, options(100));
        SharedRateLimiter l = limiter(1, joint);
        assertTrue(l.tryAcquire("k").allowed());
        assertFalse(l.tryAcquire("k").allowed());
        assertEquals(1, joint.overLimitCacheSize());
        l.close();
        assertEquals(0, joint.overLimitCacheSize());
    }

    @Test
    void aLimiterThatCountsRejectionsIsNeverCached() {
        LimiterConfig c = config(Algorithm.FIXED_WINDOW, 1, true);
        SharedRateLimiter l = SharedRateLimiter.create(c, store.decider(c), options(100));
        assertTrue(l.tryAcquire("k").allowed());
        assertFalse(l.tryAcquire("k").allowed());
        assertFalse(l.tryAcquire("k").cached());
        assertEquals(3, store.calls.get());
    }

    @Test
    void noCacheByDefault() {
        LimiterConfig c = config(Algorithm.FIXED_WINDOW, 1, false);
        SharedRateLimiter l = SharedRateLimiter.create(c, store.decider(c), options(0));
        assertTrue(l.tryAcquire("k").allowed());
        assertFalse(l.tryAcquire("k").allowed());
        assertFalse(l.tryAcquire("k").cached());
        assertEquals(3, store.calls.get());
    }

    @Test
    void aTokenBucketsRefusalExpiresWhenItsTokenIsBack() {
        LimiterConfig c = config(Algorithm.TOKEN_BUCKET, 60, false); // a token a second
        SharedRateLimiter l = SharedRateLimiter.create(c, store.decider(c), options(100));
        assertTrue(l.tryAcquire("k", 60).allowed());
        Decision refused = l.tryAcquire("k");
        assertEquals(Duration.ofSeconds(1), refused.retryAfter());
        clock.set(clock.instant().plusMillis(999));
        assertTrue(l.tryAcquire("k").cached());
        clock.set(clock.instant().plusMillis(1));
        assertTrue(l.tryAcquire("k").allowed());
        assertEquals(3, store.calls.get());
    }
}
