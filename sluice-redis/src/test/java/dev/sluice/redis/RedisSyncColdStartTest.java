package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.sync.SynchronizedStore;
import dev.sluice.testkit.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Joining a key on a real Redis: instance A counts {@code L - 2} and flushes; instance B, a synchronized store on a
 * counter store of its own ({@link RedisStore#counterStoreBuilder}) on the same server, reads the key's record as it
 * takes the key up, and admits exactly the 2 left, alone and in a joint request. Before synchronized mode read a key
 * on taking it up, B admitted the whole limit until its first refresh.
 *
 * <p>The clock is moved by hand and starts at the next whole hour, so that every record's expiry (set by
 * {@code PEXPIREAT} from that clock) lies in the real future.
 */
class RedisSyncColdStartTest {

    private static final int L = 10;

    private final ManualClock clock =
            new ManualClock(Instant.now().truncatedTo(ChronoUnit.HOURS).plus(1, ChronoUnit.HOURS));
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    private static RedisCounterStore counters() {
        return RedisStore.counterStoreBuilder(Servers.client())
                .timeout(Servers.PATIENCE)
                .build();
    }

    private static SynchronizedStore instance(RedisCounterStore counters) {
        return SynchronizedStore.builder(counters).manualRounds().build();
    }

    private RateLimiter limiter(SynchronizedStore store, Algorithm algorithm, long limit, Duration window) {
        return RateLimiter.builder(algorithm)
                .limit(limit, window)
                .clock(clock)
                .store(store)
                .build();
    }

    @Test
    void anInstanceJoiningAKeyWithTwoLeftAdmitsExactlyTwo() {
        String k = run + ":join";
        try (RedisCounterStore toA = counters();
                RedisCounterStore toB = counters()) {
            SynchronizedStore a = instance(toA);
            RateLimiter atA = limiter(a, Algorithm.SLIDING_TAIL, L, Duration.ofMinutes(1));
            assertEquals(L - 2, admitted(atA, k, L - 2));
            assertTrue(a.flush());

            SynchronizedStore b = instance(toB);
            RateLimiter atB = limiter(b, Algorithm.SLIDING_TAIL, L, Duration.ofMinutes(1));
            assertEquals(2, admitted(atB, k, L), "B decides on A's 8 from its first request");
            assertEquals(1, b.stats().storeCalls(), "one read, as B took the key up");
            assertTrue(b.flush());
            assertEquals(0, b.stats().conflicts());
            CounterKey id = new CounterKey(SharedStoreOptions.shape(atA.config()), k);
            assertEquals(L, toA.load(List.of(id)).get(0).total());
            assertTrue(a.refresh());
            assertFalse(atA.tryAcquire(k).allowed());
        }
    }

    @Test
    void aJointRequestJoiningKeysWithTwoLeftAdmitsExactlyTwo() {
        String k = run + ":joint";
        try (RedisCounterStore toA = counters();
                RedisCounterStore toB = counters()) {
            SynchronizedStore a = instance(toA);
            RateLimiter minuteA = limiter(a, Algorithm.FIXED_WINDOW, L, Duration.ofMinutes(1));
            RateLimiter hourA = limiter(a, Algorithm.SLIDING_TAIL, 100, Duration.ofHours(1));
            assertEquals(L - 2, jointAdmitted(minuteA, hourA, k, L - 2));
            assertTrue(a.flush());

            SynchronizedStore b = instance(toB);
            RateLimiter minuteB = limiter(b, Algorithm.FIXED_WINDOW, L, Duration.ofMinutes(1));
            RateLimiter hourB = limiter(b, Algorithm.SLIDING_TAIL, 100, Duration.ofHours(1));
            assertEquals(2, jointAdmitted(minuteB, hourB, k, L));
            assertEquals(2, b.stats().storeCalls(), "one read per limit's key, as B took them up");
            assertEquals(100 - L, hourB.peek(k, 1).remaining());
        }
    }

    private static int admitted(RateLimiter limiter, String key, int requests) {
        int n = 0;
        for (int j = 0; j < requests; j++) {
            if (limiter.tryAcquire(key).allowed()) {
                n++;
            }
        }
        return n;
    }

    private static int jointAdmitted(RateLimiter first, RateLimiter second, String key, int requests) {
        int n = 0;
        for (int j = 0; j < requests; j++) {
            if (RateLimiter.tryAcquireAll(Acquisition.of(first, key), Acquisition.of(second, key))
                    .allowed()) {
                n++;
            }
        }
        return n;
    }
}
