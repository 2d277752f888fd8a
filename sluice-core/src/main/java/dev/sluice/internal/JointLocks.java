package dev.sluice.internal;

import dev.sluice.Acquisition;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.algorithm.AlgorithmState;
import java.time.Clock;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * How a joint request ({@link dev.sluice.RateLimiter#tryAcquireAll}) over keys held in {@link KeyTable}s takes their
 * locks: all of them, one nested in the other, in one order (the limiter's serial, then the key's hash, then the
 * key), so two joint requests naming the same keys in any order never wait on each other in a cycle. The synchronized
 * and leased joint deciders share it; the in-memory one shares the order ({@link #order}) and takes its locks itself,
 * since a key new to a limiter at its bound on keys has to make room first. The in-memory and synchronized ones then
 * decide every part in one step ({@link #allOrNothing}).
 */
public final class JointLocks {

    private JointLocks() {}

    /**
     * The indices of {@code parts} in the order their locks are taken: by {@code serial} of the part (its limiter's
     * place), then by the key's hash, then by key. Any one total order keeps two requests from waiting in a cycle; the
     * hash comes first because keys of one limiter often share a long prefix (a policy's counter keys all start with
     * their domain), which a comparison of the keys would walk, while a string keeps its hash (and the key table
     * reads it anyway). An insertion sort: a joint request has a few parts, and this runs on every one of them.
     */
    public static int[] order(List<Acquisition> parts, ToLongFunction<Acquisition> serial) {
        int n = parts.size();
        int[] order = new int[n];
        long[] serials = new long[n];
        for (int i = 0; i < n; i++) {
            serials[i] = serial.applyAsLong(parts.get(i));
            int j = i;
            for (; j > 0 && before(parts, serials, i, order[j - 1]); j--) {
                order[j] = order[j - 1];
            }
            order[j] = i;
        }
        return order;
    }

    /**
     * Whether part {@code a} takes its lock before part {@code b}: a lower serial; or the same and a lower hash of its
     * key; or both the same and a lower key.
     */
    private static boolean before(List<Acquisition> parts, long[] serials, int a, int b) {
        if (serials[a] != serials[b]) {
            return serials[a] < serials[b];
        }
        String ka = parts.get(a).key();
        String kb = parts.get(b).key();
        int ha = ka.hashCode();
        int hb = kb.hashCode();
        return ha != hb ? ha < hb : ka.compareTo(kb) < 0;
    }

    /**
     * For a joint request over limiters of synchronized or leased mode ({@link LocalLimiter}s): checks that every
     * part's limiter is open, and answers the order in which their keys' locks are taken ({@link #order}).
     *
     * @throws IllegalStateException if a part's limiter is closed
     */
    public static int[] openInOrder(List<Acquisition> parts) {
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
        return JointDecision.of(List.of(decisions));
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
    public static boolean underAll(KeyTable.Entry[] held, int[] order, Runnable decide) {
        return underAll(held, order, decide, 0);
    }

    private static boolean underAll(KeyTable.Entry[] held, int[] order, Runnable decide, int depth) {
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
     * decision on a key only grows: see the synchronized limiter's {@code decideHeld}), once for the parts whose
     * limiters share a clock; every part is decided without consuming, which is what each limit answers alone; if all
     * pass, every part is decided again, consuming (the same answers, now taken), else only the parts refused by a
     * limit that counts rejections consume, as alone. The answers go to {@code decisions}: those of the second step if
     * all passed, else those of the first.
     */
    public static void allOrNothing(List<Acquisition> parts, AlgorithmState[] held, long[] now, Decision[] decisions) {
        int n = parts.size();
        for (int i = 0; i < n; i++) {
            now[i] = now(parts, now, i);
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

    /**
     * The time of part {@code i}: its limiter's clock read now, or, when an earlier part's limiter has the same clock,
     * that part's reading (taken under the same locks), so that a request reads each clock once.
     */
    @SuppressWarnings("ReferenceEquality") // the same clock object reads the same time; an equal one need not
    private static long now(List<Acquisition> parts, long[] now, int i) {
        Clock clock = parts.get(i).limiter().config().clock();
        for (int j = 0; j < i; j++) {
            if (parts.get(j).limiter().config().clock() == clock) {
                return now[j];
            }
        }
        return decider(parts.get(i)).now();
    }

    private static HeldDecider decider(Acquisition a) {
        return (HeldDecider) a.limiter();
    }
}
