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
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * How soon decisions are right again after an outage: a caller decides every 10 ms on a store built as its class
 * comment shows (a HikariCP pool from a JDBC URL, borrowing bounded by 250 ms); the server stops (its connections
 * terminated) and starts again on the same port and data; from the moment it accepts connections again to the first
 * decision answered by the database (not the failure policy) must take less than {@link #BOUND}. One server for the
 * class.
 *
 * <p>While the database is down, the pool keeps trying to open a connection for the waiting calls, pausing at most
 * its connection timeout between tries; a pooled connection the restart broke fails its validation on borrowing (or
 * its one call) and is replaced. Every connection opened after the outage reaches a new server process, whose first
 * call of each PL/pgSQL function compiles it: the store warms each new connection once, outside a call's timeout, so
 * a store with a timeout shorter than that compilation (the service's 15 ms) decides again too.
 */
class PostgresRecoveryTest {

    /** Safe on a loaded two-core machine; a healthy run takes well under a second. */
    private static final Duration BOUND = Duration.ofSeconds(5);

    private static final long LIMIT = 1_000_000;

    private static PostgresServers.Own server;

    @BeforeAll
    static void start() {
        server = PostgresServers.startOwn();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void decisionsAreRightAgainSoonAfterTheServerIsBack() throws InterruptedException {
        assertRightAgain("recovery", 3, builder -> builder);
    }

    /** The service's store timeout: shorter than a cold server process's first call of a function. */
    @Test
    void decisionsWithAShortTimeoutAreRightAgainSoonAfterTheServerIsBack() throws InterruptedException {
        assertRightAgain("short timeout", 2, builder -> builder.timeout(Duration.ofMillis(15)));
    }

    private static void assertRightAgain(String name, int outages, UnaryOperator<PostgresStore.Builder> options)
            throws InterruptedException {
        String run = UUID.randomUUID().toString();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(server.url() + "&connectTimeout=1&loginTimeout=1");
        config.setConnectionTimeout(250);
        try (HikariDataSource dataSource = new HikariDataSource(config)) {
            RateLimiter limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                    .limit(LIMIT, Duration.ofHours(1))
                    .store(options.apply(PostgresStore.builder(dataSource).failurePolicy(FailurePolicy.FAIL_CLOSED))
                            .build())
                    .build();
            List<Duration> took =
                    RecoveryProbe.outages(limiter, "recovery:" + run + ":", outages, server::stop, server::restart);
            for (int outage = 1; outage <= took.size(); outage++) {
                long millis = took.get(outage - 1).toMillis();
                System.out.printf(
                        "PostgresRecoveryTest (%s): outage %d: the first right decision %d ms after the server was"
                                + " back%n",
                        name, outage, millis);
                assertTrue(
                        took.get(outage - 1).compareTo(BOUND) < 0,
                        name + ", outage " + outage + ": right decisions " + millis
                                + " ms after the server was back, more than " + BOUND);
            }
        }
    }
}
