package dev.sluice.spi;

import dev.sluice.Acquisition;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.LimiterConfig;
import dev.sluice.SluiceException;
import dev.sluice.internal.JointDecider;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.jspecify.annotations.Nullable;

/**
 * The joint of one shared store: every {@link SharedRateLimiter} the store binds shares one, so that joint
 * requests over its limiters reach the store together. Where the store has an {@link AtomicJointDecider} that can
 * take the keys together, the request is one atomic call; otherwise (no such decider, or keys a Redis Cluster keeps
 * in different slots) each part is taken in order, and at the first refusal what was taken is given back and the
 * rest are asked without consuming. A store failure is answered by the failure policy, part by part.
 *
 * <p>The store's over-limit cache ({@link SharedStoreBuilder#overLimitCache(int)}), when it has one, lives here, one
 * for every limiter the store binds: a joint request whose every part the cache refuses is refused without a call, and
 * the refusals of the store's answers are kept.
 */
public final class SharedJoint {

    private final @Nullable AtomicJointDecider atomic;
    private final @Nullable OverLimitCache cache;
    private final JointDecider decider = new JointDecider() {
        @Override
        public JointDecision decideAll(List<Acquisition> parts) {
            return SharedJoint.this.decideAll(parts);
        }

        @Override
        public @Nullable JointDecision decideAllBy(List<Acquisition> parts, long deadlineNanos) {
            return SharedJoint.this.decideAllBy(parts, deadlineNanos);
        }

        @Override
        public @Nullable CompletableFuture<JointDecision> decideAllAsync(List<Acquisition> parts, long deadlineNanos) {
            return SharedJoint.this.decideAllAsync(parts, deadlineNanos);
        }

        @Override
        public String toString() {
            return SharedJoint.this.toString();
        }
    };

    /**
     * The joint decider of one store.
     *
     * @param atomic the store's one-call joint decider, or {@code null} if it has none
     */
    public SharedJoint(@Nullable AtomicJointDecider atomic) {
        this.atomic = atomic;
        this.cache = null;
    }

    /**
     * The joint decider of one store, with the over-limit cache {@code options} ask for
     * ({@link SharedStoreOptions#overLimitCache()}).
     *
     * @param atomic the store's one-call joint decider, or {@code null} if it has none
     */
    public SharedJoint(@Nullable AtomicJointDecider atomic, SharedStoreOptions options) {
        this.atomic = atomic;
        this.cache = options.overLimitCache() > 0 ? new OverLimitCache(options.overLimitCache()) : null;
    }

    /**
     * A table of the store's over-limit cache for a limiter with {@code config}; null when the store has no cache or
     * the limiter counts rejections (its refusals consume, so a refusal says nothing of the next).
     */
    OverLimitCache.@Nullable Table overLimitTable(LimiterConfig config) {
        OverLimitCache c = cache;
        return c == null || config.countRejected() ? null : c.table();
    }

    /** How many refusals the over-limit cache holds, expired or not; 0 without one. */
    int overLimitCacheSize() {
        OverLimitCache c = cache;
        return c == null ? 0 : c.size();
    }

    /** What the store's limiters name as the decider of their joint requests. */
    JointDecider decider() {
        return decider;
    }

    private JointDecision decideAll(List<Acquisition> parts) {
        SharedLimiter[] limiters = limiters(parts);
        Decision @Nullable [] cached = cached(parts, limiters);
        if (cached != null) {
            return told(parts, limiters, cached);
        }
        AtomicJointDecider oneCall = atomic;
        Decision @Nullable [] decisions = oneCall != null ? atomically(oneCall, parts, limiters, NO_DEADLINE) : null;
        if (decisions == null) {
            decisions = takeAndGiveBack(parts, limiters);
        }
        return told(parts, limiters, decisions);
    }

    /**
     * The over-limit cache's refusal of every part, which needs no call; else one call to the store within the
     * deadline, where it keeps deadlines and takes the keys together; else null.
     */
    private @Nullable JointDecision decideAllBy(List<Acquisition> parts, long deadlineNanos) {
        SharedLimiter[] limiters = limiters(parts);
        Decision @Nullable [] cached = cached(parts, limiters);
        if (cached != null) {
            return told(parts, limiters, cached);
        }
        AtomicJointDecider oneCall = atomic;
        if (oneCall == null || !oneCall.keepsDeadlines()) {
            return null;
        }
        Decision @Nullable [] decisions = atomically(oneCall, parts, limiters, deadlineNanos);
        return decisions == null ? null : told(parts, limiters, decisions);
    }

