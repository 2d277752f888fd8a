package dev.sluice.spi;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What a shared store offers, beside its {@link AtomicDecider}s, to decide a joint request
 * ({@link dev.sluice.RateLimiter#tryAcquireAll}) in one atomic round trip: one script over several keys, one
 * function call. A store without it has its joint requests taken and given back.
 *
 * <p>Implementations are thread-safe; each call returns or throws within the store's timeout, and any exception is
 * a store failure, answered by the failure policy for every part.
 */
public interface AtomicJointDecider {

    /**
     * Whether these keys can be decided in one atomic call. A Redis Cluster answers whether they share a hash slot;
     * a store that can always do it answers {@code true}, the default.
     *
     * @param deciders the deciders of the parts, each one this store created
     * @param keys     the keys of the parts, in the same order
     */
    default boolean canDecideTogether(List<AtomicDecider> deciders, List<String> keys) {
        return true;
    }

    /**
     * Whether a joint request answers exactly as the consuming {@link AtomicDecider#decide decide} of its one part
     * would: it has one part, and that part's limiter does not count rejections. All or nothing over one part is that
     * part's decision, and a refusal that does not count takes nothing, as that {@code decide}'s refusal. A store may
     * then decide the request as that single one, in one pass instead of a pass that asks and one that takes (each
     * check of the policy engine of one descriptor is such a request).
     *
     * @param parts         the request's number of parts
     * @param countRejected whether its first part's limiter counts rejections
     */
    static boolean answersAsSingle(int parts, boolean countRejected) {
        return parts == 1 && !countRejected;
    }

    /**
     * Decides every part in one atomic step: if each would be admitted alone, each takes its cost and answers as
     * its {@link AtomicDecider#decide decide} with {@code consume} would (its {@code place} set); otherwise none
     * takes anything, but for the refused parts whose limiter counts rejections, which count it, and each answers
     * as its {@code decide} without {@code consume} would at that instant.
     *
     * @param deciders the deciders of the parts, each one this store created
     * @param keys     the parts' keys, validated, no decider with the same key twice
     * @param costs    the parts' costs
     * @param nowNanos per part, nanoseconds since the epoch from its limiter's clock, or
     *                 {@link AtomicDecider#STORE_TIME} (then for every part)
     * @return one decision per part, in order
     */
    List<StoreDecision> decideAll(List<AtomicDecider> deciders, List<String> keys, long[] costs, long[] nowNanos);

    /**
     * Whether {@link #decideAll(List, List, long[], long[], long)} keeps to its deadline: it waits no longer, and a
     * call not answered by then is never applied by the store afterwards (it is dropped before it is sent, or the
     * store refuses it as stale). Only then does a caller with a deadline decide on its own thread
     * ({@link dev.sluice.RateLimiter#tryAcquireAllBy}). Default false.
     */
    default boolean keepsDeadlines() {
        return false;
    }

    /**
     * {@link #decideAll(List, List, long[], long[])}, answering or failing by {@code deadlineNanos} (a
     * {@link System#nanoTime()} value) where the store {@linkplain #keepsDeadlines() keeps deadlines}; the default
     * ignores the deadline. A call past its deadline throws, and, where the store keeps deadlines, took nothing.
     */
    default List<StoreDecision> decideAll(
            List<AtomicDecider> deciders, List<String> keys, long[] costs, long[] nowNanos, long deadlineNanos) {
        return decideAll(deciders, keys, costs, nowNanos);
    }

    /**
     * {@link #decideAll(List, List, long[], long[], long)} without waiting: the returned future completes with the
     * decisions, or fails, by {@code deadlineNanos} at the latest. Called only where the store
     * {@linkplain #keepsDeadlines() keeps deadlines}, which should then complete it when the store answers (a timer
     * failing it at the deadline) rather than on the calling thread. Default: the call with a deadline on the calling
     * thread, its answer or its exception completed.
     */
    default CompletableFuture<List<StoreDecision>> decideAllAsync(
            List<AtomicDecider> deciders, List<String> keys, long[] costs, long[] nowNanos, long deadlineNanos) {
        try {
            return CompletableFuture.completedFuture(decideAll(deciders, keys, costs, nowNanos, deadlineNanos));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
