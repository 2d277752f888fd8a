package dev.sluice.bench.state;

import dev.sluice.bench.Keys;
import dev.sluice.bench.Load;
import io.github.bucket4j.Bucket;
import java.util.concurrent.ConcurrentHashMap;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Bucket4j's local lock-free token bucket as its users build it: {@code Bucket.builder()} with one limit of
 * capacity {@code L} refilled greedily at {@code L} per {@code W} (the same continuous refill as Sluice's
 * {@code TOKEN_BUCKET}), the default millisecond time meter and the default lock-free (CAS) synchronization.
 * On one key the benchmark calls the bucket directly; on many keys it looks the bucket up in a
 * {@link ConcurrentHashMap}, creating it if absent, which is how per-key limits are done with Bucket4j.
 */
@State(Scope.Benchmark)
public class Bucket4jState {

    @Param({"1", "1000000"})
    public int keys;

    @Param
    public Load load;

    private Bucket single;
    private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
    private String[] names;

    @Setup(Level.Trial)
    public void setUp() {
        names = Keys.generate(keys);
        for (String name : names) {
            Bucket b = bucket(name);
            if (load.drained() && !b.tryConsume(load.limit)) {
                throw new IllegalStateException("setup request denied for " + name);
            }
        }
        single = buckets.get(names[0]);
    }

    /** A new bucket under the run's limit. */
    public Bucket newBucket() {
        return Bucket.builder().addLimit(l -> l.capacity(load.limit).refillGreedy(load.limit, load.window)).build();
    }

    /** The bucket of key {@code index}: the only bucket on one key, a map look-up otherwise. */
    public Bucket bucketAt(int index) {
        return keys == 1 ? single : bucket(names[index]);
    }

    private Bucket bucket(String key) {
        Bucket b = buckets.get(key);
        return b != null ? b : buckets.computeIfAbsent(key, k -> newBucket());
    }
}
