package dev.sluice.spi;

/**
 * The outcome of one atomic decision on a shared store, as the store computed it.
 *
 * @param allowed          whether the request passes
 * @param remaining        whole permits left after the decision, in {@code [0, limit]}
 * @param resetAfterNanos  time until the key is back to its full limit, {@code ≥ 0}
 * @param retryAfterNanos  {@code 0} when allowed; otherwise the time until a request of the same cost could pass
 * @param place            where an admitted request took its permits (a window index, an entry's or sub-window's
 *                         expiry, a bucket's time of the request), to be passed back to
 *                         {@link AtomicDecider#giveBack}; meaningless when not admitted
 */
public record StoreDecision(boolean allowed, long remaining, long resetAfterNanos, long retryAfterNanos, long place) {}