    private static SharedLimiter[] limiters(List<Acquisition> parts) {
        int n = parts.size();
        SharedLimiter[] limiters = new SharedLimiter[n];
        for (int i = 0; i < n; i++) {
            limiters[i] = (SharedLimiter) parts.get(i).limiter();
            limiters[i].checkOpen();
        }
        return limiters;
    }

    /** Tells each limiter's listeners of its part's decision, and answers them. */
    private static JointDecision told(List<Acquisition> parts, SharedLimiter[] limiters, Decision[] decisions) {
        for (int i = 0; i < decisions.length; i++) {
            Acquisition a = parts.get(i);
            limiters[i].notifyDecision(a.key(), a.cost(), decisions[i]);
        }
        return JointDecision.of(List.of(decisions));
    }

    /** No deadline but the store's own timeout: {@link AtomicJointDecider#decideAll(List, List, long[], long[])}. */
    private static final long NO_DEADLINE = Long.MIN_VALUE;

    /**
     * One call to the store, by {@code deadlineNanos} unless it is {@link #NO_DEADLINE}; null if it cannot take these
     * keys together.
     */
    private static Decision @Nullable [] atomically(
            AtomicJointDecider atomic, List<Acquisition> parts, SharedLimiter[] limiters, long deadlineNanos) {
        Call c = Call.of(atomic, parts, limiters);
        if (c == null) {
            return null;
        }
        List<StoreDecision> answers;
        try {
            answers = deadlineNanos == NO_DEADLINE
                    ? atomic.decideAll(c.deciders, c.keys, c.costs, c.now)
                    : atomic.decideAll(c.deciders, c.keys, c.costs, c.now, deadlineNanos);
        } catch (RuntimeException e) {
            return c.failed(e);
        }
        return c.answered(answers);
    }

