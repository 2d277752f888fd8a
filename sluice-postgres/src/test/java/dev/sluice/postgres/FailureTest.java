package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
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
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.PostgresServers;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A store that is slow, hung or down: every call returns within its timeout with the failure policy's answer (and
 * never a driver exception), and once the store is back the same limiters decide correctly again, without a
 * restart. Runs on a server of its own, which it stops and starts.
 *
 * <p>A call's time is not asserted (the machine is noisy); each is run under a bound of {@link #HANG}, which only a
 * hang would exceed. Where a test needs a call to succeed on a loaded machine, or one timeout to fire before another,
 * its timeout is wide ({@link #WIDE}).
 */
class FailureTest {

    private static final Duration TIMEOUT = Duration.ofMillis(250);
    /**
     * Wide: a call the server answers must never run out of it on a loaded machine, and the server's lock_timeout
     * (0.8 of it, 8 s) must end a call stuck behind a lock seconds before the socket timeout (10 s) would.
     */
    private static final Duration WIDE = Duration.ofSeconds(10);
    /**
     * The timeout of the store a row lock holds up: its call waits out four fifths of it (the lock_timeout, 4 s), a
     * second before the socket timeout (5 s) would end it. Wide enough for the calls the server answers.
     */
    private static final Duration LOCKED = Duration.ofSeconds(5);
    /** How long the pools wait to borrow or open a connection: opening one can take a while on a loaded machine. */
    private static final Duration BORROW = Duration.ofSeconds(2);

    private static final Duration HANG = Duration.ofSeconds(20);
    private static final Duration FAIL_CLOSED_RETRY = Duration.ofSeconds(2);
    private static final Duration WINDOW = Duration.ofSeconds(60);

    private static PostgresServers.Own server;

    private final ManualClock clock = new ManualClock(Instant.parse("2026-01-01T12:00:10Z"));
    private final List<SluiceException> reported = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startServer() {
        server = PostgresServers.startOwn();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    private PostgresStore store(javax.sql.DataSource pool, FailurePolicy policy, Duration timeout) {
        return PostgresStore.builder(pool)
                .table("sluice_failure")
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(policy)
                .timeout(timeout)
                .failClosedRetryAfter(FAIL_CLOSED_RETRY)
                .failureListener(reported::add)
                .build();
    }

    private SharedRateLimiter limiter(PostgresStore store) {
        return (SharedRateLimiter) RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(3, WINDOW)
                .clock(clock)
                .store(store)
                .build();
    }

    private static <T> T bounded(Supplier<T> call) {
        return assertTimeoutPreemptively(HANG, call::get, "a call to a failing store must return, not hang");
    }

    private static void assertFailOpen(Decision d) {
        assertEquals(true, d.allowed(), "fail-open allows: " + d);
        assertEquals(2, d.remaining(), "fail-open: limit - cost: " + d);
    }

    private static void assertFailClosed(Decision d) {
        assertEquals(false, d.allowed(), "fail-closed denies: " + d);
        assertEquals(0, d.remaining(), "fail-closed: " + d);
        assertEquals(FAIL_CLOSED_RETRY, d.retryAfter(), "fail-closed retryAfter: " + d);
    }

    @Test
    void aCallStuckBehindARowLockEndsWithThePolicy() throws Exception {
        try (HikariDataSource pool = Databases.pool(server.url(), 2, BORROW);
                HikariDataSource other = Databases.pool(server.url(), 1, BORROW)) {
            PostgresStore store = store(pool, FailurePolicy.FAIL_CLOSED, LOCKED); // lock_timeout 4 s, socket 5 s
            SharedRateLimiter limiter = limiter(store);
            String key = "locked";
            assertEquals(2, limiter.tryAcquire(key).remaining());

            byte[] id = new PostgresDecider(store, limiter.config()).id(key);
            try (Connection holder = other.getConnection()) {
                holder.setAutoCommit(false);
                try (PreparedStatement s =
                        holder.prepareStatement("SELECT cur FROM " + store.table() + " WHERE id = ? FOR UPDATE")) {
                    s.setBytes(1, id);
                    s.executeQuery().close();
                }
                assertFailClosed(bounded(() -> limiter.tryAcquire(key)));
                assertEquals(1, limiter.storeFailures());
                SQLException cause =
                        assertInstanceOf(SQLException.class, reported.get(0).getCause());
                assertEquals("55P03", cause.getSQLState(), "ended by the server's lock_timeout: " + cause);
                assertEquals(true, limiter.peek(key, 1).allowed(), "a peek takes no lock");
                holder.rollback();
            }
            Decision d = limiter.tryAcquire(key);
            assertEquals(true, d.allowed(), "the stuck call wrote nothing: " + d);
            assertEquals(1, d.remaining(), "the stuck call wrote nothing: " + d);
            assertEquals(1, limiter.storeFailures(), "and the connection stayed usable");
        }
    }

    /**
     * A pool that lends no connection in time fails the call with an exception that carries no SQLSTATE (HikariCP's,
     * when no connection failed before it); the call is answered by the failure policy, and the next one, the
     * connection free again, is decided by the server. The failure's SQLSTATE was looked up in a set that refuses
     * null, which threw where the batch's failure was made, so the batch never ended: every later call waited out its
     * timeout behind it ("no answer from PostgreSQL by the request's deadline") for as long as the store ran.
     */
    @Test
    void aCallThePoolLendsNoConnectionForFailsAndTheNextIsDecided() throws Exception {
        try (HikariDataSource pool = Databases.pool(server.url(), 1, Duration.ofMillis(250))) {
            PostgresStore store = store(pool, FailurePolicy.FAIL_CLOSED, WIDE);
            SharedRateLimiter limiter = limiter(store);
            String key = "no connection";
            assertEquals(2, limiter.tryAcquire(key).remaining());
            Connection held = pool.getConnection(); // the pool's only one
            try {
                assertFailClosed(bounded(() -> limiter.tryAcquire(key)));
            } finally {
                held.close();
            }
            SQLException cause =
                    assertInstanceOf(SQLException.class, reported.get(0).getCause());
            assertNull(cause.getSQLState(), "a failure without an SQLSTATE: " + cause);
            Decision d = bounded(() -> limiter.tryAcquire(key));
            assertEquals(false, d.failed(), "decided by the server: " + d);
            assertEquals(1, d.remaining(), "decided by the server: " + d);
            assertEquals(1, limiter.storeFailures(), reported.toString());
        }
    }

    @Test
    void aHungServerIsCutOffByTheTimeout() throws Exception {
        try (FreezingProxy proxy = new FreezingProxy(server.port(), FreezingProxy.WhileFrozen.DROP);
                HikariDataSource pool = Databases.pool(
                        "jdbc:postgresql://localhost:" + proxy.port() + "/postgres?user=postgres", 2, BORROW)) {
            SharedRateLimiter open = limiter(store(pool, FailurePolicy.FAIL_OPEN, TIMEOUT));
            SharedRateLimiter strict = limiter(store(pool, FailurePolicy.THROW, TIMEOUT));
            SharedRateLimiter patient = limiter(store(pool, FailurePolicy.THROW, WIDE));
            String key = "hung";
            assertEquals(2, patient.tryAcquire(key).remaining(), "through the proxy, before it freezes");

            proxy.freeze();
            assertFailOpen(bounded(() -> open.tryAcquire(key)));
            assertEquals(1, open.storeFailures());
            SluiceException thrown = bounded(() -> assertThrows(SluiceException.class, () -> strict.tryAcquire(key)));
            assertTrue(thrown.getMessage().contains("PostgreSQL failed deciding key 'hung'"), thrown.getMessage());
            assertEquals(1, strict.storeFailures());

            proxy.thaw();
            awaitStore(patient, key);
            Decision d = patient.tryAcquire(key);
            assertEquals(true, d.allowed(), d.toString());
            assertEquals(1, d.remaining(), "the frozen calls never reached the server: " + d);
        }
    }

    /**
     * The pools borrow within 250 ms, as the store's class comment asks: while the server is down a call waits that
     * long for a connection, not {@link #BORROW}. No call that must be answered waits to open one: the connection the
     * builds opened serves the calls before the outage, and the first call after it is awaited.
     */
    @Test
    void theServerStopsMidRunAndComesBack() throws Exception {
        try (HikariDataSource pool = Databases.pool(server.url(), 1);
                HikariDataSource loadPool = Databases.pool(server.url(), 4)) {
            SharedRateLimiter open = limiter(store(pool, FailurePolicy.FAIL_OPEN, WIDE));
            SharedRateLimiter closed = limiter(store(pool, FailurePolicy.FAIL_CLOSED, WIDE));
            SharedRateLimiter strict = limiter(store(pool, FailurePolicy.THROW, WIDE));
            SharedRateLimiter load = limiter(store(loadPool, FailurePolicy.FAIL_OPEN, TIMEOUT));
            assertEquals(2, open.tryAcquire("open").remaining(), "before the outage");
            assertEquals(2, closed.tryAcquire("closed").remaining(), "before the outage");
            assertEquals(2, strict.tryAcquire("strict").remaining(), "before the outage");

            AtomicBoolean running = new AtomicBoolean(true);
            AtomicLong loadCalls = new AtomicLong();
            ExecutorService threads = Executors.newFixedThreadPool(4);
            List<Future<?>> loadDone = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                loadDone.add(threads.submit(() -> {
                    for (long i = 0; running.get(); i++) {
                        load.tryAcquire("load-" + thread + "-" + (i % 50));
                        loadCalls.incrementAndGet();
                    }
                    return null;
                }));
            }
            try {
                server.stop();

                assertFailOpen(bounded(() -> open.tryAcquire("open")));
                Reservation r = bounded(() -> open.reserve("open", 1));
                assertEquals(true, r.decision().allowed(), "fail-open reservation");
                assertEquals(false, r.cancel(), "a fail-open reservation holds nothing to give back");
                assertEquals(2, open.storeFailures());
                assertFailClosed(bounded(() -> closed.tryAcquire("closed")));
                assertFailClosed(bounded(() -> closed.peek("closed", 1)));
                assertEquals(2, closed.storeFailures());
                SluiceException thrown =
                        bounded(() -> assertThrows(SluiceException.class, () -> strict.tryAcquire("strict")));
                assertInstanceOf(SQLException.class, thrown.getCause(), "the driver's failure is the cause");
                assertEquals(1, strict.storeFailures());
                long callsWhileDown = loadCalls.get();

                server.restart();

                awaitStore(strict, "probe");
                for (SharedRateLimiter l : List.of(open, closed, strict)) {
                    String key = l == open ? "open" : l == closed ? "closed" : "strict";
                    Decision second = l.tryAcquire(key);
                    assertEquals(true, second.allowed(), "the first request survived the restart: " + second);
                    assertEquals(1, second.remaining(), "the first request survived the restart: " + second);
                }
                assertEquals(0, strict.tryAcquire("strict").remaining());
                Decision denied = strict.tryAcquire("strict");
                assertEquals(false, denied.allowed(), denied.toString());
                assertEquals(Duration.ofSeconds(50), denied.retryAfter(), "until the window ends at 12:01:00");
                assertEquals(2, open.storeFailures(), "no failure once back");
                assertEquals(2, closed.storeFailures(), "no failure once back");
                assertTrue(loadCalls.get() > callsWhileDown, "the load kept going");
            } finally {
                running.set(false);
                threads.shutdown();
            }
            for (Future<?> f : loadDone) {
                f.get(HANG.toSeconds(), TimeUnit.SECONDS); // rethrows if a fail-open call ever threw
            }
            assertTrue(threads.awaitTermination(HANG.toSeconds(), TimeUnit.SECONDS));
            assertTrue(load.storeFailures() > 0, "the load saw the outage");
            assertEquals(
                    open.storeFailures() + closed.storeFailures() + strict.storeFailures() + load.storeFailures(),
                    reported.size(),
                    "every failure reported to the listener");
        }
    }

    /** Waits (a server coming up is not behaviour) until {@code limiter} answers from the store, not the policy. */
    private static void awaitStore(SharedRateLimiter limiter, String key) {
        Await.until("a peek answered by the store, not the failure policy", Await.GENEROUS, () -> {
            long failures = limiter.storeFailures();
            try {
                limiter.peek(key, 1);
            } catch (SluiceException e) {
                return false; // THROW: not yet
            }
            return limiter.storeFailures() == failures;
        });
    }
}
