package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import dev.sluice.testkit.server.PostgresServers;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Compare-and-set under real concurrency at READ COMMITTED: instances, each with a pool and a counter store of its
 * own, write the same version of the same records at the same moment (released together by a barrier), round after
 * round. Exactly one wins each record, every time; the record holds the winner's write; and batches written in
 * opposite orders neither deadlock nor split (the statement is atomic, and rows are locked in id order): one instance
 * wins a whole batch, the others none of it. Every statement that failed is recorded: there must be none.
 */
class CounterConcurrencyTest {

    private static final String TABLE = "sluice_counter_race";
    private static final long FRAME = 1_767_268_800_000_000_000L;
    private static final long EXPIRE = Long.MAX_VALUE;

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicLong versions = new AtomicLong();
    private final List<HikariDataSource> pools = new ArrayList<>();
    private final List<CountingDataSource> counted = new ArrayList<>();
    private final List<CounterStore> stores = new ArrayList<>();
    private ExecutorService threads;

    @BeforeEach
    void instances() {
        PostgresStore.counterStoreBuilder(Databases.shared()).table(TABLE).build();
        for (int i = 0; i < 3; i++) {
            HikariDataSource pool = Databases.pool(PostgresServers.shared(), 1, Databases.PATIENCE, 1);
            CountingDataSource counting = new CountingDataSource(pool);
            pools.add(pool);
            counted.add(counting);
            stores.add(PostgresStore.counterStoreBuilder(counting.dataSource())
                    .table(TABLE)
                    .createSchema(false)
                    .timeout(Databases.PATIENCE)
                    .build());
        }
        threads = Executors.newFixedThreadPool(3);
    }

    @AfterEach
    void close() {
        threads.shutdownNow();
        pools.forEach(HikariDataSource::close);
    }

    private CounterWrite write(CounterKey key, long expected, long count) {
        return new CounterWrite(key, expected, versions.incrementAndGet(), Map.of(FRAME, count), EXPIRE);
    }

    /** Runs {@code calls} at once, released together; their answers in order. */
    private List<boolean[]> together(List<Callable<boolean[]>> calls) throws Exception {
        CyclicBarrier barrier = new CyclicBarrier(calls.size());
        List<Future<boolean[]>> futures = new ArrayList<>();
        for (Callable<boolean[]> call : calls) {
            futures.add(threads.submit(() -> {
                barrier.await(1, TimeUnit.MINUTES);
                return call.call();
            }));
        }
        List<boolean[]> answers = new ArrayList<>();
        for (Future<boolean[]> f : futures) {
            answers.add(f.get(1, TimeUnit.MINUTES));
        }
        return answers;
    }

    @Test
    void twoWritersOfOneVersionNeverBothWin() throws Exception {
        CounterKey key = new CounterKey("race:" + run, "one");
        long version = CounterSnapshot.ABSENT;
        long total = 0;
        int[] wins = new int[2];
        for (int round = 0; round < 300; round++) {
            List<CounterWrite> writes = List.of(write(key, version, total + 1), write(key, version, total + 2));
            List<Callable<boolean[]>> calls = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                CounterStore store = stores.get(i);
                CounterWrite w = writes.get(i);
                calls.add(() -> store.compareAndSet(List.of(w)));
            }
            List<boolean[]> answers = together(calls);
            boolean first = answers.get(0)[0];
            boolean second = answers.get(1)[0];
            assertEquals(
                    true, first ^ second, "round " + round + ": exactly one wins, was " + first + " and " + second);
            CounterWrite winner = writes.get(first ? 0 : 1);
            wins[first ? 0 : 1]++;
            assertEquals(
                    new CounterSnapshot(winner.newVersion(), winner.counters()),
                    stores.get(2).load(List.of(key)).get(0),
                    "round " + round + ": the record is the winner's");
            version = winner.newVersion();
            total = winner.total();
        }
        assertEquals(300, wins[0] + wins[1]);
        assertNoFailedStatement();
    }

    @Test
    void batchesInOppositeOrdersNeitherDeadlockNorSplit() throws Exception {
        int keys = 10;
        Random random = new Random(11);
        List<CounterKey> ids = new ArrayList<>();
        long[] version = new long[keys];
        int[] wins = new int[3];
        for (int round = 0; round < 120; round++) {
            if (round % 20 == 0) { // fresh keys: the three race to create them
                ids.clear();
                for (int k = 0; k < keys; k++) {
                    ids.add(new CounterKey("race:" + run, round + ":" + k));
                    version[k] = CounterSnapshot.ABSENT;
                }
            }
            List<List<CounterWrite>> batches = new ArrayList<>();
            List<Callable<boolean[]>> calls = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                List<CounterWrite> batch = new ArrayList<>();
                for (int k = 0; k < keys; k++) {
                    batch.add(write(ids.get(k), version[k], 1 + i));
                }
                if (i == 1) {
                    Collections.reverse(batch);
                } else if (i == 2) {
                    Collections.shuffle(batch, random);
                }
                batches.add(batch);
                CounterStore store = stores.get(i);
                calls.add(() -> store.compareAndSet(batch));
            }
            List<boolean[]> answers = together(calls);
            int winner = -1;
            for (int i = 0; i < 3; i++) {
                boolean[] a = answers.get(i);
                boolean[] all = new boolean[keys];
                if (a[0]) {
                    assertEquals(-1, winner, "round " + round + ": two instances won");
                    winner = i;
                    java.util.Arrays.fill(all, true);
                }
                assertArrayEquals(all, a, "round " + round + ", instance " + i + ": all or nothing");
            }
            assertEquals(true, winner >= 0, "round " + round + ": nobody won");
            wins[winner]++;
            List<CounterSnapshot> records = stores.get((winner + 1) % 3).load(ids);
            for (CounterWrite w : batches.get(winner)) {
                int k = ids.indexOf(w.key());
                assertEquals(
                        new CounterSnapshot(w.newVersion(), w.counters()),
                        records.get(k),
                        "round " + round + ", key " + k + ": the winner's write");
                version[k] = w.newVersion();
            }
        }
        assertEquals(120, wins[0] + wins[1] + wins[2]);
        assertNoFailedStatement();
    }

    private void assertNoFailedStatement() {
        for (int i = 0; i < counted.size(); i++) {
            assertEquals(
                    List.of(),
                    counted.get(i).failures(),
                    "SQLSTATEs of failed statements of instance " + i + " (40P01: a deadlock)");
        }
    }
}
