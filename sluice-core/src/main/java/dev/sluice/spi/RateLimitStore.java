package dev.sluice.spi;

import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;

/**
 * Where a limiter keeps its per-key state. A store binds a validated {@link LimiterConfig} to a
 * {@link RateLimiter} whose every decision is atomic per key on that store.
 *
 * <p>A store that takes every algorithm exactly (the in-memory store, each shared store in exact mode) passes the
 * store contract suite ({@code dev.sluice.testkit.RateLimiterContract} in {@code sluice-testkit}), which fixes the
 * semantics of every algorithm to the request. Synchronized mode ({@code dev.sluice.sync.SynchronizedStore}) is
 * neither: it takes three algorithms and lets the cluster pass a limit by what other instances admit in one flush
 * interval; its counter stores pass {@code dev.sluice.testkit.CounterStoreContract}. See the package summary.
 */
@FunctionalInterface
public interface RateLimitStore {

    /** A limiter with {@code config} whose state lives in this store. */
    RateLimiter bind(LimiterConfig config);
}
