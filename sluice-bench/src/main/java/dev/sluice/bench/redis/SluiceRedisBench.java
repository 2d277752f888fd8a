package dev.sluice.bench.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.redis.RedisStore;
import java.time.Duration;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Threads;

/**
 * Sluice's {@link RateLimiter#tryAcquire(String)} on the Redis store as an application runs it: one client, one
 * store (one connection, shared by every thread), {@link RedisStore#recommendedClientOptions()}, the store's clock
 * (Redis {@code TIME}, the default), under {@link RedisTarget#LIMIT} per {@link RedisTarget#WINDOW}. From 1 caller or
 * 64 concurrent callers, on one hot key or on 100,000 keys. Every key is created before measuring.
 */
public class SluiceRedisBench extends RedisBench {

    @Param({"TOKEN_BUCKET"})
    public Algorithm algorithm;

    private RedisStore store;
    private RateLimiter limiter;
    private String[] names;

    @Override
    protected void prepare(String[] names) {
        client.setOptions(RedisStore.recommendedClientOptions());
        store = RedisStore.builder(client).timeout(Duration.ofSeconds(2)).build();
        limiter = RateLimiter.builder(algorithm)
                .limit(RedisTarget.LIMIT, RedisTarget.WINDOW)
                .store(store)
                .build();
        this.names = names;
        for (String name : names) {
            if (!limiter.tryAcquire(name).allowed()) {
                throw new IllegalStateException("setup request denied for " + name);
            }
        }
    }

    @Override
    protected void release() {
        store.close();
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
