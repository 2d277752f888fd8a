package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.FreshJvm;
import dev.sluice.testkit.LogCapture;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The store as a new user meets it in production: built as the README shows (the builder's defaults, no client
 * options), in fresh processes, through a Redis that goes down and comes back.
 *
 * <p>The timing bounds here are far above what the behaviour takes (printed by each test), and far below what the
 * behaviour it replaces took, so a loaded machine slows them without turning them red: a call during an outage is
 * answered at once where waiting for the timeout takes the whole timeout; recovery takes a fraction of a second where
 * Lettuce's own reconnect backs off for seconds (up to 30 s).
 */
class RedisProductionTest {

    /** The median call during an outage must be below this; with the store's default timeout it was 250 ms. */
    private static final long OUTAGE_CALL_MILLIS = 50;
    /** Correct answers must be back within this after Redis accepts connections again. */
    private static final long RECOVERY_MILLIS = 2_000;

    /**
     * Five fresh JVMs in a row, each building the store and a five-an-hour limiter and making six calls at once on a
     * new key right after {@code build()}: exactly five pass, and none is a failure-policy answer. Before the store
     * waited for its connection in {@code build()}, every run admitted six (the connection took longer than the
     * 250 ms call timeout, and fail-open admitted without counting).
     */
    @Test
    void aFreshProcessAdmitsExactlyFiveOfSixCallsAtOnceEveryRun() {
        try (RedisServer server = RedisServers.start()) {
            for (int run = 1; run <= 5; run++) {
                String key = "fresh:" + UUID.randomUUID();
                List<String> out =
                        FreshJvm.start(SixCalls.class, server.uri(), key).await(Await.GENEROUS);
                assertEquals(List.of("allowed=5 failed=0 failures=0"), out, "run " + run);
            }
        }
    }

    /**
     * Redis killed under a limiter built with the defaults: every call is answered by the failure policy at once
     * (fail-open, marked failed), not after the 250 ms timeout; once Redis is back, answers are Redis's again within
     * about 0.1 s, counted from the moment it accepts connections, without restarting anything.
     */
    @Test
    void duringAnOutageCallsTakeMicrosecondsAndAfterItCorrectAnswersReturnWithinASecond() {
        try (RedisServer server = RedisServers.start()) {
            RedisClient client = RedisClient.create(server.uri());
            try (RedisStore store =
                    RedisStore.builder(client).failureListener(e -> {}).build()) {
                assertTrue(store.isConnected(), "connected once built");
                RateLimiter limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                        .limit(3, Duration.ofHours(1))
                        .store(store)
                        .build();
                String key = "outage:" + UUID.randomUUID();
                assertFalse(limiter.tryAcquire(key).failed());

                server.stop();
                long[] nanos = new long[200];
                for (int i = 0; i < nanos.length; i++) {
                    long start = System.nanoTime();
                    Decision d = limiter.tryAcquire(key);
                    nanos[i] = System.nanoTime() - start;
                    assertTrue(d.allowed() && d.failed(), "fail-open during the outage: " + d);
                }
                assertFalse(store.isConnected());
                Arrays.sort(nanos);
                long medianMicros = TimeUnit.NANOSECONDS.toMicros(nanos[nanos.length / 2]);
                long worstMicros = TimeUnit.NANOSECONDS.toMicros(nanos[nanos.length - 1]);
                System.out.printf(
                        "RedisProductionTest: a call during the outage: median %d us, worst %d us%n",
                        medianMicros, worstMicros);
                assertTrue(
                        medianMicros < OUTAGE_CALL_MILLIS * 1000,
                        "median " + medianMicros + " us during the outage, want under " + OUTAGE_CALL_MILLIS + " ms");

                server.restart();
                long back = System.nanoTime();
                Decision d = limiter.tryAcquire(key);
                while (d.failed()) {
                    Await.until("1 ms passed", Await.GENEROUS, () -> System.nanoTime() - back > 0);
                    d = limiter.tryAcquire(key);
                }
                long recoveryMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - back);
                System.out.printf("RedisProductionTest: correct answers %d ms after Redis was back%n", recoveryMillis);
                assertTrue(
                        recoveryMillis < RECOVERY_MILLIS,
                        "correct answers " + recoveryMillis + " ms after Redis was back, want under " + RECOVERY_MILLIS
                                + " ms");
                // the restarted server is empty: a new window
                assertEquals(Decision.allowed(3, 2, d.resetAfter().toNanos()), d);
                assertTrue(store.isConnected());
            } finally {
                client.shutdown();
            }
        }
    }

    /**
     * With no listener, an outage is logged, but as a count per minute, not a line per call: 500 failed calls write
     * one warning, which names the store, the count and the failure policy.
     */
    @Test
    void anOutageWithNoListenerIsLoggedOnceAMinuteNotOnceACall() {
        List<String> lines;
        try (LogCapture log = LogCapture.start();
                RedisServer server = RedisServers.start()) {
            RedisClient client = RedisClient.create(server.uri());
            try (RedisStore store = RedisStore.builder(client).build()) {
                RateLimiter limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                        .limit(3, Duration.ofHours(1))
                        .store(store)
                        .build();
                server.stop();
                for (int i = 0; i < 500; i++) {
                    assertTrue(limiter.tryAcquire("logged").failed());
                }
            } finally {
                client.shutdown();
            }
            lines = log.messagesContaining("store failure");
        }
        assertEquals(1, lines.size(), "warnings for 500 failures: " + lines);
        assertTrue(lines.get(0).contains("FAIL_OPEN"), lines.get(0));
    }

    /** A closed store does not allow: its limiters throw, naming the closed store. */
    @Test
    void aClosedStoreThrowsInsteadOfAllowing() {
        try (RedisServer server = RedisServers.start()) {
            RedisClient client = RedisClient.create(server.uri());
            try {
                RedisStore store = RedisStore.builder(client).build();
                RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
                        .limit(3, Duration.ofHours(1))
                        .store(store)
                        .build();
                assertTrue(limiter.tryAcquire("closed").allowed());
                store.close();
                IllegalStateException e = assertThrows(IllegalStateException.class, () -> limiter.tryAcquire("closed"));
                assertTrue(e.getMessage().contains("closed"), e.getMessage());
                assertThrows(IllegalStateException.class, () -> limiter.peek("closed", 1));
                assertThrows(IllegalStateException.class, () -> limiter.reserve("closed", 1));
            } finally {
                client.shutdown();
            }
        }
    }
}
