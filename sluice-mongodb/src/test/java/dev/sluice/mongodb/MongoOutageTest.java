package dev.sluice.mongodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.FreezingProxy;
import dev.sluice.testkit.FreezingProxy.WhileFrozen;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.EmbeddedMongoServer;
import dev.sluice.testkit.server.MongoServers;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The server stops in the middle of a run and comes back on the same port: while it is down every call returns
 * promptly with the failure policy's answer (never a driver exception, never a hang), and once it is back the limiter
 * decides correctly again, on the state the server kept, without being rebuilt.
 *
 * <p>The client keeps the driver's default server selection timeout of 30 s: only the store's own timeout (3 s) can
 * make a call return sooner. These tests are about that timeout, so it cannot be as generous as other tests' (a call
 * to a down server waits all of it); it is still wide enough that a call the server answers, made through the same
 * store before and after the outage, never runs out of it on a loaded machine once the client is connected (each
 * test waits for that first). The check that calls return within 15 s is deliberately loose: five times the timeout,
 * and half the server selection timeout.
 *
 * <p>A test spends most of its time waiting out that timeout (four calls of 3 s while the server is down), on a server
 * and a client of its own, so the tests run at the same time ({@link ExecutionMode#CONCURRENT} on each method, not on
 * the class, which runs alone as every class does): nothing is shared but the CPU, which they hardly use.
 */
class MongoOutageTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(3);
    private static final long NO_HANG_NANOS = TimeUnit.SECONDS.toNanos(15);
    private static final Duration FAIL_CLOSED_RETRY_AFTER = Duration.ofSeconds(7);

    @ParameterizedTest
    @EnumSource(FailurePolicy.class)
    @Execution(ExecutionMode.CONCURRENT)
    void theFailurePolicyAnswersWhileTheServerIsDownAndDecisionsResumeWhenItIsBack(FailurePolicy policy)
            throws InterruptedException {
        List<SluiceException> reported = new CopyOnWriteArrayList<>();
        ManualClock clock = new ManualClock(Instant.parse("2026-01-01T12:00:00Z"));
        try (EmbeddedMongoServer server = MongoServers.start();
                MongoClient client = Mongo.client(server.connectionString())) {
            MongoStore store = MongoStore.builder(client, Mongo.DATABASE)
                    .timeSource(TimeSource.CLOCK)
                    .failurePolicy(policy)
                    .timeout(TIMEOUT)
                    .failClosedRetryAfter(FAIL_CLOSED_RETRY_AFTER)
                    .failureListener(reported::add)
                    .build();
            RateLimiter limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                    .limit(5, Duration.ofMinutes(1))
                    .clock(clock)
                    .store(store)
                    .build();
            SharedRateLimiter shared = (SharedRateLimiter) limiter;
            String key = "outage:" + policy;
            awaitAnswered(limiter, key); // the first connection may take a while: not counted
            long failuresBefore = shared.storeFailures();
            reported.clear();

            for (long remaining = 4; remaining >= 2; remaining--) {
                Decision d = limiter.tryAcquire(key);
                assertTrue(d.allowed(), "before the outage: " + d);
                assertEquals(remaining, d.remaining(), "before the outage: " + d);
            }
            Reservation held = limiter.reserve(key, 1);
            assertEquals(1, held.decision().remaining(), "reserved before the outage: " + held);
            assertEquals(failuresBefore, shared.storeFailures(), "failures before the outage");

            Traffic traffic = new Traffic(limiter, "outage:traffic:" + policy, policy);
            server.stop();
            for (int i = 1; i <= 3; i++) {
                long started = System.nanoTime();
                switch (policy) {
                    case FAIL_OPEN: {
                        Decision d = limiter.tryAcquire(key, 2);
                        assertTrue(d.allowed(), "fail-open allows: " + d);
                        assertEquals(3, d.remaining(), "fail-open answers the limit less the cost: " + d);
                        break;
                    }
                    case FAIL_CLOSED: {
                        Decision d = limiter.tryAcquire(key, 2);
                        assertEquals(false, d.allowed(), "fail-closed denies: " + d);
                        assertEquals(FAIL_CLOSED_RETRY_AFTER, d.retryAfter(), "fail-closed retry after: " + d);
                        break;
                    }
                    default: {
                        SluiceException e = assertThrows(SluiceException.class, () -> limiter.tryAcquire(key, 2));
                        assertInstanceOf(MongoException.class, e.getCause(), "the driver's failure is the cause");
                        assertTrue(e.getMessage().contains(key), e.getMessage());
                    }
                }
                long took = System.nanoTime() - started;
                assertTrue(
                        took < NO_HANG_NANOS,
                        "call " + i + " with the server down took " + took / 1_000_000 + " ms: the store's timeout of "
                                + TIMEOUT + " did not bound it");
            }
            if (policy == FailurePolicy.THROW) {
                assertThrows(SluiceException.class, held::cancel, "a cancel that cannot reach the server throws");
            } else {
                assertEquals(false, held.cancel(), "a cancel that cannot reach the server returns nothing");
            }
            traffic.stop();
            assertEquals(List.of(), traffic.problems, "the calls of the traffic running through the outage");
            long failures = shared.storeFailures() - failuresBefore;
            assertTrue(
                    failures > 4,
                    "the traffic met the outage too: " + failures + " failures, 4 of them the "
                            + "test's own three requests and cancel");
            // A fold of a key's history that the outage interrupted is reported too, though no decision failed.
            assertTrue(
                    reported.size() >= failures,
                    "every failure is reported to the listener: " + reported.size() + " reports of " + failures
                            + " failures");
            for (SluiceException r : reported) {
                assertInstanceOf(MongoException.class, r.getCause(), "a reported failure's cause: " + r);
            }

            server.start();
            awaitAnswered(limiter, key);
            Decision d = limiter.tryAcquire(key);
            assertTrue(d.allowed(), "after the outage: " + d);
            assertEquals(
                    0,
                    d.remaining(),
                    "after the outage the 4 permits taken before it are still taken, and "
                            + "nothing answered during it was recorded: " + d);
            d = limiter.tryAcquire(key);
            assertEquals(false, d.allowed(), "after the outage the limit holds: " + d);
            assertEquals(Duration.ofMinutes(1), d.retryAfter(), "retry after the window ends: " + d);
            clock.advance(Duration.ofMinutes(1));
            d = limiter.tryAcquire(key, 5);
            assertTrue(d.allowed() && d.remaining() == 0, "a new window after the outage: " + d);
        }
    }

    /**
     * A server that hangs (here a proxy in front of it that keeps every connection open and passes nothing) is the
     * harder case: the client's default socket timeout is infinite, so only the store's own timeout ends the calls.
     * Requests sent while it hung reach the server, if at all, past their deadlines: they take nothing, so the callers'
     * policy answers are the whole story; what was taken before stays taken.
     */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aHungServerIsCutOffByTheTimeoutAndDecisionsResumeWhenItAnswersAgain() throws InterruptedException {
        ManualClock clock = new ManualClock(Instant.parse("2026-01-01T12:00:00Z"));
        try (EmbeddedMongoServer server = MongoServers.start();
                FreezingProxy proxy = new FreezingProxy(server.port(), WhileFrozen.HOLD);
                MongoClient client = Mongo.client("mongodb://127.0.0.1:" + proxy.port())) {
            MongoStore store = MongoStore.builder(client, Mongo.DATABASE)
                    .timeSource(TimeSource.CLOCK)
                    .failurePolicy(FailurePolicy.FAIL_CLOSED)
                    .timeout(TIMEOUT)
                    .failClosedRetryAfter(FAIL_CLOSED_RETRY_AFTER)
                    .build();
            RateLimiter limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                    .limit(5, Duration.ofMinutes(1))
                    .clock(clock)
                    .store(store)
                    .build();
            String key = "hung:before";
            awaitAnswered(limiter, key);
            long failuresBefore = ((SharedRateLimiter) limiter).storeFailures();
            assertEquals(4, limiter.tryAcquire(key).remaining(), "before the server hangs");
            assertEquals(3, limiter.tryAcquire(key).remaining(), "before the server hangs");

            proxy.freeze();
            for (int i = 1; i <= 3; i++) {
                long started = System.nanoTime();
                Decision d = assertTimeoutPreemptively(
                        Duration.ofNanos(2 * NO_HANG_NANOS),
                        () -> limiter.tryAcquire(key),
                        "a call to a hung server must not hang");
                long took = System.nanoTime() - started;
                assertEquals(false, d.allowed(), "fail-closed denies: " + d);
                assertEquals(FAIL_CLOSED_RETRY_AFTER, d.retryAfter(), "fail-closed retry after: " + d);
                assertTrue(
                        took < NO_HANG_NANOS,
                        "call " + i + " to the hung server took " + took / 1_000_000 + " ms: the store's timeout of "
                                + TIMEOUT + " did not bound it");
            }
            assertEquals(3, ((SharedRateLimiter) limiter).storeFailures() - failuresBefore, "failures counted");

            proxy.thaw();
            awaitAnswered(limiter, key);
            Decision fresh = limiter.tryAcquire("hung:after");
            assertTrue(fresh.allowed() && fresh.remaining() == 4, "a new key after the server answers again: " + fresh);
            Decision d = limiter.peek(key, 1);
            assertEquals(
                    3,
                    d.remaining(),
                    "the 2 permits taken before the server hung are still taken, and none of the requests it held: "
                            + d);
        }
    }

    /**
     * Four threads requesting on a key of their own while the server stops: each call must end in a decision or, with
     * {@link FailurePolicy#THROW}, a {@link SluiceException} caused by the driver, and within the no-hang bound,
     * whatever it was doing when the connection went.
     */
    private static final class Traffic {
        final List<String> problems = new CopyOnWriteArrayList<>();
        private final List<Thread> threads = new ArrayList<>();
        private volatile boolean running = true;

        Traffic(RateLimiter limiter, String key, FailurePolicy policy) {
            for (int t = 0; t < 4; t++) {
                Thread thread = new Thread(
                        () -> {
                            while (running) {
                                long started = System.nanoTime();
                                try {
                                    limiter.tryAcquire(key);
                                } catch (SluiceException e) {
                                    if (policy != FailurePolicy.THROW || !(e.getCause() instanceof MongoException)) {
                                        problems.add(e.toString());
                                    }
                                } catch (RuntimeException e) {
                                    problems.add(e.toString());
                                }
                                long took = System.nanoTime() - started;
                                if (took >= NO_HANG_NANOS) {
                                    problems.add("a call took " + took / 1_000_000 + " ms");
                                }
                            }
                        },
                        "outage-traffic-" + t);
                thread.start();
                threads.add(thread);
            }
        }

        void stop() throws InterruptedException {
            running = false;
            for (Thread t : threads) {
                t.join(2 * TimeUnit.NANOSECONDS.toMillis(NO_HANG_NANOS));
                if (t.isAlive()) {
                    problems.add(t.getName() + " is still in a call");
                }
            }
        }
    }

    /**
     * Waits, boundedly, until the driver has found the server (first connection, or again after an outage): peeks,
     * which consume nothing, until one is answered by the store rather than by the failure policy.
     */
    private static void awaitAnswered(RateLimiter limiter, String key) {
        SharedRateLimiter shared = (SharedRateLimiter) limiter;
        Await.until("a peek answered by the server, not the failure policy", Await.GENEROUS, () -> {
            long failures = shared.storeFailures();
            try {
                limiter.peek(key, 1);
            } catch (SluiceException e) {
                return false; // THROW: the server is not reachable yet
            }
            return shared.storeFailures() == failures;
        });
    }
}
