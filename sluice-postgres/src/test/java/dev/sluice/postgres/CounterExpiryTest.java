package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Expired counter records go away by themselves: each call that creates records deletes the rows among the 4 that
 * follow each new one in id order (other than the call's own) whose expiry passed over a minute ago, by the
 * database's clock. The test replays that rule on the ids it knows and expects exactly the rows it predicts. Expiry is
 * an hour away from the real time either way, so the database's clock decides every row the same way the test does;
 * rows expired only 10 s ago are within the minute, whatever the machine's load.
 */
class CounterExpiryTest {

    private static final String TABLE = "sluice_counter_expiry";
    private static final String SPACE = "fw:60000000000";
    private static final long FRAME = 1_767_268_800_000_000_000L;

    private final DataSource dataSource = Databases.shared();
    private final long now = nanos(Instant.now());
    private final long past = now - Duration.ofHours(1).toNanos();
    private final long future = now + Duration.ofHours(1).toNanos();
    private CounterStore store;
    private long versions;

    private static long nanos(Instant i) {
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
    }

    @BeforeEach
    void emptyTable() throws SQLException {
        store = PostgresStore.counterStoreBuilder(dataSource)
                .table(TABLE)
                .timeout(Databases.PATIENCE)
                .build();
        Databases.execute(dataSource, "TRUNCATE " + TABLE);
    }

    /** id (as hex, whose order is PostgreSQL's bytea order) -> expires_at, for every row. */
    private Map<String, Long> rows() throws SQLException {
        Map<String, Long> rows = new HashMap<>();
        try (Connection c = dataSource.getConnection();
                PreparedStatement s = c.prepareStatement("SELECT id, expires_at FROM " + TABLE);
                ResultSet rs = s.executeQuery()) {
            while (rs.next()) {
                rows.put(HexFormat.of().formatHex(rs.getBytes(1)), rs.getLong(2));
            }
        }
        return rows;
    }

    private static CounterKey key(String name) {
        return new CounterKey(SPACE, name);
    }

    private static String hex(CounterKey key) {
        return HexFormat.of().formatHex(PostgresCounterStore.id(key));
    }

    private CounterWrite create(CounterKey key, long expireAt) {
        return new CounterWrite(key, CounterSnapshot.ABSENT, ++versions, Map.of(FRAME, 1L), expireAt);
    }

    private static boolean[] all(int n) {
        boolean[] all = new boolean[n];
        java.util.Arrays.fill(all, true);
        return all;
    }

    @Test
    void newRecordsSweepTheExpiredRowsThatFollowThem() throws SQLException {
        TreeMap<String, Boolean> predicted = new TreeMap<>(); // id -> expired
        List<CounterWrite> old = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            old.add(create(key("old-" + i), future));
        }
        for (int from = 0; from < old.size(); from += 50) {
            assertArrayEquals(all(50), store.compareAndSet(old.subList(from, from + 50)));
        }
        assertEquals(300, rows().size(), "nothing had expired");
        List<CounterWrite> expire = new ArrayList<>(); // an update sweeps nothing
        for (CounterWrite w : old) {
            expire.add(new CounterWrite(w.key(), w.newVersion(), ++versions, w.counters(), past));
            predicted.put(hex(w.key()), true);
        }
        for (int from = 0; from < expire.size(); from += 50) {
            assertArrayEquals(all(50), store.compareAndSet(expire.subList(from, from + 50)));
        }
        assertEquals(300, rows().size(), "updates delete nothing");

        for (int call = 0; call < 20; call++) { // 100 new records, 5 per call
            List<CounterWrite> batch = new ArrayList<>();
            Set<String> ids = new TreeSet<>();
            for (int j = 0; j < 5; j++) {
                CounterWrite w = create(key("new-" + call + "-" + j), future);
                batch.add(w);
                ids.add(hex(w.key()));
                predicted.put(hex(w.key()), false);
            }
            assertArrayEquals(all(5), store.compareAndSet(batch));
            Set<String> swept = new TreeSet<>();
            for (String id : ids) {
                List<String> next = new ArrayList<>(predicted.tailMap(id, false).keySet());
                for (String followed : next.subList(0, Math.min(4, next.size()))) {
                    if (predicted.get(followed) && !ids.contains(followed)) {
                        swept.add(followed);
                    }
                }
            }
            swept.forEach(predicted::remove);
        }
        Map<String, Long> rows = rows();
        assertEquals(predicted.keySet(), rows.keySet(), "the rows left are those the sweep rule predicts");
        long expiredLeft =
                predicted.values().stream().filter(expired -> expired).count();
        assertTrue(expiredLeft < 150, "most expired rows are gone: " + expiredLeft + " of 300 left");
        assertTrue(expiredLeft > 0, "the sweep looks only near new rows: " + expiredLeft + " of 300 left");
        for (Map.Entry<String, Boolean> e : predicted.entrySet()) {
            assertEquals(e.getValue() ? past : future, rows.get(e.getKey()), "expires_at of " + e.getKey());
        }
    }

    @Test
    void aRowExpiredLessThanAMinuteAgoIsKept() throws SQLException {
        long recent = now - Duration.ofSeconds(10).toNanos();
        List<CounterWrite> old = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            old.add(create(key("old-" + i), i % 2 == 0 ? past : recent));
        }
        assertArrayEquals(all(200), store.compareAndSet(old));
        for (int call = 0; call < 20; call++) {
            List<CounterWrite> batch = new ArrayList<>();
            for (int j = 0; j < 5; j++) {
                batch.add(create(key("new-" + call + "-" + j), future));
            }
            assertArrayEquals(all(5), store.compareAndSet(batch));
        }
        Map<String, Long> rows = rows();
        long recentLeft = rows.values().stream().filter(at -> at == recent).count();
        long pastLeft = rows.values().stream().filter(at -> at == past).count();
        assertEquals(100, recentLeft, "no row expired less than a minute ago is deleted");
        assertTrue(
                pastLeft < 100, "rows expired an hour ago are swept by the same calls: " + pastLeft + " of 100 left");
    }

    @Test
    void anExpiredRecordIsARecordUntilItIsDeleted() {
        CounterKey k = key("expired");
        CounterWrite first = create(k, past);
        assertArrayEquals(new boolean[] {true}, store.compareAndSet(List.of(first)));
        assertEquals(
                new CounterSnapshot(first.newVersion(), first.counters()),
                store.load(List.of(k)).get(0),
                "read back while its row is there");
        assertArrayEquals(
                new boolean[] {false},
                store.compareAndSet(List.of(create(k, future))),
                "not absent: a create conflicts with it");
        CounterWrite replace = new CounterWrite(k, first.newVersion(), ++versions, Map.of(FRAME, 9L), future);
        assertArrayEquals(new boolean[] {true}, store.compareAndSet(List.of(replace)), "replaced at its version");
        assertEquals(
                new CounterSnapshot(replace.newVersion(), Map.of(FRAME, 9L)),
                store.load(List.of(k)).get(0));
    }

    @Test
    void aSweptRecordIsAbsentAndAWriteExpectingItsVersionIsNotApplied() throws SQLException {
        CounterKey k = key("swept");
        CounterWrite first = create(k, past);
        assertArrayEquals(new boolean[] {true}, store.compareAndSet(List.of(first)));
        Databases.execute(dataSource, "DELETE FROM " + TABLE); // as the sweep would
        assertEquals(CounterSnapshot.absent(), store.load(List.of(k)).get(0));
        assertArrayEquals(
                new boolean[] {false},
                store.compareAndSet(
                        List.of(new CounterWrite(k, first.newVersion(), ++versions, Map.of(FRAME, 2L), future))),
                "no record: a write expecting a version is not applied, and creates nothing");
        assertEquals(Map.of(), rows());
    }
}
