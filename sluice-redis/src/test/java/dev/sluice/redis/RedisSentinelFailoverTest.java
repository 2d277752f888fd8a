package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.assembly.AssembledStore;
import dev.sluice.assembly.StoreAssembly;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * {@code redis-sentinel://} against real processes: a master, its replica and a sentinel, then a failover under load.
 * During the switch every decision is the store's or its failure policy's (fail-open here: allowed, marked
 * {@link Decision#failed()}), never an exception; after it, decisions are the new master's. The switch time (from
 * {@code SENTINEL FAILOVER} to the first decision written on the new master) is printed; docs/benchmarks.md records
 * it.
 */
class RedisSentinelFailoverTest {
    private static final String MASTER = "sluice-master";

    /** The server's role; "unknown" if the call fails (the sentinel closes clients' connections as it reconfigures). */
    static String role(RedisServer server) {
        String info;
        try {
            info = String.valueOf(server.call("INFO", "replication"));
        } catch (IllegalStateException e) {
            return "unknown";
        }
        return info.contains("role:master") ? "master" : info.contains("role:slave") ? "replica" : info;
    }

    @Test
    void decisionsFollowTheFailurePolicyDuringAFailoverAndAreTheNewMastersAfter() throws Exception {
        try (RedisServer master = RedisServers.start();
                RedisServer replica = RedisServers.start("--replicaof", "127.0.0.1", String.valueOf(master.port()));
                RedisServer sentinel = RedisServers.startSentinel(
                        "--sentinel",
                        "monitor",
                        MASTER,
                        "127.0.0.1",
                        String.valueOf(master.port()),
                        "1",
                        "--sentinel",
                        "down-after-milliseconds",
                        MASTER,
                        "1000",
                        "--sentinel",
                        "failover-timeout",
                        MASTER,
                        "5000")) {
            Await.until("the replica in sync", Await.GENEROUS, () -> String.valueOf(replica.call("INFO", "replication"))
                    .contains("master_link_status:up"));
            Await.until("the sentinel knows the replica", Await.GENEROUS, () -> !((List<?>)
                            sentinel.call("SENTINEL", "REPLICAS", MASTER))
                    .isEmpty());

            try (AssembledStore store = StoreAssembly.builder()
                            .timeout(Duration.ofMillis(200))
                            .build()
                            .open("redis-sentinel://127.0.0.1:" + sentinel.port() + "#" + MASTER);
                    RateLimiter limiter = store.store()
                            .bind(new LimiterConfig(
                                    Algorithm.FIXED_WINDOW,
                                    1_000_000_000L,
                                    Duration.ofHours(1),
                                    Clock.systemUTC(),
                                    false,
                                    1,
                                    false))) {
                assertTrue(store.description().startsWith("redis-sentinel://"), store.description());
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong decided = new AtomicLong();
                AtomicLong failedOpen = new AtomicLong();
                AtomicReference<Throwable> wrong = new AtomicReference<>();
                Thread load = new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            Decision d = limiter.tryAcquire("load");
                            if (d.failed()) {
                                assertTrue(d.allowed(), "fail-open: " + d);
                                failedOpen.incrementAndGet();
                            } else {
                                assertTrue(d.allowed(), d.toString());
                                decided.incrementAndGet();
                            }
                        }
                    } catch (Throwable t) {
                        wrong.set(t);
                    }
                });
                load.start();
                try {
                    Await.until("decisions of the first master", Await.GENEROUS, () -> decided.get() >= 100);

                    long start = System.nanoTime();
                    assertEquals("OK", String.valueOf(sentinel.call("SENTINEL", "FAILOVER", MASTER)));
                    AtomicLong probe = new AtomicLong();
                    Await.until(
                            "a decision written on the new master",
                            Await.GENEROUS,
                            () -> role(replica).equals("master")
                                    && written(limiter, replica, "probe:" + probe.incrementAndGet()));
                    long switchMillis = (System.nanoTime() - start) / 1_000_000;
                    Await.until("the old master a replica", Await.GENEROUS, () -> role(master)
                            .equals("replica"));
                    long before = decided.get();
                    Await.until(
                            "the load decided on the new master", Await.GENEROUS, () -> decided.get() > before + 100);
                    System.out.println("sentinel failover: decisions on the new master " + switchMillis
                            + " ms after SENTINEL FAILOVER; " + failedOpen.get() + " of "
                            + (decided.get() + failedOpen.get()) + " decisions answered by the failure policy");
                } finally {
                    stop.set(true);
                    load.join();
                }
                assertNull(wrong.get(), "every decision the store's or the failure policy's");
            }
        }
    }

    /** Whether a decision on a fresh key succeeded and its write is on {@code server}. */
    private static boolean written(RateLimiter limiter, RedisServer server, String key) {
        Decision d = limiter.tryAcquire(key);
        if (d.failed()) {
            return false;
        }
        try {
            Object keys = server.call("KEYS", "*" + key + "*");
            return keys instanceof List<?> l && !l.isEmpty();
        } catch (IllegalStateException e) { // a connection closed by the sentinel: asked again
            return false;
        }
    }
}
