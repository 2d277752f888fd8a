package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.testkit.RecoveryProbe;
import dev.sluice.testkit.server.PostgresServers;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * How soon decisions are right again after an outage: a caller decides every 10 ms on a store built as its class
 * comment shows (a HikariCP pool from a JDBC URL, borrowing bounded by 250 ms, the store's default timeout); the
 * server stops (its connections terminated) and starts again on the same port and data, three times; from the moment
 * it accepts connections again to the first decision answered by the database (not the failure policy) must take
 * less than {@link #BOUND}.
 *
 * <p>While the database is down, the pool keeps trying to open a connection for the waiting calls, pausing at most
 * its connection timeout between tries; a pooled connection the restart broke fails its validation on borrowing (or
 * its one call) and is replaced.
 */
class PostgresRecoveryTest {

    /** Safe on a loaded two-core machine; a healthy run takes well under a second. */
    private static final Duration BOUND = Duration.ofSeconds(5);

    private static final long LIMIT = 1_000_000;
    private static final int OUTAGES = 3;

    @Test
    void decisionsAreRightAgainSoonAfterTheServerIsBack() throws InterruptedException {
        String run = UUID.randomUUID().toString();
        HikariConfig config = new HikariConfig();
        try (PostgresServers.Own server = PostgresServers.startOwn()) {
            config.setJdbcUrl(server.url() + "&connectTimeout=1&loginTimeout=1");
            config.setConnectionTimeout(250);
            try (HikariDataSource dataSource = new HikariDataSource(config)) {
                RateLimiter limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                        .limit(LIMIT, Duration.ofHours(1))
                        .store(PostgresStore.builder(dataSource)
                                .failurePolicy(FailurePolicy.FAIL_CLOSED)
                                .build())
                        .build();
                List<Duration> took =
                        RecoveryProbe.outages(limiter, "recovery:" + run + ":", OUTAGES, server::stop, server::restart);
                for (int outage = 1; outage <= took.size(); outage++) {
                    long millis = took.get(outage - 1).toMillis();
                    System.out.printf(
                            "PostgresRecoveryTest: outage %d: the first right decision %d ms after the server was back%n",
                            outage, millis);
                    assertTrue(
                            took.get(outage - 1).compareTo(BOUND) < 0,
                            "outage " + outage + ": right decisions " + millis
                                    + " ms after the server was back, more than " + BOUND);
                }
            }
        }
    }
}
