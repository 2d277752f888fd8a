package dev.sluice;

import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Told of what limiters and stores do: every decision, every store failure, the time every store call took. The one
 * hook for metrics and logs; set on a limiter ({@link RateLimiterBuilder#listener}) or on a shared store (its
 * builder's {@code listener}), where it hears every limiter bound to that store.
 *
 * <p>Every method has an empty default, so a listener implements only what it needs. Methods are called on the
 * thread that made the request (or, for failures of background work such as a flush, on that work's thread), after
 * the decision is made: they must be quick and must not block. A listener that throws changes no decision: the
 * exception is caught and logged (through {@link System.Logger}, at most once a minute per kind of call).
 */
public interface RateLimitListener {

    /** A listener that does nothing. */
    RateLimitListener NONE = new RateLimitListener() {
        @Override
        public String toString() {
            return "RateLimitListener.NONE";
        }
    };

    /** A listener told only of store failures, each handed to {@code onFailure}. */
    static RateLimitListener ofFailures(Consumer<? super SluiceException> onFailure) {
        Objects.requireNonNull(onFailure, "onFailure must not be null");
        return new RateLimitListener() {
            @Override
            public void onStoreFailure(@Nullable RateLimiter limiter, SluiceException failure) {
                onFailure.accept(failure);
            }

            @Override
            public String toString() {
                return "RateLimitListener.ofFailures(" + onFailure + ")";
            }
        };
    }

    /**
     * A decision was made: by {@code tryAcquire}, {@code reserve} or a joint request (one call per limit of it), not
     * by {@code peek}.
     *
     * @param limiter  the limiter that decided, whose {@link RateLimiter#config()} names the limit
     * @param key      the key decided on
     * @param cost     the permits asked for
     * @param decision the answer; {@link Decision#failed()} tells an answer of the failure policy
     */
    default void onDecision(RateLimiter limiter, String key, long cost, Decision decision) {}

    /**
     * A call to the store failed or timed out (after it was counted, before the failure policy answers).
     *
     * @param limiter the limiter whose request failed; {@code null} for a failure of the store's own work (a
     *                synchronized flush or refresh, creating an index)
     * @param failure what failed, with the driver's exception as its cause
     */
    default void onStoreFailure(@Nullable RateLimiter limiter, SluiceException failure) {}

    /**
     * A call to the store returned or failed after {@code nanos} nanoseconds.
     *
     * @param limiter the limiter whose request it was; {@code null} for the store's own work
     * @param nanos   how long the call took, measured on {@link System#nanoTime()}
     */
    default void onStoreCall(@Nullable RateLimiter limiter, long nanos) {}
}
