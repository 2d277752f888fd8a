package dev.sluice.bench.redis;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Threads;

/**
 * Bucket4j's Redis backend for Lettuce as its documentation builds it: {@code Bucket4jLettuce.casBasedBuilder}
 * (its compare-and-swap proxy manager: read the bucket, compute, write it back if unchanged, retry otherwise), one
 * client, a bucket of capacity {@code L} refilled greedily at {@code L} per {@code W} (Sluice's
 * {@code TOKEN_BUCKET}), keys expiring once full. {@code tryConsumeAndReturnRemaining} answers what a Sluice
 * {@code Decision} does (remaining tokens, time to refill). Same limit, callers and keys as {@link SluiceRedisBench}.
 */
public class Bucket4jRedisBench extends RedisBench {

    private BucketProxy[] buckets;

    @Override
    protected void prepare(String[] names) {
        LettuceBasedProxyManager<byte[]> proxies = Bucket4jLettuce.casBasedBuilder(client)
                .expirationAfterWrite(
                        ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(1)))
                .build();
        BucketConfiguration configuration = BucketConfiguration.builder()
                .addLimit(l -> l.capacity(RedisTarget.LIMIT).refillGreedy(RedisTarget.LIMIT, RedisTarget.WINDOW))
                .build();
        buckets = new BucketProxy[keys];
        for (int i = 0; i < keys; i++) {
            buckets[i] = proxies.builder().build(names[i].getBytes(StandardCharsets.UTF_8), () -> configuration);
            if (!buckets[i].tryConsume(1)) {
                throw new IllegalStateException("setup request denied for " + names[i]);
            }
        }
    }

    @Benchmark
    @Threads(1)
    public ConsumptionProbe tryConsume1T(Cursor cursor, Decisions decisions) {
        return consume(cursor, decisions);
    }

    @Benchmark
    @Threads(64)
    public ConsumptionProbe tryConsume64T(Cursor cursor, Decisions decisions) {
        return consume(cursor, decisions);
    }

    private ConsumptionProbe consume(Cursor cursor, Decisions decisions) {
        ConsumptionProbe p = buckets[cursor.next()].tryConsumeAndReturnRemaining(1);
        decisions.count(p.isConsumed());
        return p;
    }
}
