package dev.sluice.internal;

import dev.sluice.Acquisition;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.algorithm.AlgorithmState;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * How a joint request ({@link dev.sluice.RateLimiter#tryAcquireAll}) over keys held in {@link KeyTable}s takes their
 * locks: all of them, one nested in the other, in one order (the limiter's serial, then the key), so two joint
 * requests naming the same keys in any order never wait on each other in a cycle. The synchronized and leased joint
 * deciders share it; the in-memory one shares the order ({@link #order}) and takes its locks itself, since a key
 * new to a limiter at its bound on keys has to make room first. The in-memory and synchronized ones then decide every
 * part in one step ({@link #allOrNothing}).
 */
public final class JointLocks {

    private JointLocks() {}

    /**
     * The indices of {@code parts} in the order their locks are taken: by {@code serial} of the part (its limiter's
     * place), then by key.
     */
    public static Integer[] order(List<Acquisition> parts, ToLongFunction<Acquisition> serial) {
        Integer[] order = new Integer[parts.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        Comparator<Acquisition> byLimiterThenKey =
                Comparator.comparingLong(serial).thenComparing(Acquisition::key);
        Arrays.sort(order, Comparator.comparing(parts::get, byLimiterThenKey));
        return order;
    }

    /**
     * For a joint request over limiters of synchronized or leased mode ({@link LocalLimiter}s): checks that every
     * part's limiter is open, and answers the order in which their keys' locks are taken ({@link #order}).
     *
     * @throws IllegalStateException if a part's limiter is closed
     */
    public static Integer[] openInOrder(List<Acquisition> parts) {
        checkOpen(parts);
        return order(parts, a -> local(a).serial);
    }

    /**
     * Checks that every part's limiter ({@link LocalLimiter}) is open.
     *
     * @throws IllegalStateException if one is closed
     */
    public static void checkOpen(List<Acquisition> parts) {
        for (Acquisition a : parts) {
            local(a).checkOpen();
        }
    }

    /** Tells each part's limiter ({@link LocalLimiter}) and its store's listener of its decision; the joint answer. */
    public static JointDecision decided(List<Acquisition> parts, Decision[] decisions) {
        for (int i = 0; i < parts.size(); i++) {
            Acquisition a = parts.get(i);
            local(a).notifyDecision(a.key(), a.cost(), decisions[i]);
        }
        return JointDecision.of(Arrays.asList(decisions));
    }

    private static LocalLimiter<?> local(Acquisition a) {
        return (LocalLimiter<?>) a.limiter();
    }

    /**
     * Takes the lock of every entry of {@code held}, in {@code order}, one nested in the other, and runs
     * {@code decide} with all of them held.
     *
     * @return false, having run nothing, if an entry was retired (dropped as idle) before its lock was taken: the
     *     caller looks its keys up again
     */
    public static boolean underAll(KeyTable.Entry[] held, Integer[] order, Runnable decide) {
        return underAll(held, order, decide, 0);
    }

    private static boolean underAll(KeyTable.Entry[] held, Integer[] order, Runnable decide, int depth) {
        if (depth == order.length) {
            decide.run();
            return true;
        }
        KeyTable.Entry e = held[order[depth]];
        e.lock(); // not reentrant, and need not be: a joint request names a key of a limiter once (tryAcquireAll)
        try {
            return !e.retired() && underAll(held, order, decide, depth + 1);
        } finally {
            e.unlock();
        }
    }

    /**
     * Decides every part of a joint request over {@link HeldDecider}s, with {@code held[i]}, the state of part
     * {@code i}, locked by the caller: each part's time is read under the locks into {@code now} (so the time of every
     * decision on a key only grows: see the synchronized limiter's {@code decideHeld}); every part is decided without
     * consuming, which is what each limit answers alone; if all pass, every part is decided again, consuming (the same
     * answers, now taken), else only the parts refused by a limit that counts rejections consume, as alone. The
     * answers go to {@code decisions}: those of the second step if all passed, else those of the first.
     */
    public static void allOrNothing(List<Acquisition> parts, AlgorithmState[] held, long[] now, Decision[] decisions) {
        int n = parts.size();
        for (int i = 0; i < n; i++) {
            now[i] = decider(parts.get(i)).now();
        }
        boolean allowed = true;
        for (int i = 0; i < n; i++) {
            Acquisition a = parts.get(i);
            decisions[i] = decider(a).decideHeld(held[i], now[i], a.cost(), false);
            allowed &= decisions[i].allowed();
        }
        for (int i = 0; i < n; i++) {
            Acquisition a = parts.get(i);
            if (allowed || (!decisions[i].allowed() && a.limiter().config().countRejected())) {
                Decision taken = decider(a).decideHeld(held[i], now[i], a.cost(), true);
                if (allowed) {
                    decisions[i] = taken;
                }
            }
        }
    }

    private static HeldDecider decider(Acquisition a) {
        return (HeldDecider) a.limiter();
    }
}
