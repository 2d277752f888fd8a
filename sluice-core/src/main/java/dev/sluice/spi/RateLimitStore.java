package dev.sluice.spi;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.internal.AlgorithmList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Where a limiter keeps its per-key state. A store binds a validated {@link LimiterConfig} to a
 * {@link RateLimiter} whose every decision is atomic per key on that store.
 *
 * <p>A store that takes every algorithm exactly (the in-memory store, each shared store in exact mode) passes the
 * store contract suite ({@code dev.sluice.testkit.RateLimiterContract} in {@code sluice-testkit}), which fixes the
 * semantics of every algorithm to the request. Synchronized mode ({@code dev.sluice.sync.SynchronizedStore}) is
 * neither: it keeps three algorithms ({@link #algorithms()}) and lets the cluster pass a limit by what other instances
 * admit in one interval; its counter stores pass {@code dev.sluice.testkit.CounterStoreContract}. See the package
 * summary.
 */
@FunctionalInterface
public interface RateLimitStore {

    /**
     * A limiter with {@code config} whose state lives in this store.
     *
     * @throws IllegalArgumentException if the store does not keep the configuration's algorithm, with
     *                                  {@link #refusal} as its message
     */
    RateLimiter bind(LimiterConfig config);

    /**
     * The algorithms this store keeps: {@link #bind} refuses a configuration of any other. Every algorithm, unless the
     * store says otherwise: synchronized and leased mode keep those whose state is counts per frame that add up
     * across instances. Ask this rather than try {@code bind}: it is what {@code check-config}, the policy layer and
     * the docs go by.
     */
    default Set<Algorithm> algorithms() {
        return Collections.unmodifiableSet(EnumSet.allOf(Algorithm.class));
    }

    /**
     * Why this store does not keep {@code algorithm}, in words for an error message (what {@link #bind} throws); null
     * if it keeps it, that is if it is one of {@link #algorithms()}. A store that keeps fewer than every algorithm may
     * say why in its own words, for the same algorithms.
     */
    default @Nullable String refusal(Algorithm algorithm) {
        Set<Algorithm> kept = algorithms();
        return kept.contains(algorithm) ? null : "the store keeps " + AlgorithmList.of(kept) + ", not " + algorithm;
    }
}
