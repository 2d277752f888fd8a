package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.StoreBatchingContract;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A Redis that goes down, is down from the start, or stalls: every call answers by the failure policy (never a hang,
 * never a raw driver exception), and once Redis is back the same limiter decides correctly again, without a restart.
 *
 * <p>Each test runs its own server, which it kills (as a crash) and restarts on the same port, empty.
 *
 * <p>These tests are about the store's timeout (2 s), so it is short next to other tests' ({@link Servers#PATIENCE});
 * it is still wide enough that a call Redis answers, made once the client is connected (each test waits for that),
 * never runs out of it on a loaded machine. A stall ({@code CLIENT PAUSE}) lasts {@value #PAUSE_MILLIS} ms, five
 * times the timeout, so that the call made during it is cut off by the timeout before the stall ends even if the test
 * thread waits seconds for the CPU before making it. The {@code assertTimeoutPreemptively} bounds (30 s) are hang detectors, not
 * timing claims; that the store's own timeout ended a wait is shown by the failure's cause instead.
 */
class RedisOutageTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** The deadline of the stall test's requests: it waits for them, not for the pause. */
    private static final Duration STALL_TIMEOUT = Duration.ofMillis(300);

    private static final long PAUSE_MILLIS = 10_000;
    private static final Duration FAIL_CLOSED_RETRY = Duration.ofSeconds(7);
    private static final Duration HANG = Duration.ofSeconds(30);
    private static final Duration RECOVERY = Await.GENEROUS;
    private static final Duration UNTIL_12_01 = Duration.ofSeconds(55);

    static Stream<Arguments> policies() {
        return Stream.of(
                Arguments.of(FailurePolicy.FAIL_OPEN, true),
                Arguments.of(FailurePolicy.FAIL_CLOSED, true),
                Arguments.of(FailurePolicy.THROW, true),
                Arguments.of(FailurePolicy.FAIL_CLOSED, false));
    }

    @ParameterizedTest(name = "{0}, recommended client options: {1}")
    @MethodSource("policies")
    void aServerStoppedMidRunGetsThePolicyThenCorrectDecisionsOnceBack(FailurePolicy policy, boolean recommended) {
        try (RedisServer server = RedisServers.start()) {
            RedisClient client = RedisClient.create(server.uri());
            if (recommended) {
                client.setOptions(RedisStore.recommendedClientOptions());
            }
            List<SluiceException> failures = new CopyOnWriteArrayList<>();
            try (RedisStore store = store(client, policy, failures)) {
                SharedRateLimiter limiter = limiter(store);
                awaitConnected(limiter, failures);
                long failuresBefore = limiter.storeFailures();
                String key = "outage:" + UUID.randomUUID();
                assertEquals(Decision.allowed(3, 2, UNTIL_12_01.toNanos()), limiter.tryAcquire(key));
                Reservation held = limiter.reserve(key, 1);
                assertEquals(Decision.allowed(3, 1, UNTIL_12_01.toNanos()), held.decision());

                server.stop();
                // the client learns of the loss from its socket, a moment after the kill; a call made before that is
                // sent on the old connection and ends by the timeout
                Await.until("the store sees its connection lost", HANG, () -> !store.isConnected());

                expectPolicy(policy, () -> limiter.tryAcquire(key), Decision.allowed(3, 2, 0), false);
                expectPolicy(policy, () -> limiter.peek(key, 3), Decision.allowed(3, 0, 0), false);
                expectPolicy(policy, () -> limiter.reserve(key, 1).decision(), Decision.allowed(3, 2, 0), false);
                if (policy == FailurePolicy.THROW) {
                    assertThrows(SluiceException.class, held::cancel);
                } else {
                    assertFalse(assertTimeoutPreemptively(HANG, held::cancel), "a cancel that cannot reach Redis");
                }
                assertEquals(4, limiter.storeFailures() - failuresBefore, "failures counted");
                assertEquals(4, failures.size(), "failures reported to the listener");
                // at once, not by the timeout, even where the client's options would queue commands while disconnected
                for (SluiceException f : failures) {
                    assertFalse(causedBy(f, TimeoutException.class), "not by the timeout: " + f);
                }

                server.restart();
                awaitRecovery(limiter);

                // The restarted server is empty (and knows no script: NOSCRIPT, then EVAL): a new window on any key.
                String after = key + ":after";
                assertEquals(Decision.allowed(3, 2, UNTIL_12_01.toNanos()), limiter.tryAcquire(after));
                assertEquals(Decision.allowed(3, 1, UNTIL_12_01.toNanos()), limiter.tryAcquire(after));
                assertEquals(Decision.allowed(3, 0, UNTIL_12_01.toNanos()), limiter.tryAcquire(after));
                assertEquals(
                        Decision.denied(3, 0, UNTIL_12_01.toNanos(), UNTIL_12_01.toNanos()), limiter.tryAcquire(after));
                Reservation again = limiter.reserve(key + ":reserve", 2);
                assertTrue(again.cancel(), "a reservation made after the restart gives back");
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void aStoreBuiltWhileRedisIsDownWorksOnceItIsUp() {
        try (RedisServer server = RedisServers.start()) {
            server.stop();
            RedisClient client = RedisClient.create(server.uri());
            client.setOptions(RedisStore.recommendedClientOptions());
            List<SluiceException> failures = new CopyOnWriteArrayList<>();
            try (RedisStore store = store(client, FailurePolicy.FAIL_CLOSED, failures)) {
                SharedRateLimiter limiter = limiter(store);
                String key = "down-at-start:" + UUID.randomUUID();
                expectPolicy(FailurePolicy.FAIL_CLOSED, () -> limiter.tryAcquire(key), null, false);
                assertEquals(1, limiter.storeFailures(), "failures counted");
                assertEquals(1, failures.size(), "failures reported to the listener");

                server.restart();
                awaitRecovery(limiter);

                assertEquals(Decision.allowed(3, 2, UNTIL_12_01.toNanos()), limiter.tryAcquire(key));
                assertEquals(Decision.allowed(3, 0, UNTIL_12_01.toNanos()), limiter.tryAcquire(key, 2));
                assertEquals(
                        Decision.denied(3, 0, UNTIL_12_01.toNanos(), UNTIL_12_01.toNanos()), limiter.tryAcquire(key));
            } finally {
                client.shutdown();
            }
        }
    }

    /** A server that answers nothing for a while ({@code CLIENT PAUSE}): the store's timeout ends each call. */
    @Test
    void aStalledServerGetsThePolicyWithinTheTimeout() {
        try (RedisServer server = RedisServers.start()) {
            RedisClient client = RedisClient.create(server.uri());
            client.setOptions(RedisStore.recommendedClientOptions());
            List<SluiceException> failures = new CopyOnWriteArrayList<>();
            try (RedisStore store = store(client, FailurePolicy.FAIL_CLOSED, failures)) {
                SharedRateLimiter limiter = limiter(store);
                awaitConnected(limiter, failures);
                String key = "stalled:" + UUID.randomUUID();
                assertEquals(Decision.allowed(3, 2, UNTIL_12_01.toNanos()), limiter.tryAcquire(key));

                server.call("CLIENT", "PAUSE", Long.toString(PAUSE_MILLIS), "WRITE"); // holds every script
                expectPolicy(FailurePolicy.FAIL_CLOSED, () -> limiter.peek(key, 1), null, true); // a timeout
                assertTrue(
                        causedBy(failures.get(0), TimeoutException.class), "caused by the timeout: " + failures.get(0));
                server.call("CLIENT", "UNPAUSE");

                awaitRecovery(limiter);
                // peek consumes nothing, so the timed-out peek, run by Redis once the pause ended, changed nothing
                assertEquals(Decision.allowed(3, 1, UNTIL_12_01.toNanos()), limiter.tryAcquire(key));
            } finally {
                client.shutdown();
            }
        }
    }

    /**
     * Requests refused during a stall consume nothing: with {@code FAIL_CLOSED}, 8 requests made while the server is
     * paused are each denied by their deadline; the one Redis holds (the batch in flight) is refused by the script as
     * past its deadline once the pause ends, and those queued behind it are never sent. The counts are as before.
     */
    @Test
    void requestsRefusedDuringAStallLeaveTheCountsAsTheyWere() throws Exception {
        try (RedisServer server = RedisServers.start()) {
            RedisClient client = RedisClient.create(server.uri());
            client.setOptions(RedisStore.recommendedClientOptions());
            List<SluiceException> failures = new CopyOnWriteArrayList<>();
            try (RedisStore store = stallStore(client, failures)) {
                SharedRateLimiter limiter = limiter(store);
                awaitConnected(limiter, failures);
                String key = "stall:" + UUID.randomUUID();
                assertEquals(Decision.allowed(3, 2, UNTIL_12_01.toNanos()), limiter.tryAcquire(key));
                int failuresBefore = failures.size();

                server.call("CLIENT", "PAUSE", Long.toString(PAUSE_MILLIS), "WRITE"); // holds every script
                StoreBatchingContract.assertEachRefusedByTheFailurePolicy(limiter, key, 8, HANG);
                assertEquals(8, failures.size() - failuresBefore, "failures during the stall");
                for (SluiceException f : failures.subList(failuresBefore, failures.size())) {
                    assertTrue(causedBy(f, TimeoutException.class), "ended by the deadline: " + f);
                }
                server.call("CLIENT", "UNPAUSE");

                // the stalled batch has run by the time a later call is answered; the peek waits behind it
                Await.until("Redis answers again", RECOVERY, () -> !assertTimeoutPreemptively(
                                HANG, () -> limiter.peek(key, 1))
                        .failed());
                assertEquals(Decision.allowed(3, 2, UNTIL_12_01.toNanos()), limiter.peek(key, 1), "the counts after");
                assertEquals(Decision.allowed(3, 1, UNTIL_12_01.toNanos()), limiter.tryAcquire(key));
            } finally {
                client.shutdown();
            }
        }
    }

    /**
     * A server that dies while it holds a batch (paused, then killed): with the driver's default options the batch
     * never returns (the driver keeps it for its own reconnect). Once its caller has given it up, later calls must
     * not queue behind it: each is answered at once as not connected, none by waiting out its deadline, through the
     * whole outage.
     */
    @Test
    void aServerKilledWhileHoldingABatchDoesNotHoldTheCallsAfterIt() {
        try (RedisServer server = RedisServers.start()) {
            RedisClient client = RedisClient.create(server.uri()); // the driver's defaults, as a new user has them
            List<SluiceException> failures = new CopyOnWriteArrayList<>();
            try (RedisStore store = stallStore(client, failures)) {
                SharedRateLimiter limiter = limiter(store);
                awaitConnected(limiter, failures);
                String key = "killed:" + UUID.randomUUID();
                assertEquals(Decision.allowed(3, 2, UNTIL_12_01.toNanos()), limiter.tryAcquire(key));

                server.call("CLIENT", "PAUSE", Long.toString(PAUSE_MILLIS), "WRITE"); // holds the next batch
                assertTrue(assertTimeoutPreemptively(HANG, () -> limiter.tryAcquire(key))
                        .failed());
                assertEquals(1, failures.size());
                assertTrue(causedBy(failures.get(0), TimeoutException.class), "ended by the deadline: " + failures);
                server.stop();
                Await.until("the store has seen the connection lost", RECOVERY, () -> !store.isConnected());

                for (int i = 0; i < 20; i++) {
                    assertTrue(assertTimeoutPreemptively(HANG, () -> limiter.tryAcquire(key))
                            .failed());
                }
                assertEquals(21, failures.size());
                for (SluiceException f : failures.subList(1, failures.size())) {
                    assertFalse(causedBy(f, TimeoutException.class), "not held behind the dead batch: " + f);
                    assertTrue(String.valueOf(f.getMessage()).contains("not connected"), "not connected: " + f);
                }
            } finally {
                client.shutdown();
            }
        }
    }

    /** A fail-closed store whose requests wait for Redis no longer than {@link #STALL_TIMEOUT}. */
    private static RedisStore stallStore(RedisClient client, List<SluiceException> failures) {
        return RedisStore.builder(client)
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.FAIL_CLOSED)
                .timeout(STALL_TIMEOUT)
                .failClosedRetryAfter(FAIL_CLOSED_RETRY)
                .failureListener(failures::add)
                .build();
    }

    private static RedisStore store(RedisClient client, FailurePolicy policy, List<SluiceException> failures) {
        return RedisStore.builder(client)
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(policy)
                .timeout(TIMEOUT)
                .failClosedRetryAfter(FAIL_CLOSED_RETRY)
                .failureListener(failures::add)
                .build();
    }

    /** 3 per minute on a fixed window, at 12:00:05 on a clock that stands still. */
    private static SharedRateLimiter limiter(RedisStore store) {
        ManualClock clock = new ManualClock(Instant.parse("2026-01-01T12:00:05Z"));
        return (SharedRateLimiter) RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(3, Duration.ofMinutes(1))
                .clock(clock)
                .store(store)
                .build();
    }

    /**
     * Runs {@code call} against an unreachable store and checks the policy's answer, which says whether the store
     * {@code timedOut} (a stalled server) or failed otherwise (a lost connection).
     */
    private static void expectPolicy(
            FailurePolicy policy, Supplier<Decision> call, Decision failOpen, boolean timedOut) {
        switch (policy) {
            case FAIL_OPEN:
                assertEquals(
                        Decision.fromFailurePolicy(failOpen, timedOut), assertTimeoutPreemptively(HANG, call::get));
                break;
            case FAIL_CLOSED:
                assertEquals(
                        Decision.fromFailurePolicy(
                                Decision.denied(3, 0, FAIL_CLOSED_RETRY.toNanos(), FAIL_CLOSED_RETRY.toNanos()),
                                timedOut),
                        assertTimeoutPreemptively(HANG, call::get));
                break;
            case THROW:
                SluiceException e =
                        assertThrows(SluiceException.class, () -> assertTimeoutPreemptively(HANG, call::get));
                assertTrue(e.getCause() != null, "the driver's failure is the cause: " + e);
                break;
            default:
                throw new AssertionError(policy);
        }
    }

    /**
     * Waits (bounded) for the first connection, which a slow machine may take longer than the store's timeout to
     * open, then forgets the failures seen meanwhile, so that the test counts only its own.
     */
    private static void awaitConnected(SharedRateLimiter limiter, List<SluiceException> failures) {
        awaitRecovery(limiter);
        failures.clear();
    }

    /** Waits (bounded) until a call on the limiter no longer fails: Lettuce has reconnected. */
    private static void awaitRecovery(SharedRateLimiter limiter) {
        Await.until("a peek answered by Redis, not the failure policy", RECOVERY, () -> {
            long before = limiter.storeFailures();
            try {
                limiter.peek("probe", 1);
            } catch (SluiceException stillDown) {
                return false; // THROW: polled again
            }
            return limiter.storeFailures() == before;
        });
    }

    private static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }
}
