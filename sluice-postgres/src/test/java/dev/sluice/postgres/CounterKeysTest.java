package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.sync.SynchronizedStore;
import dev.sluice.testkit.ManualClock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** Any string is a counter key: a record of its own, whatever its characters or length, and readable in the table. */
class CounterKeysTest {

    private static final String TABLE = "sluice_counter_keys";
    private static final long FRAME = 1_767_268_800_000_000_000L;

    private final DataSource dataSource = Databases.shared();
    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final CounterStore store = PostgresStore.counterStoreBuilder(dataSource)
            .table(TABLE)
            .timeout(Databases.PATIENCE)
            .build();

    private static final String BIG = "k".repeat(10 * 1024);
    private static final List<String> ODD = List.of(
            "emoji 🚦 and ünïcödé, 中文, עברית",
            "quotes ' \" ` and SQL '); DROP TABLE sluice_counter_keys; --",
            "back\\slash, percent % and underscore _, braces {1,2} and commas",
            "tab\tnew\nline\rreturn",
            "$$ dollar $tag$ quoting $$",
            BIG,
            BIG + "!",
            " ",
            "ab",
            "a\u0000b",
            "\uD800",
            "\uDC00");

    /** The key column of {@code key}'s row, null if there is none. */
    private String storedKey(CounterKey key) throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement s = c.prepareStatement("SELECT shape, key FROM " + TABLE + " WHERE id = ?")) {
            s.setBytes(1, PostgresCounterStore.id(key));
            try (ResultSet rs = s.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                assertEquals(key.shape(), rs.getString(1));
                return rs.getString(2);
            }
        }
    }

    @Test
    void oddKeysAreRecordsOfTheirOwnReadBackExactly() throws SQLException {
        String shape = "keys:" + run;
        List<CounterKey> keys = new ArrayList<>();
        List<CounterWrite> writes = new ArrayList<>();
        for (int i = 0; i < ODD.size(); i++) {
            CounterKey key = new CounterKey(shape, ODD.get(i));
            keys.add(key);
            writes.add(new CounterWrite(key, CounterSnapshot.ABSENT, 100 + i, Map.of(FRAME, 1L + i), Long.MAX_VALUE));
        }
        boolean[] all = new boolean[ODD.size()];
        java.util.Arrays.fill(all, true);
        assertArrayEquals(all, store.compareAndSet(writes), "one record per key: no two collide");

        List<CounterKey> reversed = new ArrayList<>(keys);
        Collections.reverse(reversed);
        List<CounterSnapshot> read = store.load(reversed);
        for (int j = 0; j < reversed.size(); j++) {
            int i = ODD.size() - 1 - j;
            assertEquals(new CounterSnapshot(100 + i, Map.of(FRAME, 1L + i)), read.get(j), abbreviate(ODD.get(i)));
        }
        for (int i = 0; i < ODD.size(); i++) {
            String expected = ODD.get(i).replace('\u0000', '\u2400');
            if (expected.equals("\uD800") || expected.equals("\uDC00")) {
                expected = "?"; // unencodable in UTF-8
            }
            assertEquals(expected, storedKey(keys.get(i)), "the key as stored for reading: " + abbreviate(ODD.get(i)));
        }
    }

    @Test
    void spacesSeparateRecordsOfTheSameKey() {
        CounterKey a = new CounterKey("fw:60000000000", "shared " + run);
        CounterKey b = new CounterKey("tail:60000000000", "shared " + run);
        assertArrayEquals(
                new boolean[] {true, true},
                store.compareAndSet(List.of(
                        new CounterWrite(a, CounterSnapshot.ABSENT, 1, Map.of(FRAME, 3L), Long.MAX_VALUE),
                        new CounterWrite(b, CounterSnapshot.ABSENT, 2, Map.of(FRAME, 5L), Long.MAX_VALUE))));
        assertEquals(
                List.of(new CounterSnapshot(1, Map.of(FRAME, 3L)), new CounterSnapshot(2, Map.of(FRAME, 5L))),
                store.load(List.of(a, b)));
    }

    @Test
    void oddKeysKeepTheirOwnCountsThroughASynchronizedLimiter() {
        ManualClock clock =
                new ManualClock(Instant.now().truncatedTo(ChronoUnit.HOURS).plus(1, ChronoUnit.HOURS));
        SynchronizedStore one =
                SynchronizedStore.builder(store).manualRounds().batchSize(5).build();
        SynchronizedStore two =
                SynchronizedStore.builder(store).manualRounds().batchSize(5).build();
        RateLimiter atOne = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(100, Duration.ofHours(1))
                .clock(clock)
                .store(one)
                .build();
        RateLimiter atTwo = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(100, Duration.ofHours(1))
                .clock(clock)
                .store(two)
                .build();
        for (int i = 0; i < ODD.size(); i++) {
            String key = run + ODD.get(i);
            for (int r = 0; r <= i; r++) {
                atOne.tryAcquire(key);
            }
            atTwo.tryAcquire(key, 2);
        }
        assertEquals(true, one.flush());
        assertEquals(true, two.flush());
        assertEquals(true, one.refresh());
        String shape = SharedStoreOptions.shape(atOne.config());
        for (int i = 0; i < ODD.size(); i++) {
            String key = run + ODD.get(i);
            long taken = i + 1 + 2;
            assertEquals(
                    taken,
                    store.load(List.of(new CounterKey(shape, key))).get(0).total(),
                    abbreviate(key));
            assertEquals(100 - taken, atOne.peek(key, 1).remaining(), "instance one sees both: " + abbreviate(key));
        }
    }

    private static String abbreviate(String key) {
        return key.length() > 60 ? key.substring(0, 60) + "… (" + key.length() + " chars)" : key;
    }
}
