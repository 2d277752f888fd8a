package dev.sluice;

import dev.sluice.internal.JointDecider;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Limits the rate of requests per key. Build one with {@link #builder(Algorithm)}.
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
 *         .limit(100, Duration.ofMinutes(1))
 *         .build();
 * Decision d = limiter.tryAcquire("client:abc");
 * if (!d.allowed()) {
 *     // answer 429, Retry-After: d.retryAfter()
 * }
 * }</pre>
 *
 * <p>Implementations are thread-safe. Every method decides atomically per key: concurrent callers on one key
 * never admit more than the limit. A rejection is a {@link Decision}, never an exception.
 *
 * <p>Each request method throws {@link IllegalArgumentException} when the key is null or empty or the cost is
 * not in {@code [1, limit]}, an {@link IllegalStateException} when the limiter or the store behind it has been
 * closed, and a {@link SluiceException} when the store fails and its failure policy is to throw.
 */
public interface RateLimiter extends AutoCloseable {

    /** A builder for a limiter running {@code algorithm}; the in-memory store is the default. */
    static RateLimiterBuilder builder(Algorithm algorithm) {
        return RateLimiterBuilder.forAlgorithm(algorithm);
    }

    /** The configuration this limiter was built with. */
    LimiterConfig config();

    /** Acquires one permit for {@code key} if the limit allows it. */
    default Decision tryAcquire(String key) {
        return tryAcquire(key, 1);
    }

    /**
     * Acquires {@code cost} permits for {@code key} if the limit allows all of them; otherwise acquires none
     * (unless {@link RateLimiterBuilder#countRejected(boolean) countRejected} is on).
     */
    Decision tryAcquire(String key, long cost);

    /**
     * Answers whether {@code cost} permits could be acquired now, consuming nothing. {@link Decision#remaining()}
     * is then the number of permits available now.
     */
    Decision peek(String key, long cost);

    /**
     * Acquires like {@link #tryAcquire(String, long)} and returns a handle that can give the permits back.
     */
    Reservation reserve(String key, long cost);

    /**
     * Acquires every part of a request or none: the request passes only if each limit allows its part, and a request
     * that is refused consumes from none of them. The limits that refuse it and count rejections
     * ({@link RateLimiterBuilder#countRejected(boolean)}) count it, as they would alone; no other limit changes.
     *
     * <p>Atomic when every limiter is on the same store, or every limiter on the in-memory store: no other request
     * sees some parts taken and not the others (see each store for how). Across stores, the parts are taken in order
     * ({@link #reserve}) and given back at the first refusal: never over the limit, but a concurrent request may be
     * refused for the permits a refused request held for that moment.
     *
     * @param parts the limits, in the order the answer lists them; at least one, and no limiter with the same key
     *              twice (add the costs instead)
     * @throws IllegalArgumentException if {@code parts} is empty or names a limiter and key twice
     * @throws IllegalStateException    if a limiter is closed
     */
    static JointDecision tryAcquireAll(List<Acquisition> parts) {
        return deciderOf(parts).decideAll(parts);
    }

    /**
     * {@link #tryAcquireAll(List)} on the caller's thread, never waiting past {@code deadlineNanos} (a
     * {@link System#nanoTime()} value), when the limiters can decide so: from memory (the in-memory store, leased
     * limiters whose slices cover the parts or that refuse without a claim, waiting for another request's claim at
     * most until the deadline, and refusals of a shared store's over-limit cache) or by a store call the store bounds
     * by the deadline (exact mode on a store that batches its calls, such as Redis). A store call not answered by the deadline is answered by the failure
     * policy, and the store never applies it afterwards. Otherwise this decides nothing, takes nothing and returns
     * null: decide with {@link #tryAcquireAll(List)} on a thread that may wait for the store's own timeout.
     *
     * <p>This is what lets a caller with a deadline (the rate-limit service) decide without handing every request to
     * another thread: only the requests that need a call it cannot bound go there.
     *
     * @param parts         as for {@link #tryAcquireAll(List)}
     * @param deadlineNanos when the answer is due, by {@link System#nanoTime()}
     * @return the decision, or null if it needs a store call this thread cannot bound by the deadline
     * @throws IllegalArgumentException if {@code parts} is empty or names a limiter and key twice
     * @throws IllegalStateException    if a limiter is closed
     */
    static @Nullable JointDecision tryAcquireAllBy(List<Acquisition> parts, long deadlineNanos) {
        return deciderOf(parts).decideAllBy(parts, deadlineNanos);
    }

    /**
     * {@link #tryAcquireAllBy} without waiting for the store: a decision that needs no store call (from memory, the
     * over-limit cache) is decided on the caller's thread and returned completed; one that needs a store call the
     * store bounds by the deadline (exact mode on a store that batches its calls, such as Redis) is sent, and the
     * returned stage completes when the store answers, or at {@code deadlineNanos} by a timer with the failure
     * policy's answer, never later, and the store never applies it afterwards. The stage completes on the thread that
     * answers it (the store driver's, the timer's, or the caller's): what depends on it should be short or hand its
     * work to an executor. Null, having decided and taken nothing, where {@link #tryAcquireAllBy} answers null.
     *
     * <p>This is what lets a caller with a deadline (the rate-limit service) decide without holding a thread while
     * the store answers.
     *
     * @param parts         as for {@link #tryAcquireAll(List)}
     * @param deadlineNanos when the answer is due, by {@link System#nanoTime()}
     * @return the decision to come, failed as {@link #tryAcquireAll(List)} would throw (a {@link SluiceException}
     *         under {@link FailurePolicy#THROW}, an {@link IllegalStateException} for a closed store); or null if it
     *         needs a store call this thread cannot bound by the deadline
     * @throws IllegalArgumentException if {@code parts} is empty or names a limiter and key twice
     * @throws IllegalStateException    if a limiter is closed
     */
    static @Nullable CompletionStage<JointDecision> tryAcquireAllAsync(List<Acquisition> parts, long deadlineNanos) {
        return deciderOf(parts).decideAllAsync(parts, deadlineNanos);
    }

    /** The decider of {@code parts}, validated: their store's, or take-and-give-back across stores. */
    private static JointDecider deciderOf(List<Acquisition> parts) {
        Objects.requireNonNull(parts, "parts must not be null");
        if (parts.isEmpty()) {
            throw new IllegalArgumentException("parts must not be empty");
        }
        @Nullable JointDecider decider = null;
        for (int i = 0; i < parts.size(); i++) {
            Acquisition a = Objects.requireNonNull(parts.get(i), "parts must not contain null");
            for (int j = 0; j < i; j++) {
                Acquisition b = parts.get(j);
                if (b.limiter() == a.limiter() && b.key().equals(a.key())) {
                    throw new IllegalArgumentException("parts must not name one limiter and key twice, was key '"
                            + a.key() + "' at " + j + " and " + i + " (add the costs instead)");
                }
            }
            JointDecider d = JointDecider.of(a.limiter());
            if (decider == null) {
                decider = d;
            } else if (!decider.equals(d)) {
                decider = JointDecider.takeAndGiveBack();
            }
        }
        return Objects.requireNonNull(decider);
    }

    /** {@link #tryAcquireAll(List)} of the parts given. */
    static JointDecision tryAcquireAll(Acquisition... parts) {
        return tryAcquireAll(List.of(parts));
    }

    /**
     * Lets the limiter go: its per-key state, and its share of any background work of its store, are released. Every
     * request method throws {@link IllegalStateException} afterwards. Idempotent. The store itself stays open for
     * its other limiters. Default: nothing to release.
     */
    @Override
    default void close() {}
}
