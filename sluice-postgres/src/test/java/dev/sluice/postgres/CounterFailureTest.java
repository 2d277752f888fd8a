package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.sync.SynchronizedStore;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.FreezingProxy;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.PostgresServers;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The two kinds of failed write, told apart. A statement that PostgreSQL rolls back (here: a lock timeout behind a
 * row lock held elsewhere) applied nothing, and its writes answer "not applied". A call whose answer never comes
 * (here: a network that drops every byte) may or may not have been applied, and throws, so that core settles it by a
 * read; once the network is back a synchronized store writes every count exactly once. Runs on a server of its own.
 *
 * <p>A call's time is not asserted; each is run under a bound of {@link #HANG}, which only a hang would exceed.
 */
class CounterFailureTest {

    private static final String TABLE = "sluice_counter_failure";
    private static final long FRAME = 1_767_268_800_000_000_000L;
    private static final Duration HANG = Duration.ofSeconds(20);
    private static final Duration BORROW = Duration.ofSeconds(2);

    private static PostgresServers.Own server;

    @BeforeAll
    static void startServer() {
        server = PostgresServers.startOwn();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    private static <T> T bounded(Supplier<T> call) {
        return assertTimeoutPreemptively(HANG, call::get, "a call to a failing store must return, not hang");
    }

    @Test
    void aWriteStuckBehindARowLockIsRolledBackAndAnswersNotApplied() throws SQLException {
        try (HikariDataSource pool = Databases.pool(server.url(), 2, BORROW);
                HikariDataSource other = Databases.pool(server.url(), 1, BORROW)) {
            CountingDataSource counting = new CountingDataSource(pool);
            CounterStore store = PostgresStore.counterStoreBuilder(counting.dataSource())
                    .table(TABLE)
                    .timeout(Duration.ofSeconds(5))
                    .build(); // lock_timeout 4 s: a second before the socket's 5 s
            CounterKey locked = new CounterKey("fw:60000000000", "locked");
            CounterKey free = new CounterKey("fw:60000000000", "free");
            assertArrayEquals(
                    new boolean[] {true, true},
                    store.compareAndSet(List.of(
                            new CounterWrite(locked, CounterSnapshot.ABSENT, 1, Map.of(FRAME, 1L), Long.MAX_VALUE),
                            new CounterWrite(free, CounterSnapshot.ABSENT, 2, Map.of(FRAME, 1L), Long.MAX_VALUE))));

            List<CounterWrite> batch = List.of(
                    new CounterWrite(free, 2, 12, Map.of(FRAME, 5L), Long.MAX_VALUE),
                    new CounterWrite(locked, 1, 11, Map.of(FRAME, 5L), Long.MAX_VALUE));
            try (Connection holder = other.getConnection()) {
                holder.setAutoCommit(false);
                try (PreparedStatement s =
                        holder.prepareStatement("SELECT 1 FROM " + TABLE + " WHERE id = ? FOR UPDATE")) {
                    s.setBytes(1, PostgresCounterStore.id(locked));
                    s.executeQuery().close();
                }
                assertArrayEquals(
                        new boolean[] {false, false},
                        bounded(() -> store.compareAndSet(batch)),
                        "rolled back: neither write applied, the free key's included");
                assertEquals(List.of("55P03"), counting.failures(), "ended by the server's lock_timeout");
                assertEquals(
                        List.of(new CounterSnapshot(2, Map.of(FRAME, 1L)), new CounterSnapshot(1, Map.of(FRAME, 1L))),
                        store.load(List.of(free, locked)),
                        "both records as they were");
                holder.rollback();
            }
            assertArrayEquals(new boolean[] {true, true}, store.compareAndSet(batch), "the same batch, lock gone");
            assertEquals(
                    List.of(new CounterSnapshot(12, Map.of(FRAME, 5L)), new CounterSnapshot(11, Map.of(FRAME, 5L))),
                    store.load(List.of(free, locked)));
        }
    }

    /**
     * A write the pool lends no connection for fails with an exception that carries no SQLSTATE (HikariCP's, when no
     * connection failed before it): it is thrown as the store's failure, which names it, not as the
     * NullPointerException its SQLSTATE's lookup among the rolled-back ones made.
     */
    @Test
    void aWriteThePoolLendsNoConnectionForThrowsTheStoresFailure() throws SQLException {
        try (HikariDataSource pool = Databases.pool(server.url(), 1, Duration.ofMillis(250))) {
            CounterStore store = PostgresStore.counterStoreBuilder(pool)
                    .table(TABLE)
                    .timeout(Duration.ofSeconds(5))
                    .build();
            CounterKey key = new CounterKey("fw:60000000000", "no connection");
            List<CounterWrite> write =
                    List.of(new CounterWrite(key, CounterSnapshot.ABSENT, 1, Map.of(FRAME, 1L), Long.MAX_VALUE));
            Connection held = pool.getConnection(); // the pool's only one
            SluiceException e;
            try {
                e = bounded(() -> assertThrows(SluiceException.class, () -> store.compareAndSet(write)));
            } finally {
                held.close();
            }
            SQLException cause = assertInstanceOf(SQLException.class, e.getCause(), e.toString());
            assertNull(cause.getSQLState(), "a failure without an SQLSTATE: " + cause);
            assertArrayEquals(new boolean[] {true}, store.compareAndSet(write), "the connection free again");
        }
    }

    @Test
    void aCallWhoseAnswerIsLostThrowsAndCoreSettlesItByARead() throws Exception {
        List<SluiceException> reported = new CopyOnWriteArrayList<>();
        try (FreezingProxy proxy = new FreezingProxy(server.port(), FreezingProxy.WhileFrozen.DROP);
                HikariDataSource proxied = Databases.pool(
                        "jdbc:postgresql://localhost:" + proxy.port() + "/postgres?user=postgres", 2, BORROW);
                HikariDataSource direct = Databases.pool(server.url(), 1, BORROW)) {
            PostgresStore.counterStoreBuilder(direct).table(TABLE).build();
            CounterStore store = PostgresStore.counterStoreBuilder(proxied)
                    .table(TABLE)
                    .createSchema(false)
                    .timeout(Duration.ofSeconds(2))
                    .build(); // about timeouts, so short; ample once connected
            CounterStore observer = PostgresStore.counterStoreBuilder(direct)
                    .table(TABLE)
                    .createSchema(false)
                    .timeout(Databases.PATIENCE)
                    .build();
            ManualClock clock =
                    new ManualClock(Instant.now().truncatedTo(ChronoUnit.HOURS).plus(1, ChronoUnit.HOURS));
            SynchronizedStore sync = SynchronizedStore.builder(store)
                    .manualRounds()
                    .failureListener(reported::add)
                    .build();
            RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
                    .limit(100, Duration.ofHours(1))
                    .clock(clock)
                    .store(sync)
                    .build();
            CounterKey id = new CounterKey(SharedStoreOptions.shape(limiter.config()), "lost-" + clock.instant());
            Await.succeeds("a first read through the proxy", Await.GENEROUS, () -> store.load(List.of(id)));
            limiter.tryAcquire(id.key(), 3);
            assertTrue(sync.flush());
            assertEquals(3, observer.load(List.of(id)).get(0).total());

            proxy.freeze();
            limiter.tryAcquire(id.key(), 4);
            CounterWrite lost = new CounterWrite(
                    id, observer.load(List.of(id)).get(0).version(), 77, Map.of(FRAME, 1L), Long.MAX_VALUE);
            SluiceException thrown =
                    bounded(() -> assertThrows(SluiceException.class, () -> store.compareAndSet(List.of(lost))));
            assertTrue(thrown.getMessage().contains("whether they were applied is unknown"), thrown.getMessage());
            assertInstanceOf(SQLException.class, thrown.getCause(), "the driver's failure is the cause");
            assertThrows(SluiceException.class, () -> bounded(() -> store.load(List.of(id))));
            assertEquals(false, bounded(sync::flush), "the flush fails: its write's outcome is unknown");
            assertEquals(1, sync.stats().storeFailures());
            assertEquals(1, reported.size());
            assertEquals(3, observer.load(List.of(id)).get(0).total(), "nothing reached the server");

            proxy.thaw();
            awaitFlush(sync);
            assertEquals(7, observer.load(List.of(id)).get(0).total(), "settled by a read, written once");
            assertEquals(0, sync.stats().doubtfulWrites(), "the read showed the write was not applied");
            assertEquals(93, limiter.peek(id.key(), 1).remaining());
        }
    }

    /** Waits (a pool replacing its dead connections is not behaviour) until a flush goes through. */
    private static void awaitFlush(SynchronizedStore sync) {
        Await.until("a flush to go through", Await.GENEROUS, sync::flush);
    }
}
