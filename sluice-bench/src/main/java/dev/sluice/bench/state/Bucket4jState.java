package dev.sluice.bench.state;

import io.github.bucket4j.Bucket;
import java.util.concurrent.ConcurrentHashMap;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Bucket4j's local lock-free token bucket as its users build it: {@code Bucket.builder()} with one limit of
 * capacity {@code L} refilled greedily at {@code L} per {@code W} (the same continuous refill as Sluice's
 * {@code TOKEN_BUCKET}), the default millisecond time meter and the default lock-free (CAS) synchronization.
 * On one key the benchmark calls the bucket directly; on many keys it looks the bucket up in a
 * {@link ConcurrentHashMap}, creating it if absent, which is how per-key limits are done with Bucket4j.
 */
@State(Scope.Benchmark)
public class Bucket4jState extends PerKeyState<Bucket> {

    @Override
    protected Bucket create(String key) {
        return Bucket.builder()
                .addLimit(l -> l.capacity(load.limit).refillGreedy(load.limit, load.window))
                .build();
    }

    @Override
    protected boolean drain(Bucket bucket) {
        return bucket.tryConsume(load.limit);
    }
}
