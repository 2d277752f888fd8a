package dev.sluice.internal;

import dev.sluice.Acquisition;
import dev.sluice.JointDecision;
import dev.sluice.RateLimiter;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Decides a joint request ({@link dev.sluice.RateLimiter#tryAcquireAll}) all or nothing: it passes only if every
 * {@link Acquisition} passes, and when refused consumes from none of them (but for the limits that refuse it and
 * count rejections: they count it, as they would alone).
 *
 * <p>Each limiter of core's stores names the decider of its store ({@link JointMember#jointDecider()}). A joint request
 * whose limiters all name equal deciders is decided by that decider, which can make it one atomic step (the
 * in-memory store locks every key in one order; a store can run one script or one function over every key);
 * any other request is decided by {@link #takeAndGiveBack()}.
 *
 * <p>A decider tells each limiter's listeners of the decision taken for it. Implementations are thread-safe.
 */
public interface JointDecider {

    /**
     * Decides {@code parts} all or nothing.
     *
     * @param parts validated, at least one, no limiter and key twice, every limiter naming a decider equal to this
     * @return one decision per part, in order
     */
    JointDecision decideAll(List<Acquisition> parts);

    /**
     * Decides {@code parts} as {@link #decideAll} does, on the caller's thread and never waiting past
     * {@code deadlineNanos} ({@link System#nanoTime()}), if it can: from memory, or by store calls it bounds by the
     * deadline and that the store never applies past it. Otherwise it takes nothing and answers null. Default: null.
     *
     * @param parts as for {@link #decideAll}
     * @return one decision per part, in order; null if deciding needs a call this thread cannot bound
     */
    default @Nullable JointDecision decideAllBy(List<Acquisition> parts, long deadlineNanos) {
        return null;
    }

    /**
     * Decides {@code parts} as {@link #decideAllBy} does, without waiting for a store call: the returned future is
     * completed at once when the decision needs no store call, and otherwise when the store answers, by
     * {@code deadlineNanos} at the latest (then with the failure policy's answer). Null where {@link #decideAllBy}
     * answers null. Default: {@link #decideAllBy} on the caller's thread, completed.
     *
     * @param parts as for {@link #decideAll}
     * @return the decision to come, failed with what {@link #decideAllBy} would throw; null if deciding needs a call
     *         this thread cannot bound
     */
    default @Nullable CompletableFuture<JointDecision> decideAllAsync(List<Acquisition> parts, long deadlineNanos) {
        JointDecision d = decideAllBy(parts, deadlineNanos);
        return d == null ? null : CompletableFuture.completedFuture(d);
    }

    /**
     * The decider for limiters of any store: takes every part in order with {@link dev.sluice.RateLimiter#reserve};
     * at the first refusal it cancels what it took and asks the rest with {@link dev.sluice.RateLimiter#peek}.
     * Never over-admits; while a request that is refused holds what it took, a concurrent request can be refused
     * for want of those permits. The limiters' listeners hear each {@code reserve} as it is made.
     */
    static JointDecider takeAndGiveBack() {
        return TakeAndGiveBack.INSTANCE;
    }

    /** The decider {@code limiter} names if it is a {@link JointMember}, else {@link #takeAndGiveBack()}. */
    static JointDecider of(RateLimiter limiter) {
        return limiter instanceof JointMember m
                ? Objects.requireNonNull(m.jointDecider(), "limiter named no joint decider")
                : takeAndGiveBack();
    }
}
