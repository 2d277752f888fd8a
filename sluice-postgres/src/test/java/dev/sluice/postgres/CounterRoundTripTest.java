package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.sync.SynchronizedStore;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.PostgresServers;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a flush costs on PostgreSQL: one round trip per batch of dirty keys of a limiter, whatever the number of
 * requests behind them. Counted twice over: the statements executed (by a DataSource in front of the connection), and
 * the round trips on the wire (the server's ReadyForQuery messages, counted by a proxy between client and server);
 * both compared with the synchronized store's own count of calls. The store runs on one connection, so no pool's
 * checks of its connections are counted.
 */
class CounterRoundTripTest {

    private static final String TABLE = "sluice_counter_trips";
    private static final int BATCH = 7;
    private static final int TAIL_KEYS = 50; // ceil(50 / 7) = 8 batches
    private static final int FIXED_KEYS = 9; // ceil(9 / 7) = 2 batches

    private final ManualClock clock =
            new ManualClock(Instant.now().truncatedTo(ChronoUnit.HOURS).plus(1, ChronoUnit.HOURS));
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    private static int batches(int keys) {
        return (keys + BATCH - 1) / BATCH;
    }

    @ParameterizedTest(name = "{0} requests per key")
    @ValueSource(ints = {1, 10, 100})
    void aFlushTakesOneRoundTripPerBatchOfDirtyKeysWhateverTheRequestRate(int requestsPerKey) throws Exception {
        PostgresStore.counterStoreBuilder(Databases.shared()).table(TABLE).build();
        try (RoundTripProxy proxy = new RoundTripProxy(PostgresServers.shared());
                Connection connection = DriverManager.getConnection(proxy.url())) {
            CountingDataSource counting = new CountingDataSource(only(connection));
            CounterStore counters = PostgresStore.counterStoreBuilder(counting.dataSource())
                    .table(TABLE)
                    .createSchema(false)
                    .timeout(Databases.PATIENCE)
                    .build();
            flushes(requestsPerKey, counters, counting, proxy);
        }
    }

    private void flushes(int requestsPerKey, CounterStore counters, CountingDataSource counting, RoundTripProxy proxy) {
        SynchronizedStore sync = SynchronizedStore.builder(counters)
                .manualRounds()
                .batchSize(BATCH)
                .build();
        RateLimiter tail = RateLimiter.builder(Algorithm.SLIDING_TAIL)
                .limit(1_000_000, Duration.ofHours(1))
                .clock(clock)
                .store(sync)
                .build();
        RateLimiter fixed = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(1_000_000, Duration.ofHours(1))
                .clock(clock)
                .store(sync)
                .build();
        List<String> tailKeys = keys("tail", TAIL_KEYS);
        List<String> fixedKeys = keys("fixed", FIXED_KEYS);
        int expected = batches(TAIL_KEYS) + batches(FIXED_KEYS);
        assertEquals(10, expected);

        for (int round = 1; round <= 2; round++) { // creates the records, then updates them
            traffic(tail, tailKeys, requestsPerKey);
            traffic(fixed, fixedKeys, requestsPerKey);
            long before = counting.statements();
            long tripsBefore = proxy.roundTrips();
            long callsBefore = sync.stats().storeCalls();
            assertTrue(sync.flush());
            assertEquals(expected, counting.statements() - before, "statements of flush " + round);
            assertEquals(expected, proxy.roundTrips() - tripsBefore, "round trips of flush " + round);
            assertEquals(expected, sync.stats().storeCalls() - callsBefore, "store calls of flush " + round);
            clock.advance(Duration.ofSeconds(1));
        }
        assertEquals(0, sync.stats().conflicts());

        long before = counting.statements();
        long tripsBefore = proxy.roundTrips();
        assertTrue(sync.flush(), "nothing pending");
        assertEquals(0, proxy.roundTrips() - tripsBefore, "a flush with nothing pending makes no call");
        assertTrue(sync.refresh());
        assertEquals(expected, counting.statements() - before, "a refresh reads every held key, in batches");
        assertEquals(expected, proxy.roundTrips() - tripsBefore, "a refresh reads every held key, in batches");
        assertEquals(List.of(), counting.failures());

        assertTotals(counters, tail, tailKeys, 2L * requestsPerKey, BATCH);
        assertTotals(counters, fixed, fixedKeys, 2L * requestsPerKey, BATCH);
    }

    /**
     * A thousand dirty keys of one limiter, in batches of 500 and of 100, on fresh keys each repetition: the round
     * trips on the wire of a flush that creates the records, one that updates them, one of an instance whose every
     * write meets a conflict (refused, read again, written again), and a refresh of an instance that holds all of them.
     * Counted exactly, every repetition; afterwards each record holds every count of both instances. The time each
     * takes is printed (median of the repetitions, milliseconds), never asserted: docs/sync-mode.md quotes it.
     */
    @ParameterizedTest(name = "batch size {0}")
    @ValueSource(ints = {500, 100})
    void aThousandKeysTakeOneRoundTripPerBatchToCreateUpdateConflictAndRefresh(int batchSize) throws Exception {
        int keyCount = 1_000;
        int repetitions = 7;
        long trips = (keyCount + batchSize - 1) / batchSize;
        PostgresStore.counterStoreBuilder(Databases.shared()).table(TABLE).build();
        List<List<Long>> micros = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        try (RoundTripProxy proxy = new RoundTripProxy(PostgresServers.shared());
                Connection connection = DriverManager.getConnection(proxy.url())) {
            CounterStore counters = PostgresStore.counterStoreBuilder(only(connection))
                    .table(TABLE)
                    .createSchema(false)
                    .timeout(Databases.PATIENCE)
                    .build();
            for (int rep = 0; rep < repetitions; rep++) {
                SynchronizedStore a = SynchronizedStore.builder(counters)
                        .manualRounds()
                        .batchSize(batchSize)
                        .build();
                SynchronizedStore b = SynchronizedStore.builder(counters)
                        .manualRounds()
                        .batchSize(batchSize)
                        .build();
                SynchronizedStore c = SynchronizedStore.builder(counters)
                        .manualRounds()
                        .batchSize(batchSize)
                        .build();
                RateLimiter atA = tail(a);
                RateLimiter atB = tail(b);
                RateLimiter atC = tail(c);
                List<String> keys = keys("thousand:" + batchSize + ":" + rep, keyCount);
                traffic(atA, keys, 1);
                traffic(atB, keys, 1); // b has read nothing: its every write expects no record
                String what = "batch size " + batchSize + ", repetition " + rep + ": ";
                assertEquals(trips, timed(proxy, micros.get(0), a::flush), what + "round trips to create");
                traffic(atA, keys, 1);
                assertEquals(trips, timed(proxy, micros.get(1), a::flush), what + "round trips to update");
                assertEquals(
                        3 * trips,
                        timed(proxy, micros.get(2), b::flush),
                        what + "round trips when every write conflicts: refused, read, written");
                assertEquals(keyCount, b.stats().conflicts(), what + "conflicts");
                traffic(atC, keys, 1);
                assertTrue(c.flush(), "c meets a conflict on every key, reads and holds them all");
                assertEquals(trips, timed(proxy, micros.get(3), c::refresh), what + "round trips to refresh");
                assertTotals(counters, atA, keys, 4, batchSize);
                clock.advance(Duration.ofSeconds(1));
            }
        }
        System.out.printf(
                "PostgreSQL counter store, %d keys in %d batches of %d, median ms of %d: flush that"
                        + " creates %.1f, updates %.1f, meets a conflict on every key %.1f; refresh %.1f%n",
                keyCount,
                trips,
                batchSize,
                repetitions,
                median(micros.get(0)),
                median(micros.get(1)),
                median(micros.get(2)),
                median(micros.get(3)));
    }

    private RateLimiter tail(SynchronizedStore store) {
        return RateLimiter.builder(Algorithm.SLIDING_TAIL)
                .limit(1_000_000, Duration.ofHours(1))
                .clock(clock)
                .store(store)
                .build();
    }

    /** Runs {@code call}, which must succeed; adds its time to {@code micros} and returns its round trips. */
    private static long timed(RoundTripProxy proxy, List<Long> micros, BooleanSupplier call) {
        long trips = proxy.roundTrips();
        long start = System.nanoTime();
        assertTrue(call.getAsBoolean());
        micros.add((System.nanoTime() - start) / 1_000);
        return proxy.roundTrips() - trips;
    }

    private static double median(List<Long> micros) {
        List<Long> sorted = new ArrayList<>(micros);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2) / 1_000.0;
    }

    /** A DataSource that hands out {@code connection} every time, and never closes it. */
    static DataSource only(Connection connection) {
        Connection unclosable = (Connection) Proxy.newProxyInstance(
                CounterRoundTripTest.class.getClassLoader(), new Class<?>[] {Connection.class}, (p, method, args) -> {
                    if (method.getName().equals("close")) {
                        return null;
                    }
                    try {
                        return method.invoke(connection, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        return (DataSource) Proxy.newProxyInstance(
                CounterRoundTripTest.class.getClassLoader(), new Class<?>[] {DataSource.class}, (p, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        return unclosable;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    private List<String> keys(String name, int n) {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            keys.add("trips:" + run + ":" + name + ":" + i);
        }
        return keys;
    }

    private static void traffic(RateLimiter limiter, List<String> keys, int requestsPerKey) {
        for (String key : keys) {
            for (int r = 0; r < requestsPerKey; r++) {
                assertTrue(limiter.tryAcquire(key).allowed());
            }
        }
    }

    private static void assertTotals(
            CounterStore counters, RateLimiter limiter, List<String> keys, long total, int batchSize) {
        String shape = SharedStoreOptions.shape(limiter.config());
        for (int from = 0; from < keys.size(); from += batchSize) {
            List<CounterKey> ids = new ArrayList<>();
            for (String key : keys.subList(from, Math.min(keys.size(), from + batchSize))) {
                ids.add(new CounterKey(shape, key));
            }
            List<CounterSnapshot> records = counters.load(ids);
            for (int i = 0; i < ids.size(); i++) {
                assertEquals(total, records.get(i).total(), ids.get(i).toString());
            }
        }
    }
}
