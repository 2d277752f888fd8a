package dev.sluice.bench.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.redis.RedisStore;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Sluice's {@link RateLimiter#tryAcquire(String)} on the Redis store as an application runs it: one client, one
 * store (one connection, shared by every thread), {@link RedisStore#recommendedClientOptions()}, the store's clock
 * (Redis {@code TIME}, the default), under {@link RedisTarget#LIMIT} per {@link RedisTarget#WINDOW}. From 1 caller or
 * 64 concurrent callers, on one hot key or on 100,000 keys. Every key is created before measuring.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class SluiceRedisBench {

    @Param({"TOKEN_BUCKET"})
    public Algorithm algorithm;

    @Param({"1", "100000"})
    public int keys;

    private RedisClient client;
    private RedisStore store;
    private RateLimiter limiter;
    private String[] names;

    @Setup(Level.Trial)
    public void setUp(RedisTarget target) {
        client = RedisClient.create(target.uri);
        client.setOptions(RedisStore.recommendedClientOptions());
        store = RedisStore.builder(client).timeout(Duration.ofSeconds(2)).build();
        limiter = RateLimiter.builder(algorithm).limit(RedisTarget.LIMIT, RedisTarget.WINDOW).store(store).build();
        names = target.keys(keys);
        for (String name : names) {
            if (!limiter.tryAcquire(name).allowed()) {
                throw new IllegalStateException("setup request denied for " + name);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        store.close();
        client.shutdown();
    }

    @Benchmark
    @Threads(1)
    public Decision tryAcquire1T(Cursor cursor, Decisions decisions) {
        return decide(cursor, decisions);
    }

    @Benchmark
    @Threads(64)
    public Decision tryAcquire64T(Cursor cursor, Decisions decisions) {
        return decide(cursor, decisions);
    }

    private Decision decide(Cursor cursor, Decisions decisions) {
        Decision d = limiter.tryAcquire(names[cursor.next()]);
        decisions.count(d.allowed());
        return d;
    }
}
