package dev.sluice.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.RateLimiter;
import dev.sluice.TestClock;
import dev.sluice.internal.JointDecider;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What the in-memory joint decider adds to the contract: one atomic step over limiters of different stores, no
 * deadlock whatever order requests name their keys in, the bound on keys, and close.
 */
class InMemoryJointTest {

    private final TestClock clock = new TestClock();

    private RateLimiter limiter(long limit, Duration window, InMemoryStore store) {
        return RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(limit, window)
                .clock(clock)
                .store(store)
                .build();
    }

    @Test
    void limitersOfDifferentInMemoryStoresDecideInOneStep() {
        RateLimiter a = limiter(5, Duration.ofMinutes(1), InMemoryStore.create());
        RateLimiter b = limiter(5, Duration.ofMinutes(1), InMemoryStore.create());
        assertTrue(JointDecider.of(a) == JointDecider.of(b), "one decider for every in-memory limiter");
        JointDecision d = RateLimiter.tryAcquireAll(Acquisition.of(a, "k", 2), Acquisition.of(b, "k", 3));
        assertTrue(d.allowed(), d.toString());
        assertEquals(3, a.peek("k", 1).remaining());
        assertEquals(2, b.peek("k", 1).remaining());
    }

    /**
     * 16 threads, half naming (x, y) and half (y, x) under two limiters, with both limits at 400 and 3,200 requests:
     * no deadlock, and each key of each limiter admits exactly its limit, all of it by requests that passed both.
     */
    @Test
    void requestsNamingKeysInOppositeOrdersNeitherDeadlockNorOverAdmit() throws Exception {
        RateLimiter first = limiter(400, Duration.ofHours(1), InMemoryStore.create());
        RateLimiter second = limiter(400, Duration.ofHours(1), InMemoryStore.create());
        List<Acquisition> forward =
                List.of(Acquisition.of(first, "x"), Acquisition.of(second, "y"), Acquisition.of(first, "y"));
        List<Acquisition> backward =
                List.of(Acquisition.of(first, "y"), Acquisition.of(second, "y"), Acquisition.of(first, "x"));
        AtomicInteger admitted = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                List<Acquisition> parts = t % 2 == 0 ? forward : backward;
                futures.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 200; i++) {
                        if (RateLimiter.tryAcquireAll(parts).allowed()) {
                            admitted.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : futures) {
                f.get(120, TimeUnit.SECONDS); // a deadlock would fail here, not hang the build
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(400, admitted.get(), "requests that passed all three parts");
        assertEquals(0, first.peek("x", 1).remaining(), "first:x");
        assertEquals(0, first.peek("y", 1).remaining(), "first:y");
        assertEquals(0, second.peek("y", 1).remaining(), "second:y");
    }

    @Test
    void aNewKeyWithNoRoomUnderTheBoundRefusesTheRequestAndTakesNothing() {
        RateLimiter bounded = limiter(
                5, Duration.ofMinutes(1), InMemoryStore.builder().maximumKeys(1).build());
        RateLimiter other = limiter(5, Duration.ofMinutes(1), InMemoryStore.create());
        assertTrue(bounded.tryAcquire("held").allowed(), "the one slot taken by a live key");
        JointDecision d = RateLimiter.tryAcquireAll(Acquisition.of(other, "k"), Acquisition.of(bounded, "new"));
        assertFalse(d.allowed(), d.toString());
        Decision noRoom = d.decision(1);
        assertFalse(noRoom.allowed(), noRoom.toString());
        assertEquals(Duration.ofSeconds(60), noRoom.retryAfter(), "until the live key's window is over");
        assertEquals(5, other.peek("k", 1).remaining(), "nothing taken from the other limit");

        clock.advance(Duration.ofMinutes(1));
        JointDecision later = RateLimiter.tryAcquireAll(Acquisition.of(other, "k"), Acquisition.of(bounded, "new"));
        assertTrue(later.allowed(), "the idle key was evicted to make room: " + later);
        assertEquals(4, other.peek("k", 1).remaining());
    }

    /**
     * A request with more new keys than the bound has room for: the room it makes is only the slots its own new keys
     * had just taken, so it is refused (before, it made room and started again for ever, one pass over the map a turn),
     * and the states it created, never used, are evicted as idle when room is needed (before, a state never used was
     * never evicted: {@code now - Long.MIN_VALUE} overflowed).
     */
    @Test
    void aRequestWithMoreNewKeysThanTheBoundHoldsIsRefusedNotRetriedForEver() {
        RateLimiter bounded = limiter(
                5, Duration.ofMinutes(1), InMemoryStore.builder().maximumKeys(3).build());
        List<Acquisition> five = new ArrayList<>();
        for (String key : List.of("a", "b", "c", "d", "e")) {
            five.add(Acquisition.of(bounded, key));
        }
        JointDecision d = assertTimeoutPreemptively(
                Duration.ofSeconds(10), () -> RateLimiter.tryAcquireAll(five), "a request retried for ever");
        assertFalse(d.allowed(), d.toString());
        for (int i = 0; i < 5; i++) {
            assertTrue(d.decision(i).remaining() <= 5, d.toString());
        }
        long refusedAsNew = d.decisions().stream()
                .filter(x -> !x.allowed() && x.remaining() == 0)
                .count();
        assertTrue(refusedAsNew >= 1, "a new key with no room answers as one: " + d);
        assertTrue(
                d.decisions().stream().filter(x -> !x.allowed()).allMatch(x -> !x.retryAfter()
                        .isZero()),
                d.toString());
        for (String key : List.of("a", "b", "c", "d", "e")) {
            assertEquals(5, bounded.peek(key, 1).remaining(), "nothing taken from " + key);
        }
        // The states the refused request created, never used, are idle: evicted to make room for as many new keys.
        JointDecision three = RateLimiter.tryAcquireAll(
                Acquisition.of(bounded, "c"), Acquisition.of(bounded, "d"), Acquisition.of(bounded, "e"));
        assertTrue(three.allowed(), "as many new keys as the bound holds: " + three);
    }

    @Test
    void closeDropsEveryKey() {
        InMemoryRateLimiter limiter = (InMemoryRateLimiter) limiter(5, Duration.ofMinutes(1), InMemoryStore.create());
        for (int i = 0; i < 100; i++) {
            limiter.tryAcquire("k" + i);
        }
        assertEquals(100, limiter.keyCount());
        limiter.close();
        assertEquals(0, limiter.keyCount(), "keys held after close");
        assertTrue(limiter.isClosed());
    }

    /**
     * A clock read once per joint request, whatever the number of limiters on it: parts on the same clock are decided at
     * one instant, so a clock that moves between two reads cannot put them in different windows. A limiter on another
     * clock reads its own.
     */
    @Test
    void aJointRequestReadsEachClockOnce() {
        TickingClock shared = new TickingClock();
        TickingClock other = new TickingClock();
        RateLimiter a = ticking(shared);
        RateLimiter b = ticking(shared);
        RateLimiter c = ticking(other);
        JointDecision d = RateLimiter.tryAcquireAll(
                Acquisition.of(a, "k"), Acquisition.of(b, "k"), Acquisition.of(c, "k"), Acquisition.of(a, "j"));
        assertTrue(d.allowed(), d.toString());
        assertEquals(1, shared.reads.get(), "reads of the clock three parts share");
        assertEquals(1, other.reads.get(), "reads of the clock of the third limiter");
        for (int i = 1; i < 4; i++) {
            assertEquals(d.decision(0).resetAfterNanos(), d.decision(i).resetAfterNanos(), "part " + i + ": " + d);
        }
    }

    /** A fixed window of a second on {@code clock}, whose every read moves it on by a third of a second. */
    private static RateLimiter ticking(TickingClock clock) {
        return RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(10, Duration.ofSeconds(1))
                .clock(clock)
                .build();
    }

    /** A clock that moves on by a third of a second at each read, and counts its reads. */
    private static final class TickingClock extends Clock {
        final AtomicInteger reads = new AtomicInteger();

        @Override
        public Instant instant() {
            return TestClock.NOON.plusMillis(333L * reads.incrementAndGet());
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException("not needed here");
        }
    }
}
