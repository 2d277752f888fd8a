package dev.sluice.memory;

import dev.sluice.Acquisition;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.algorithm.AlgorithmState;
import dev.sluice.internal.JointDecider;
import dev.sluice.internal.JointLocks;
import dev.sluice.spi.Listeners;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The joint decider of every in-memory limiter, whatever its store: one atomic step over all the keys of a request.
 *
 * <pre>
 * lock the state of every part, in the order (serial, key hash, key)  no two joint requests wait on each other
 * decide every part without consuming, each at its limiter's now      what each limit answers alone
 * all allowed:  decide every part again, consuming                    the same answers, now taken
 * else:         consume only where a refusing limit counts rejections
 * unlock every state
 * </pre>
 *
 * No other request sees some parts taken and not others: they all wait on the locks. A part whose key is new to a
 * limiter at its bound on keys makes room with no lock held (a pass over the table locks every state of that limiter,
 * ours too) and the request starts again; if there is no room, the request is refused, each part answering as a
 * {@code peek} would. A request that finds no slot again no further than before it made room (the room it made was the
 * slots of its own new keys, idle once it let go of them: it has more new keys than the bound has room for) is
 * refused at once, instead of making room and starting again for ever.
 */
final class MemoryJoint implements JointDecider {

    static final MemoryJoint INSTANCE = new MemoryJoint();

    private MemoryJoint() {}

    /** From memory: always, at once. */
    @Override
    public JointDecision decideAllBy(List<Acquisition> parts, long deadlineNanos) {
        return decideAll(parts);
    }

    @Override
    public JointDecision decideAll(List<Acquisition> parts) {
        for (Acquisition a : parts) {
            memory(a).checkOpen();
        }
        int n = parts.size();
        int[] order = JointLocks.order(parts, a -> memory(a).serial);

        AlgorithmState[] held = new AlgorithmState[n];
        int failedAt = -1; // where the last turn found no slot; -1: no turn has
        while (true) {
            @Nullable Decision noRoom = null;
            int locked = 0;
            for (; locked < n; locked++) {
                int i = order[locked];
                Acquisition a = parts.get(i);
                AlgorithmState s = memory(a).lockForJoint(a.key());
                if (s == null) {
                    unlock(held, order, locked);
                    if (locked <= failedAt) {
                        // No further than the last turn, after making room: the room made was the slots of this
                        // request's own new keys, idle since it let go of them. Refused, as a new key with no room.
                        return refusedAtBound(parts);
                    }
                    failedAt = locked;
                    noRoom = memory(a).roomFor(a.key());
                    break;
                }
                held[i] = s;
            }
            if (locked == n) {
                return decideHeld(parts, held);
            }
            if (noRoom != null) {
                JointDecision peeked = peekAll(parts);
                if (!peeked.allowed()) {
                    for (int i = 0; i < n; i++) {
                        Acquisition a = parts.get(i);
                        Listeners.decision(memory(a).listener(), a.limiter(), a.key(), a.cost(), peeked.decision(i));
                    }
                    return peeked;
                }
                // room came free since: start again
            }
        }
    }

    /** Decides with every state held, then lets go of them. */
    private static JointDecision decideHeld(List<Acquisition> parts, AlgorithmState[] held) {
        int n = parts.size();
        Decision[] decisions = new Decision[n];
        long[] now = new long[n];
        try {
            JointLocks.allOrNothing(parts, held, now, decisions);
        } finally {
            for (int i = 0; i < n; i++) {
                if (held[i].unlockSampled()) {
                    memory(parts.get(i)).sampledJoint();
                }
            }
        }
        for (int i = 0; i < n; i++) {
            Acquisition a = parts.get(i);
            InMemoryRateLimiter limiter = memory(a);
            limiter.afterJoint(now[i]);
            Listeners.decision(limiter.listener(), limiter, a.key(), a.cost(), decisions[i]);
        }
        return JointDecision.of(List.of(decisions));
    }

    /**
     * A request with more new keys than a bound has room for: each part held answers as it would alone, consuming
     * nothing, and each new key as a new key with no room does.
     */
    private static JointDecision refusedAtBound(List<Acquisition> parts) {
        Decision[] decisions = new Decision[parts.size()];
        for (int i = 0; i < decisions.length; i++) {
            Acquisition a = parts.get(i);
            decisions[i] = memory(a).refusedAtBound(a.key(), a.cost());
            Listeners.decision(memory(a).listener(), a.limiter(), a.key(), a.cost(), decisions[i]);
        }
        return JointDecision.of(List.of(decisions));
    }

    /** What each part answers alone, consuming nothing: a request refused because a key has no room. */
    private static JointDecision peekAll(List<Acquisition> parts) {
        Decision[] decisions = new Decision[parts.size()];
        for (int i = 0; i < decisions.length; i++) {
            Acquisition a = parts.get(i);
            decisions[i] = a.limiter().peek(a.key(), a.cost());
        }
        return JointDecision.of(List.of(decisions));
    }

    private static void unlock(AlgorithmState[] held, int[] order, int count) {
        for (int k = 0; k < count; k++) {
            held[order[k]].unlock(); // its slot is filled again before the next decision
        }
    }

    private static InMemoryRateLimiter memory(Acquisition a) {
        return (InMemoryRateLimiter) a.limiter();
    }

    @Override
    public String toString() {
        return "MemoryJoint";
    }
}
