package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.TimeSource;
import dev.sluice.testkit.ManualClock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Idle rows go away by themselves, on a hand-moved clock: each new row deletes the expired rows (idle for a window)
 * among the 4 that follow it in id order. The test replays that rule on the ids it knows and expects exactly the
 * rows it predicts.
 */
class ExpiryTest {

    private static final String TABLE = "sluice_expiry";
    private static final Instant NOON = Instant.parse("2026-01-01T12:00:00Z");
    private static final long MINUTE = Duration.ofMinutes(1).toNanos();

    private final DataSource dataSource = Databases.shared();
    private final ManualClock clock = new ManualClock(NOON);
    private PostgresStore store;
    private RateLimiter limiter;

    @BeforeEach
    void emptyTable() throws SQLException {
        store = PostgresStore.builder(dataSource)
                .table(TABLE)
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Databases.PATIENCE)
                .build();
        Databases.execute(dataSource, "TRUNCATE " + TABLE);
        limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(5, Duration.ofMinutes(1))
                .clock(clock)
                .store(store)
                .build();
    }

    /** id (as a string of unsigned bytes) -> expires_at, for every row. */
    private Map<String, Long> rows() throws SQLException {
        Map<String, Long> rows = new HashMap<>();
        try (Connection c = dataSource.getConnection();
                PreparedStatement s = c.prepareStatement("SELECT id, expires_at FROM " + TABLE);
                ResultSet rs = s.executeQuery()) {
            while (rs.next()) {
                rows.put(hex(rs.getBytes(1)), rs.getLong(2));
            }
        }
        return rows;
    }

    private static String hex(byte[] id) {
        StringBuilder b = new StringBuilder();
        for (byte x : id) {
            b.append(String.format("%02x", x & 0xff)); // hex order = PostgreSQL's bytea order
        }
        return b.toString();
    }

    @Test
    void aRowMayBeDeletedAWindowAfterItsStateIsIdle() throws SQLException {
        clock.set(NOON.plusSeconds(10));
        limiter.tryAcquire("one");
        long windowEnd = NOON.getEpochSecond() * 1_000_000_000L + MINUTE;
        assertEquals(Map.of(id("one"), windowEnd + MINUTE), rows(), "idle when its window ends, a window of grace");
    }

    @Test
    void newKeysSweepTheExpiredRowsThatFollowThem() throws SQLException {
        List<String> old = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            old.add("old-" + i);
            limiter.tryAcquire("old-" + i);
        }
        // Every old row was swept by the old rows inserted after it, but none had expired.
        assertEquals(300, rows().size());

        clock.set(NOON.plus(Duration.ofMinutes(2))); // every old row is idle since 12:01, deletable from 12:02
        TreeMap<String, Boolean> predicted = new TreeMap<>(); // id -> expired
        for (String key : old) {
            predicted.put(id(key), true);
        }
        for (int i = 0; i < 300; i++) {
            String key = "new-" + i;
            Decision d = limiter.tryAcquire(key);
            assertEquals(4, d.remaining(), key);
            String id = id(key);
            predicted.put(id, false);
            List<String> next = new ArrayList<>(predicted.tailMap(id, false).keySet());
            for (String followed : next.subList(0, Math.min(4, next.size()))) {
                if (predicted.get(followed)) {
                    predicted.remove(followed);
                }
            }
        }
        Map<String, Long> rows = rows();
        assertEquals(predicted.keySet(), rows.keySet(), "the rows left are those the sweep rule predicts");
        long expiredLeft =
                predicted.values().stream().filter(expired -> expired).count();
        assertEquals(true, expiredLeft < 150, "most expired rows are gone: " + expiredLeft + " of 300 left");

        Decision again = limiter.tryAcquire("old-0");
        assertEquals(true, again.allowed());
        assertEquals(4, again.remaining(), "an expired row, swept or not, decides as a new key");
    }

    @Test
    void rowsAreNeverSweptBeforeAWindowOfGrace() throws SQLException {
        for (int i = 0; i < 200; i++) {
            limiter.tryAcquire("live-" + i);
        }
        clock.set(NOON.plusSeconds(59));
        for (int i = 0; i < 200; i++) {
            limiter.tryAcquire("later-" + i);
        }
        assertEquals(400, rows().size(), "nothing has expired yet");
        Decision d = limiter.tryAcquire("live-0");
        assertEquals(3, d.remaining(), "the first row still counts its request");

        clock.set(NOON.plusSeconds(119)); // the first rows are idle, but only for 59 s
        for (int i = 0; i < 200; i++) {
            limiter.tryAcquire("latest-" + i);
        }
        assertEquals(600, rows().size(), "idle rows within their grace stay");
    }

    private String id(String key) {
        return hex(new PostgresDecider(store, limiter.config()).id(key));
    }

    @Test
    void idsAreDistinctAndFixedWidth() {
        PostgresDecider decider = new PostgresDecider(store, limiter.config());
        byte[] a = decider.id("ab");
        byte[] b = decider.id("a\u0000b");
        assertEquals(32, a.length);
        assertEquals(32, decider.id("x".repeat(100_000)).length);
        assertEquals(false, Arrays.equals(a, b));
        assertEquals(false, Arrays.equals(decider.id("\uD800"), decider.id("\uDC00")), "lone surrogates differ");
    }
}
