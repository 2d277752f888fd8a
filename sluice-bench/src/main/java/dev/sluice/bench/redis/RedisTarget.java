package dev.sluice.bench.redis;

import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import java.time.Duration;
import java.util.UUID;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The Redis server a benchmark trial talks to: the one {@code SLUICE_REDIS_URL} names (so that Sluice, Bucket4j and
 * the ceiling run against one server, as {@code run-redis.sh} does), or else one started for the trial on a loopback
 * port ({@code redis-server} on the PATH, or embedded-redis's). Every trial writes keys under a prefix of its own.
 */
@State(Scope.Benchmark)
public class RedisTarget {

    /**
     * The limit every Redis benchmark runs under: 10,000,000 permits per 100 ms (10<sup>8</sup>/s), far above what
     * one Redis serves, so every decision is "allowed" and every decision writes (the costlier path; a rejection
     * that is not counted writes nothing).
     */
    public static final long LIMIT = 10_000_000;
    /** The window of {@link #LIMIT}. */
    public static final Duration WINDOW = Duration.ofMillis(100);

    /** {@code redis://host:port}. */
    public String uri;
    /** A prefix no other trial uses, so that trials never see each other's keys. */
    public String prefix;

    private RedisServer server;

    @Setup(Level.Trial)
    public void start() {
        String url = System.getenv("SLUICE_REDIS_URL");
        if (url == null || url.isBlank()) {
            server = RedisServers.start();
            uri = server.uri();
        } else {
            uri = url;
        }
        prefix = "bench:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    }

    @TearDown(Level.Trial)
    public void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** {@code n} keys under this trial's prefix. */
    public String[] keys(int n) {
        String[] keys = new String[n];
        for (int i = 0; i < n; i++) {
            keys[i] = prefix + "client:" + i;
        }
        return keys;
    }
}
