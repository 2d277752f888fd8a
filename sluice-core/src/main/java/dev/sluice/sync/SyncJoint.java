package dev.sluice.sync;

import dev.sluice.Acquisition;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.algorithm.AlgorithmState;
import dev.sluice.internal.JointDecider;
import dev.sluice.internal.JointLocks;
import java.util.List;

/**
 * The joint decider of one {@link SynchronizedStore}: every limiter the store binds returns it, so a joint request over
 * them is one step on this instance's {@code g + i}, with no I/O once every key is held.
 *
 * <pre>
 * take up every part's key not held yet (reads its record), one by one       no lock held during the I/O
 * take the lock of every part's key, in the order (serial, key hash, key)    two joint requests never wait in a cycle
 * read each limiter's time; decide every part on g + i without consuming      what each limit answers alone
 * all allowed:  decide every part again, consuming (added to i)              the same answers, now taken
 * else:         consume only where a refusing limit counts rejections
 * let go of the locks; tell the listeners
 * </pre>
 *
 * Keys this instance does not hold yet are taken up first, one after the other, before any lock is taken: each
 * has its record read as a single request's key would ({@link SynchronizedLimiter#held}), so no lock is held
 * during that I/O and a joint request over keys new here costs one round trip per such key, once.
 *
 * <p>No other request on this instance sees some parts taken and not the others, and the flusher copies a key's
 * {@code i} under the same lock, so it writes all of a request or none of it. Across instances the parts reach the
 * store with their keys' flushes, as any count does. A key dropped as idle between its lookup and its lock is looked
 * up (and its record read) again.
 */
final class SyncJoint implements JointDecider {

    private final SynchronizedStore store;

    SyncJoint(SynchronizedStore store) {
        this.store = store;
    }

    @Override
    public JointDecision decideAll(List<Acquisition> parts) {
        int n = parts.size();
        int[] order = JointLocks.openInOrder(parts);
        Decision[] decisions = new Decision[n];
        long[] now = new long[n];
        AlgorithmState[] held = new AlgorithmState[n];
        do {
            for (int i = 0; i < n; i++) {
                Acquisition a = parts.get(i);
                held[i] = limiter(a).held(a.key()); // reads the record of a key not held yet, before any lock
            }
        } while (!JointLocks.underAll(held, order, () -> decideHeld(parts, held, now, decisions)));
        return JointLocks.decided(parts, decisions);
    }

    private static void decideHeld(List<Acquisition> parts, AlgorithmState[] held, long[] now, Decision[] decisions) {
        JointLocks.checkOpen(parts); // under the locks: a limiter closed since cannot take counts
        JointLocks.allOrNothing(parts, held, now, decisions);
    }

    private static SynchronizedLimiter limiter(Acquisition a) {
        return (SynchronizedLimiter) a.limiter();
    }

    @Override
    public String toString() {
        return "SyncJoint[" + store + "]";
    }
}
