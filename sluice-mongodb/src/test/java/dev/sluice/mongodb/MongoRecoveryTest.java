package dev.sluice.mongodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.server.EmbeddedMongoServer;
import dev.sluice.testkit.server.MongoServers;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
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
            Caller caller = new Caller(limiter, "recovery:" + run + ":");
            try {
                caller.arm();
                caller.awaitRight();
                for (int outage = 1; outage <= OUTAGES; outage++) {
                    server.stop();
                    long failed = caller.failed.get();
                    Await.until(
                            "three failure-policy answers while down",
                            Await.GENEROUS,
                            () -> caller.failed.get() >= failed + 3);
                    caller.arm(); // no right answer can come before the server is back
                    server.start();
                    long back = System.nanoTime();
                    long took = Math.max(0, caller.awaitRight() - back);
                    System.out.printf(
                            "MongoRecoveryTest: outage %d: the first right decision %d ms after the server was back%n",
                            outage, TimeUnit.NANOSECONDS.toMillis(took));
                    assertTrue(
                            took < BOUND.toNanos(),
                            "outage " + outage + ": right decisions " + TimeUnit.NANOSECONDS.toMillis(took)
                                    + " ms after the server was back, more than " + BOUND);
                }
            } finally {
                caller.stop();
            }
            assertEquals(0, caller.wrong.get(), "every answer was the server's or the failure policy's");
        }
    }

    /**
     * Decides on a new key every 10 ms: right is allowed with {@code LIMIT - 1} left, the failure policy's answer is
     * {@link Decision#failed()}; anything else is wrong.
     */
    static final class Caller {
        final AtomicLong failed = new AtomicLong();
        final AtomicLong wrong = new AtomicLong();
        private final AtomicLong firstRightAt = new AtomicLong(); // System.nanoTime() at its answer
        private volatile boolean armed;
        private final Thread thread;
        private volatile boolean running = true;

        Caller(RateLimiter limiter, String keys) {
            thread = new Thread(
                    () -> {
                        for (long i = 0; running; i++) {
                            Decision d = limiter.tryAcquire(keys + i);
                            long at = System.nanoTime();
                            if (d.failed()) {
                                failed.incrementAndGet();
                            } else if (d.allowed() && d.remaining() == LIMIT - 1) {
                                if (armed) {
                                    armed = false;
                                    firstRightAt.set(at);
                                }
                            } else {
                                wrong.incrementAndGet();
                            }
                            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                        }
                    },
                    "recovery-caller");
            thread.start();
        }

        /** Makes the next right answer's time the one {@link #awaitRight()} returns. */
        void arm() {
            armed = true;
        }

        /** Waits for the first right answer since {@link #arm()}; returns the time it was given. */
        long awaitRight() {
            Await.until("a right decision", Await.GENEROUS, () -> !armed);
            return firstRightAt.get();
        }

        void stop() throws InterruptedException {
            running = false;
            thread.join(Await.GENEROUS.toMillis());
        }
    }
}
