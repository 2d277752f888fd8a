package dev.sluice.mongodb;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.sluice.Algorithm;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.testkit.RecoveryProbe;
import dev.sluice.testkit.server.EmbeddedMongoServer;
import dev.sluice.testkit.server.MongoServers;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * How soon decisions are right again after an outage: a caller decides every 10 ms on a store built as its class
 * comment shows (a client from a connection string with the driver's defaults, the store's default timeout); the
 * server stops and starts again on the same port, three times; from the moment it accepts connections again to the
 * first decision answered by the server (not the failure policy) must take less than {@link #BOUND}.
 *
 * <p>While a call waits for a server, the driver checks the server every 500 ms (its minimum heartbeat frequency),
 * not every 10 s (its heartbeat frequency): the calls themselves keep the check frequent.
 */
class MongoRecoveryTest {

    /** Safe on a loaded two-core machine; a healthy run takes well under a second. */
    private static final Duration BOUND = Duration.ofSeconds(5);

    private static final long LIMIT = 1_000_000;
    private static final int OUTAGES = 3;

    @Test
    void decisionsAreRightAgainSoonAfterTheServerIsBack() throws InterruptedException {
        String run = UUID.randomUUID().toString();
        try (EmbeddedMongoServer server = MongoServers.start();
                MongoClient client = MongoClients.create(server.connectionString())) {
            RateLimiter limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                    .limit(LIMIT, Duration.ofHours(1))
                    .store(MongoStore.builder(client, Mongo.DATABASE)
                            .failurePolicy(FailurePolicy.FAIL_CLOSED)
                            .build())
                    .build();
            List<Duration> took =
                    RecoveryProbe.outages(limiter, "recovery:" + run + ":", OUTAGES, server::stop, server::start);
            for (int outage = 1; outage <= took.size(); outage++) {
                long millis = took.get(outage - 1).toMillis();
                System.out.printf(
                        "MongoRecoveryTest: outage %d: the first right decision %d ms after the server was back%n",
                        outage, millis);
                assertTrue(
                        took.get(outage - 1).compareTo(BOUND) < 0,
                        "outage " + outage + ": right decisions " + millis + " ms after the server was back, more than "
                                + BOUND);
            }
        }
    }
}
