package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The default time source: the database's clock times every decision, whatever the limiter's clock says. Each
 * limiter here has a clock stuck in the year 2000, which would show in every stored time if it were used.
 */
class StoreTimeTest {

    private static final Duration HOUR = Duration.ofHours(1);

    private final DataSource dataSource = Databases.shared();
    private final ManualClock wrongClock = new ManualClock(Instant.parse("2000-01-01T00:00:00Z"));
    private final PostgresStore store = PostgresStore.builder(dataSource)
            .table("sluice_store_time")
            .failurePolicy(FailurePolicy.THROW)
            .timeout(Databases.PATIENCE)
            .build();

    private long serverNanos() throws SQLException {
        return Databases.queryLong(dataSource, "SELECT sluice_store_time_now()");
    }

    /** When the row of {@code key} becomes idle: its expires_at less the window of grace. */
    private long idleAt(RateLimiter limiter, String key) throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement s = c.prepareStatement("SELECT expires_at FROM sluice_store_time WHERE id = ?")) {
            s.setBytes(1, new PostgresDecider(store, limiter.config()).id(key));
            try (ResultSet rs = s.executeQuery()) {
                assertTrue(rs.next(), "a row for " + key);
                return rs.getLong(1) - HOUR.toNanos();
            }
        }
    }

    @Test
    void theStoreIsTheDefaultTimeSource() {
        assertEquals(TimeSource.STORE, store.options().timeSource());
    }

    @Test
    void theDatabaseClockTimesTheLog() throws SQLException {
        RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_LOG)
                .limit(2, HOUR)
                .clock(wrongClock)
                .store(store)
                .build();
        String key = UUID.randomUUID().toString();

        long before = serverNanos();
        Decision first = limiter.tryAcquire(key);
        long after = serverNanos();
        long expiry = idleAt(limiter, key);
        assertTrue(
                before + HOUR.toNanos() <= expiry && expiry <= after + HOUR.toNanos(),
                "the entry expires an hour after the server's time of the request: " + expiry + " not in ["
                        + (before + HOUR.toNanos()) + ", " + (after + HOUR.toNanos()) + "]");
        assertEquals(0, expiry % 1000, "the server's clock has microseconds");
        assertEquals(true, first.allowed());
        assertEquals(1, first.remaining());
        assertEquals(HOUR, first.resetAfter(), "reset is measured from the request's own time");

        assertEquals(true, limiter.tryAcquire(key).allowed());
        long beforeDenial = serverNanos();
        Decision denied = limiter.tryAcquire(key);
        long afterDenial = serverNanos();
        assertEquals(false, denied.allowed());
        long retry = denied.retryAfterNanos();
        assertTrue(
                expiry - afterDenial <= retry && retry <= expiry - beforeDenial,
                "retry until the first entry leaves the window, on the server's clock: " + retry);
    }

    @Test
    void theDatabaseClockTimesTheFixedWindow() throws SQLException {
        RateLimiter limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(5, HOUR)
                .clock(wrongClock)
                .store(store)
                .build();
        String key = UUID.randomUUID().toString();
        long before = serverNanos();
        Decision d = limiter.tryAcquire(key);
        long after = serverNanos();
        long h = HOUR.toNanos();
        long expiry = idleAt(limiter, key);
        assertTrue(
                expiry == (before / h + 1) * h || expiry == (after / h + 1) * h,
                "the row expires at the end of the server's current hour: " + expiry);
        assertEquals(4, d.remaining());
        assertTrue(
                expiry - after <= d.resetAfterNanos() && d.resetAfterNanos() <= expiry - before,
                "reset at the end of the hour: " + d);
    }
}
