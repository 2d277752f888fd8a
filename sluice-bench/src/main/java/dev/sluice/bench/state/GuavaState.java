package dev.sluice.bench.state;

import com.google.common.util.concurrent.RateLimiter;
import java.util.concurrent.ConcurrentHashMap;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Guava's {@code RateLimiter.create(L/W per second)} (the "bursty" smooth limiter): the same rate as the others,
 * but its burst is one second's worth of permits, not {@code L}, and a request that finds the limiter free is
 * granted whatever its cost, the wait being charged to the next request. Every call takes the limiter's
 * {@code synchronized} mutex. {@code tryAcquire()} answers at once. On one key the limiter is called directly;
 * on many keys it is looked up in a {@link ConcurrentHashMap}.
 */
@State(Scope.Benchmark)
public class GuavaState extends PerKeyState<RateLimiter> {

    private double permitsPerSecond;

    @Override
    protected void configure() {
        permitsPerSecond = load.limit * 1e9 / load.window.toNanos();
    }

    @Override
    protected RateLimiter create(String key) {
        return RateLimiter.create(permitsPerSecond);
    }

    @Override
    protected boolean drain(RateLimiter limiter) {
        return limiter.tryAcquire(Math.toIntExact(load.limit));
    }
}
