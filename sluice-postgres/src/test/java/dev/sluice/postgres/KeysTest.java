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
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** Any string is a key: its own limit, whatever its characters or length, and readable in the table. */
class KeysTest {

    private final DataSource dataSource = Databases.shared();
    private final ManualClock clock = new ManualClock(Instant.parse("2026-01-01T12:00:00Z"));
    private final String run = UUID.randomUUID().toString();

    private final PostgresStore store = PostgresStore.builder(dataSource)
            .table("sluice_keys")
            .timeSource(TimeSource.CLOCK)
            .failurePolicy(FailurePolicy.THROW)
            .timeout(Databases.PATIENCE)
            .build();
    private final RateLimiter limiter = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
            .limit(2, Duration.ofMinutes(1))
            .clock(clock)
            .store(store)
            .build();

    private String storedKey(String key) throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement s = c.prepareStatement("SELECT key FROM " + store.table() + " WHERE id = ?")) {
            s.setBytes(1, new PostgresDecider(store, limiter.config()).id(key));
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    @Test
    void oddKeysAreKeysLikeAnyOther() throws SQLException {
        String big = "k".repeat(10 * 1024);
        List<String> keys = List.of(
                "emoji 🚦 and ünïcödé, 中文, עברית",
                "quotes ' \" ` and SQL '); DROP TABLE sluice_keys; --",
                "back\\slash, percent % and underscore _",
                "tab\tnew\nline\rreturn",
                "$$ dollar $tag$ quoting $$",
                big,
                big + "!",
                " ",
                "ab",
                "a\u0000b");
        for (String key : keys) {
            String k = run + key;
            assertEquals(1, limiter.tryAcquire(k).remaining(), "first request on " + abbreviate(k));
        }
        for (String key : keys) {
            String k = run + key;
            Decision d = limiter.tryAcquire(k);
            assertEquals(0, d.remaining(), "second request on " + abbreviate(k) + ": one bucket per key");
            assertEquals(false, limiter.tryAcquire(k).allowed(), abbreviate(k));
            String expected = k.replace('\u0000', '\u2400');
            assertEquals(expected, storedKey(k), "the key as stored for reading");
        }
    }

    @Test
    void loneSurrogatesAreDistinctKeys() throws SQLException {
        String a = run + "\uD800";
        String b = run + "\uDC00";
        assertEquals(1, limiter.tryAcquire(a).remaining());
        assertEquals(1, limiter.tryAcquire(b).remaining(), "not the same row as its lookalike");
        assertEquals(0, limiter.tryAcquire(a).remaining());
        assertEquals(run + "?", storedKey(a), "unencodable in UTF-8: shown as '?'");
    }

    @Test
    void namespacesSeparateLimiters() {
        PostgresStore other = PostgresStore.builder(dataSource)
                .table("sluice_keys")
                .namespace("other-app")
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Databases.PATIENCE)
                .build();
        RateLimiter otherLimiter = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                .limit(2, Duration.ofMinutes(1))
                .clock(clock)
                .store(other)
                .build();
        String key = run + "shared-name";
        limiter.tryAcquire(key);
        limiter.tryAcquire(key);
        assertEquals(false, limiter.tryAcquire(key).allowed());
        assertEquals(1, otherLimiter.tryAcquire(key).remaining(), "another namespace, another row");
    }

    private static String abbreviate(String key) {
        return key.length() > 60 ? key.substring(0, 60) + "… (" + key.length() + " chars)" : key;
    }
}
