package dev.sluice.bench.state;

import dev.sluice.bench.Keys;
import dev.sluice.bench.Load;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Resilience4j's {@code AtomicRateLimiter}: {@code limitForPeriod = L} permits per {@code limitRefreshPeriod = W}.
 * A different design from every Sluice algorithm: permits are handed out per cycle of {@code W} counted from the
 * limiter's creation (a fixed window, not epoch-aligned), and unused permits do not carry over. Its acquire may
 * wait for the next cycle; here {@code timeoutDuration} is zero, so {@code acquirePermission()} answers at once.
 * On one key the limiter is called directly; on many keys it is looked up in a {@link ConcurrentHashMap}.
 */
@State(Scope.Benchmark)
public class Resilience4jState {

    @Param({"1", "1000000"})
    public int keys;

    @Param
    public Load load;

    private RateLimiterConfig config;
    private RateLimiter single;
    private final ConcurrentHashMap<String, RateLimiter> limiters = new ConcurrentHashMap<>();
    private String[] names;

    @Setup(Level.Trial)
    public void setUp() {
        config = RateLimiterConfig.custom()
                .limitForPeriod(Math.toIntExact(load.limit))
                .limitRefreshPeriod(load.window)
                .timeoutDuration(Duration.ZERO)
                .build();
        names = Keys.generate(keys);
        for (String name : names) {
            RateLimiter r = limiter(name);
            if (load.drained() && !r.acquirePermission(Math.toIntExact(load.limit))) {
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
        return r != null ? r : limiters.computeIfAbsent(key, k -> RateLimiter.of(k, config));
    }
}
