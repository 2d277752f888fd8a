package dev.sluice.bench.state;

import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Resilience4j's {@code AtomicRateLimiter}: {@code limitForPeriod = L} permits per {@code limitRefreshPeriod = W}.
 * A different design from every Sluice algorithm: permits are handed out per cycle of {@code W} counted from the
 * limiter's creation (a fixed window, not epoch-aligned), and unused permits do not carry over. Its acquire may
 * wait for the next cycle; here {@code timeoutDuration} is zero, so {@code acquirePermission()} answers at once.
 * On one key the limiter is called directly; on many keys it is looked up in a {@link ConcurrentHashMap}.
 */
@State(Scope.Benchmark)
public class Resilience4jState extends PerKeyState<RateLimiter> {

    private RateLimiterConfig config;

    @Override
    protected void configure() {
        config = RateLimiterConfig.custom()
                .limitForPeriod(Math.toIntExact(load.limit))
                .limitRefreshPeriod(load.window)
                .timeoutDuration(Duration.ZERO)
                .build();
    }

    @Override
    protected RateLimiter create(String key) {
        return RateLimiter.of(key, config);
    }

    @Override
    protected boolean drain(RateLimiter limiter) {
        return limiter.acquirePermission(Math.toIntExact(load.limit));
    }
}
