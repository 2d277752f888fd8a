package dev.sluice.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.TestClock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The bound on keys: reached, it denies new keys with a meaningful retryAfter and never evicts a live key. */
class InMemoryBoundTest {

    private final TestClock clock = new TestClock();
    private final ExecutorService pool = Executors.newFixedThreadPool(8);

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    private RateLimiter limiter(int maximumKeys) {
        return RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(3, Duration.ofSeconds(60))
                .clock(clock)
                .store(InMemoryStore.builder().maximumKeys(maximumKeys).build())
                .build();
    }

    @Test
    void peekAtTheBoundAnswersWhatTryAcquireWould() {
        RateLimiter limiter = limiter(1);
        clock.at("12:00:00");
        assertTrue(limiter.tryAcquire("a").allowed());
        clock.at("12:00:20");
        Decision peek = limiter.peek("b", 1);
        Decision acquire = limiter.tryAcquire("b");
        assertFalse(acquire.allowed(), acquire.toString());
        assertEquals(Duration.ofSeconds(40), acquire.retryAfter(), "until key a's window ends: " + acquire);
        assertEquals(acquire, peek, "peek of a new key when no room can be made");
        assertTrue(limiter.tryAcquire("a").allowed(), "a key held keeps being decided");
        clock.at("12:01:00");
        assertEquals(3, limiter.peek("b", 1).remaining(), "room once key a is idle");
        assertTrue(limiter.tryAcquire("b").allowed());
    }

    /**
     * Eight threads ask for eight new keys at once against a bound of one key, again and again: exactly one is
     * admitted each round, and every other is told to retry when the live key's window ends, never some
     * arbitrary far future (a scan that found no live key, or one that evicted but lost the room to another
     * thread, used to report {@code Long.MIN_VALUE − now} or {@code Long.MAX_VALUE − now}).
     */
    @Test
    void newKeysRacingForTheLastRoomAreToldWhenTheLiveKeyExpires() throws Exception {
        for (int round = 0; round < 5000; round++) {
            clock.at("12:00:00");
            RateLimiter limiter = limiter(1);
            if (round % 2 == 1) {
                assertTrue(limiter.tryAcquire("old").allowed());
                clock.at("12:01:00"); // "old" is idle now: one racer evicts it, then they race for its room
            }
            Duration expected = Duration.ofSeconds(60);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Decision>> futures = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                String key = "k" + t;
                futures.add(pool.submit(() -> {
                    start.await();
                    return limiter.tryAcquire(key);
                }));
            }
            start.countDown();
            int allowed = 0;
            for (Future<Decision> f : futures) {
                Decision d = f.get();
                if (d.allowed()) {
                    allowed++;
                } else {
                    assertEquals(expected, d.retryAfter(), "round " + round + ": " + d);
                }
            }
            assertEquals(1, allowed, "round " + round);
        }
    }

    /**
     * Forty keys sharing a bound of eight, 3 per 100 ms each, random traffic: no key ever has more than 3 admitted
     * within 100 ms, a key is refused for want of room only when every held key is live, and such a refusal names
     * the wait until the earliest of them is idle (at most the window).
     */
    @Test
    void atTheBoundNoKeyIsEverAdmittedOverItsLimit() {
        RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_LOG)
                .limit(3, Duration.ofMillis(100))
                .clock(clock)
                .store(InMemoryStore.builder().maximumKeys(8).build())
                .build();
        Map<String, Deque<Long>> admitted = new HashMap<>();
        Random random = new Random(7);
        int noRoom = 0;
        int allowed = 0;
        for (int i = 0; i < 5_000; i++) {
            clock.advance(Duration.ofMillis(random.nextInt(10)));
            long now = clock.nanos();
            String key = "k" + random.nextInt(40);
            Deque<Long> times = admitted.computeIfAbsent(key, k -> new ArrayDeque<>());
            while (!times.isEmpty() && times.peekFirst() <= now - 100_000_000L) {
                times.removeFirst();
            }
            Decision d = limiter.tryAcquire(key);
            if (d.allowed()) {
                times.addLast(now);
                allowed++;
                assertTrue(times.size() <= 3, key + " admitted " + times.size() + " within 100 ms at request " + i);
            } else {
                assertTrue(d.retryAfter().compareTo(Duration.ofMillis(100)) <= 0, d.toString());
                assertTrue(d.retryAfter().compareTo(Duration.ZERO) > 0, d.toString());
                noRoom += times.size() < 3 ? 1 : 0; // not its own limit: no room for it
            }
        }
        assertTrue(noRoom > 100, "refused for want of room: " + noRoom);
        assertTrue(allowed > 1_000, "admitted: " + allowed);
    }

    @Test
    void keysHeldAtTheBoundAreDecidedExactlyAsWithoutABound() {
        RateLimiter bounded = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                .limit(3, Duration.ofSeconds(60))
                .clock(clock)
                .store(InMemoryStore.builder().maximumKeys(4).build())
                .build();
        RateLimiter free = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                .limit(3, Duration.ofSeconds(60))
                .clock(clock)
                .build();
        for (int k = 0; k < 4; k++) {
            assertEquals(free.tryAcquire("held" + k), bounded.tryAcquire("held" + k));
        }
        for (int i = 0; i < 50; i++) {
            clock.advance(Duration.ofSeconds(3));
            String held = "held" + (i % 4);
            assertEquals(free.tryAcquire(held, 1 + i % 3), bounded.tryAcquire(held, 1 + i % 3), "request " + i);
            assertFalse(bounded.tryAcquire("new" + i).allowed(), "no room for new" + i);
        }
    }

    /** Eight threads ask for the same new key at once against a bound of one key: all of them reach that key. */
    @Test
    void threadsRacingToCreateTheSameKeyAllReachIt() throws Exception {
        for (int round = 0; round < 2000; round++) {
            RateLimiter limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                    .limit(100, Duration.ofSeconds(60))
                    .clock(clock)
                    .store(InMemoryStore.builder().maximumKeys(1).build())
                    .build();
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Decision>> futures = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                futures.add(pool.submit(() -> {
                    start.await();
                    return limiter.tryAcquire("same");
                }));
            }
            start.countDown();
            for (Future<Decision> f : futures) {
                Decision d = f.get();
                assertTrue(d.allowed(), "round " + round + ": " + d);
            }
            assertEquals(92, limiter.peek("same", 1).remaining(), "round " + round);
        }
    }
}
