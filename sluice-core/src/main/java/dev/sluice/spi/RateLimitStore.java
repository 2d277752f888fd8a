package dev.sluice.spi;

import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;

/**
 * Where a limiter keeps its per-key state. A store binds a validated {@link LimiterConfig} to a
 * {@link RateLimiter} whose every decision is atomic per key on that store.
 *
 * <p>Implementations must pass the store contract suite ({@code dev.sluice.testkit.RateLimiterContract} in
 * {@code sluice-testkit}), which fixes the semantics of every algorithm to the request.
 */
@FunctionalInterface
public interface RateLimitStore {

    /** A limiter with {@code config} whose state lives in this store. */
    RateLimiter bind(LimiterConfig config);
}
