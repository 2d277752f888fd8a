package dev.sluice.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.TestClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
        return RateLimiter.builder(Algorithm.FIXED_WINDOW).limit(3, Duration.ofSeconds(60)).clock(clock)
                .store(InMemoryStore.builder().maximumKeys(maximumKeys).build()).build();
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
                clock.at("12:01:00");  // "old" is idle now: one racer evicts it, then they race for its room
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
}
