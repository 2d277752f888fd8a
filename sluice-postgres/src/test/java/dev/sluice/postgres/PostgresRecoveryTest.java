package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.server.PostgresServers;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
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
                        server.restart();
                        long back = System.nanoTime();
                        long took = Math.max(0, caller.awaitRight() - back);
                        System.out.printf(
                                "PostgresRecoveryTest: outage %d: the first right decision %d ms after the server was back%n",
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
