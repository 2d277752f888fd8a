package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.JointDecision;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterWrite;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.ThrowingListener;
import io.lettuce.core.RedisClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A listener that throws from every method changes no decision of the Redis store: not a single decision, not a joint
 * one, not a failure policy's answer while Redis is unreachable. And it is told of every failure and call, the
 * counter store's too.
 */
class RedisListenerTest {

    private static final Instant NOW = Instant.parse("2026-01-01T12:00:05Z");

    @Test
    void aThrowingListenerChangesNoDecision() {
        ThrowingListener storeListener = new ThrowingListener();
        ThrowingListener limiterListener = new ThrowingListener();
        ManualClock clock = new ManualClock(NOW);
        String key = "listened:" + UUID.randomUUID();
        try (RedisStore store = RedisContractTest.contractStore(
                RedisStore.builder(Servers.client()).listener(storeListener))) {
            RateLimiter r0 = RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER)
                    .limit(3, Duration.ofMinutes(1))
                    .clock(clock)
                    .listener(limiterListener)
                    .store(store)
                    .build();
            RateLimiter r1 = RateLimiter.builder(Algorithm.LEAKY_BUCKET)
                    .limit(5, Duration.ofMinutes(1))
                    .clock(clock)
                    .store(store)
                    .build();
            RateLimiter m0 = RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER)
                    .limit(3, Duration.ofMinutes(1))
                    .clock(clock)
                    .build();
            RateLimiter m1 = RateLimiter.builder(Algorithm.LEAKY_BUCKET)
                    .limit(5, Duration.ofMinutes(1))
                    .clock(clock)
                    .build();
            for (int i = 0; i < 5; i++) {
                assertEquals(RedisJointTest.micros(m0.tryAcquire(key)), r0.tryAcquire(key), "single request " + i);
                JointDecision expected = RateLimiter.tryAcquireAll(Acquisition.of(m1, key), Acquisition.of(m0, key));
                JointDecision actual = RateLimiter.tryAcquireAll(Acquisition.of(r1, key), Acquisition.of(r0, key));
                assertEquals(RedisJointTest.micros(expected), actual, "joint request " + i);
                clock.advance(Duration.ofSeconds(7));
            }
        }
        assertEquals(10, limiterListener.decisions(), "decisions the limiter's listener heard");
        assertEquals(15, storeListener.decisions(), "decisions the store's listener heard (5 single, 5 x 2 joint)");
        assertEquals(10, limiterListener.calls(), "store calls the limiter's listener heard");
        assertEquals(15, storeListener.calls(), "store calls the store's listener heard (5 single, 5 x 2 joint)");
        assertEquals(0, storeListener.failures().size(), "failures");
    }

    @Test
    void aThrowingListenerLeavesTheFailOpenAnswerOfAnUnreachableRedis() throws IOException {
        RedisClient client = RedisClient.create("redis://127.0.0.1:" + closedPort());
        client.setOptions(RedisStore.recommendedClientOptions());
        ThrowingListener listener = new ThrowingListener();
        try (RedisStore store = RedisStore.builder(client)
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.FAIL_OPEN)
                .timeout(Duration.ofMillis(500))
                .listener(listener)
                .build()) {
            ManualClock clock = new ManualClock(NOW);
            RateLimiter a = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                    .limit(10, Duration.ofSeconds(1))
                    .clock(clock)
                    .listener(listener)
                    .store(store)
                    .build();
            RateLimiter b = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                    .limit(100, Duration.ofMinutes(1))
                    .clock(clock)
                    .store(store)
                    .build();
            Decision failOpen = Decision.fromFailurePolicy(Decision.allowed(10, 8, 0));
            assertEquals(failOpen, a.tryAcquire("k", 2), "a single request while Redis is unreachable");

            JointDecision joint = RateLimiter.tryAcquireAll(Acquisition.of(a, "k", 2), Acquisition.of(b, "k", 3));
            assertEquals(
                    List.of(failOpen, Decision.fromFailurePolicy(Decision.allowed(100, 97, 0))),
                    joint.decisions(),
                    "a joint request while Redis is unreachable");
            assertTrue(joint.allowed(), "fail open: " + joint);
        } finally {
            client.shutdown();
        }
        // a: its own listener and the store's; b: the store's. Single: 2 each; joint: 2 for a, 1 for b
        assertEquals(5, listener.failures().size(), "failures heard");
        assertEquals(5, listener.calls(), "store calls heard");
        assertEquals(5, listener.decisions(), "decisions heard");
    }

    /** The counter store of synchronized mode tells its listener of its calls and failures, which still throw. */
    @Test
    void theCounterStoreTellsAThrowingListenerAndStillAnswers() throws IOException {
        ThrowingListener listener = new ThrowingListener();
        CounterKey key = new CounterKey("fw:60000000000", "listened:" + UUID.randomUUID());
        try (RedisCounterStore counters = RedisStore.counterStoreBuilder(Servers.client())
                .listener(listener)
                .build()) {
            assertEquals(List.of(CounterSnapshot.absent()), counters.load(List.of(key)), "a record never written");
            assertArrayEquals(
                    new boolean[] {true},
                    counters.compareAndSet(List.of(new CounterWrite(
                            key,
                            CounterSnapshot.ABSENT,
                            7,
                            Map.of(1L, 2L),
                            (System.currentTimeMillis() + 60_000) * 1_000_000))),
                    "the first write");
            assertEquals(List.of(new CounterSnapshot(7, Map.of(1L, 2L))), counters.load(List.of(key)), "read back");
        }
        assertEquals(3, listener.calls(), "calls heard");
        assertEquals(0, listener.failures().size(), "failures heard");

        RedisClient client = RedisClient.create("redis://127.0.0.1:" + closedPort());
        client.setOptions(RedisStore.recommendedClientOptions());
        try (RedisCounterStore counters = RedisStore.counterStoreBuilder(client)
                .timeout(Duration.ofMillis(500))
                .listener(listener)
                .build()) {
            SluiceException e = assertThrows(SluiceException.class, () -> counters.load(List.of(key)));
            assertFalse(e.getMessage().contains("throws"), "the store's failure, not the listener's: " + e);
        } finally {
            client.shutdown();
        }
        assertEquals(4, listener.calls(), "calls heard, the failed one too");
        assertEquals(1, listener.failures().size(), "failures heard");
        assertEquals(0, listener.decisions(), "a counter store makes no decision");
    }

    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort(); // closed again: nothing listens there
        }
    }
}