    /**
     * {@link #decideAllBy} without waiting: the over-limit cache's refusal of every part, completed at once; else one
     * call to the store, completed when it answers or by the deadline; else null.
     */
    private @Nullable CompletableFuture<JointDecision> decideAllAsync(List<Acquisition> parts, long deadlineNanos) {
        SharedLimiter[] limiters = limiters(parts);
        Decision @Nullable [] cached = cached(parts, limiters);
        if (cached != null) {
            return CompletableFuture.completedFuture(told(parts, limiters, cached));
        }
        AtomicJointDecider oneCall = atomic;
        if (oneCall == null || !oneCall.keepsDeadlines()) {
            return null;
        }
        Call c = Call.of(oneCall, parts, limiters);
        if (c == null) {
            return null;
        }
        CompletableFuture<List<StoreDecision>> answer;
        try {
            answer = oneCall.decideAllAsync(c.deciders, c.keys, c.costs, c.now, deadlineNanos);
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        return answer.handle((answers, e) -> {
            Decision[] decisions;
            if (e != null) {
                Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                decisions = c.failed(
                        cause instanceof RuntimeException r
                                ? r
                                : new SluiceException("the store failed: " + cause, cause));
            } else {
                decisions = c.answered(answers);
            }
            return told(parts, limiters, decisions);
        });
    }

    /** One call to the store for a joint request: what it sends, and what the answer is made into. */
    private static final class Call {
        final SharedLimiter[] limiters;
        final List<AtomicDecider> deciders;
        final List<String> keys;
        final long[] costs;
        final long[] now;
        final long[] asked; // each limiter's clock, for the over-limit cache
        final long[] giveBacks;
        final long start = System.nanoTime();

        private Call(SharedLimiter[] limiters, int n) {
            this.limiters = limiters;
            this.deciders = new ArrayList<>(n);
            this.keys = new ArrayList<>(n);
            this.costs = new long[n];
            this.now = new long[n];
            this.asked = new long[n];
            this.giveBacks = new long[n];
        }

        /** The call for {@code parts}; null if the store cannot take their keys together. */
        static @Nullable Call of(AtomicJointDecider atomic, List<Acquisition> parts, SharedLimiter[] limiters) {
            int n = parts.size();
            Call c = new Call(limiters, n);
            for (int i = 0; i < n; i++) {
                SharedLimiter l = limiters[i];
                c.deciders.add(l.decider());
                c.keys.add(parts.get(i).key());
                c.costs[i] = parts.get(i).cost();
                OverLimitCache.Table t = l.overLimitTable();
                if (t != null) {
                    c.giveBacks[i] = t.giveBacks();
                    c.asked[i] = l.config().clockNanos();
                }
                c.now[i] = l.now();
            }
            return atomic.canDecideTogether(c.deciders, c.keys) ? c : null;
        }

        /** The failure policy's answer to each part; a closed store's exception is thrown. */
        Decision[] failed(RuntimeException e) {
            int n = costs.length;
            for (int i = 0; i < n; i++) {
                limiters[i].storeCall(start);
            }
            SharedLimiter.throwIfClosed(e);
            Decision[] decisions = new Decision[n];
            for (int i = 0; i < n; i++) {
                decisions[i] = limiters[i].fallback(keys.get(i), costs[i], e);
            }
            return decisions;
        }

        /** The store's answers as decisions, refusals kept in the over-limit cache; a malformed answer as failed. */
        Decision[] answered(@Nullable List<StoreDecision> answers) {
            int n = costs.length;
            if (answers == null || answers.size() != n) {
                return failed(new SluiceException(
                        "the store answered " + (answers == null ? "nothing" : answers.size() + " decisions")
                                + " to a joint request of " + n));
            }
            Decision[] decisions = new Decision[n];
            for (int i = 0; i < n; i++) {
                SharedLimiter l = limiters[i];
                l.storeCall(start);
                decisions[i] = l.toDecision(answers.get(i));
                OverLimitCache.Table t = l.overLimitTable();
                if (t != null && !decisions[i].allowed()) {
                    t.refused(keys.get(i), costs[i], decisions[i], asked[i], giveBacks[i]);
                }
            }
            return decisions;
        }
    }

    /** The refusal of every part from the over-limit cache, if it refuses each; else null (the store is asked). */
    private static Decision @Nullable [] cached(List<Acquisition> parts, SharedLimiter[] limiters) {
        int n = parts.size();
        Decision[] refusals = null;
        for (int i = 0; i < n; i++) {
            Decision d =
                    limiters[i].cachedRefusal(parts.get(i).key(), parts.get(i).cost());
            if (d == null) {
                return null;
            }
            if (n == 1) {
                return new Decision[] {d};
            }
            if (refusals == null) {
                refusals = new Decision[n];
            }
            refusals[i] = d;
        }
        return refusals;
    }

    private static Decision[] takeAndGiveBack(List<Acquisition> parts, SharedLimiter[] limiters) {
        int n = parts.size();
        Decision[] decisions = new Decision[n];
        SharedLimiter.SharedReservation[] taken = new SharedLimiter.SharedReservation[n];
        int refusedAt = -1;
        for (int i = 0; i < n && refusedAt < 0; i++) {
            Acquisition a = parts.get(i);
            taken[i] = limiters[i].new SharedReservation(a.key(), a.cost());
            try {
                decisions[i] = limiters[i].decide(a.key(), a.cost(), true, taken[i]);
            } catch (RuntimeException e) { // a store failure under FailurePolicy.THROW
                giveBack(parts, limiters, taken, i);
                throw e;
            }
            if (!decisions[i].allowed()) {
                refusedAt = i;
            }
        }
        if (refusedAt < 0) {
            return decisions;
        }
        giveBack(parts, limiters, taken, refusedAt);
        for (int i = 0; i < n; i++) {
            if (i == refusedAt) {
                continue;
            }
            Acquisition a = parts.get(i);
            Decision d = limiters[i].decide(a.key(), a.cost(), false, null);
            if (i > refusedAt && !d.allowed() && a.limiter().config().countRejected()) {
                SharedLimiter.SharedReservation counted = limiters[i].new SharedReservation(a.key(), a.cost());
                Decision c = limiters[i].decide(a.key(), a.cost(), true, counted); // refused here too: counted
                if (c.allowed()) {
                    if (counted.holds) { // room came back since the peek: the request is refused all the same
                        limiters[i].giveBack(a.key(), a.cost(), counted.place);
                    }
                } else {
                    d = c;
                }
            }
            decisions[i] = d;
        }
        return decisions;
    }

    /** Gives back what the first {@code count} parts hold. */
    private static void giveBack(
            List<Acquisition> parts, SharedLimiter[] limiters, SharedLimiter.SharedReservation[] taken, int count) {
        for (int i = count - 1; i >= 0; i--) {
            if (taken[i].holds) {
                limiters[i].giveBack(parts.get(i).key(), parts.get(i).cost(), taken[i].place);
            }
        }
    }

    @Override
    public String toString() {
        return "SharedJoint[" + (atomic != null ? atomic : "take and give back") + "]";
    }
}
