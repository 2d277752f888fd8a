package dev.sluice.bench.state;

import com.google.common.util.concurrent.RateLimiter;
import dev.sluice.bench.Keys;
import dev.sluice.bench.Load;
import java.util.concurrent.ConcurrentHashMap;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Guava's {@code RateLimiter.create(L/W per second)} (the "bursty" smooth limiter): the same rate as the others,
 * but its burst is one second's worth of permits, not {@code L}, and a request that finds the limiter free is
 * granted whatever its cost, the wait being charged to the next request. Every call takes the limiter's
 * {@code synchronized} mutex. {@code tryAcquire()} answers at once. On one key the limiter is called directly;
 * on many keys it is looked up in a {@link ConcurrentHashMap}.
 */
@State(Scope.Benchmark)
public class GuavaState {

    @Param({"1", "1000000"})
    public int keys;

    @Param
    public Load load;

    private double permitsPerSecond;
    private RateLimiter single;
    private final ConcurrentHashMap<String, RateLimiter> limiters = new ConcurrentHashMap<>();
    private String[] names;

    @Setup(Level.Trial)
    public void setUp() {
        permitsPerSecond = load.limit * 1e9 / load.window.toNanos();
        names = Keys.generate(keys);
        for (String name : names) {
            RateLimiter r = limiter(name);
            if (load.drained() && !r.tryAcquire(Math.toIntExact(load.limit))) {
                throw new IllegalStateException("setup request denied for " + name);
            }
        }
        single = limiters.get(names[0]);
    }

    /** The limiter of key {@code index}: the only limiter on one key, a map look-up otherwise. */
    public RateLimiter limiterAt(int index) {
        return keys == 1 ? single : limiter(names[index]);
    }

    private RateLimiter limiter(String key) {
        RateLimiter r = limiters.get(key);
        return r != null ? r : limiters.computeIfAbsent(key, k -> RateLimiter.create(permitsPerSecond));
    }
}
