package dev.sluice.lease;

import dev.sluice.Acquisition;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.internal.JointDecider;
import dev.sluice.internal.JointLocks;
import dev.sluice.internal.Latches;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;

/**
 * The joint decider of one {@link LeasedStore}: every limiter the store binds returns it, so a joint request over
 * them is one step over the slices this instance holds, with no I/O while a lock is held.
 *
 * <pre>
 * look up every part's lease; take the lock of each, in the order (serial, key hash, key) no cycle between requests
 * roll each to its limiter's now, and see what each part can do (LeasedLimiter.step):
 *   a part must be refused (no room as last read, starved, claims spent):  refused, nothing taken
 *   else, a part's slice is short and the store fails:                     let go; take and give back instead
 *   else, every slice covers its part:                                     every part taken: allowed
 *   else:  let go of the locks; claim for the first short part (or wait for the claim on its key), start over
 * </pre>
 *
 * No other request on this instance sees some parts taken and not the others: a joint request refused takes nothing
 * from any slice (but for a refusing part whose limit counts rejections, which counts it, as alone), and one admitted
 * takes every part under all the locks. Slices claimed for a request that is then refused stay with this instance for
 * the next requests, or go back with the round, as any slice does. Each part takes part in at most
 * {@link LeasedLimiter#CLAIMS_PER_REQUEST} claims, its own or others', before it refuses. While the store fails,
 * a request whose slices do not cover it is decided by {@link JointDecider#takeAndGiveBack()}: each part gets the
 * failure policy's answer as it would alone.
 */
final class LeaseJoint implements JointDecider {

    private final LeasedStore store;

    LeaseJoint(LeasedStore store) {
        this.store = store;
    }

    /** What one pass under the locks found. */
    private static final class Pass {
        /** The leases were all live, and a decision was taken. */
        boolean decided;
        /** The store fails and a slice is short. */
        boolean failing;
        /** The part to claim for or wait on, or -1. */
        int part = -1;
        /** The claim under way to wait for; null to claim. */
        @Nullable
        CountDownLatch waitFor;
        /** The latch of this request's own claim, set as the lease's busy mark. */
        @Nullable
        CountDownLatch claiming;
    }

    /**
     * Decides {@code parts} as {@link #decideAll} does wherever that needs no call to the store: every part taken
     * from the slices held, the request refused by a part with no claim to make, or (one part) the failure policy's
     * answer while the store fails. A request waiting for another's claim on a part's key waits on the calling thread,
     * until {@code deadlineNanos} at most. A request that needs a claim, or whose wait outlasts the deadline, takes
     * nothing (its demand counted is taken back) and answers null.
     */
    @Override
    public @Nullable JointDecision decideAllBy(List<Acquisition> parts, long deadlineNanos) {
        if (parts.size() == 1) {
            Acquisition a = parts.get(0);
            Decision d = limiter(a).decideBy(a.key(), a.cost(), deadlineNanos);
            return d == null ? null : JointLocks.decided(parts, new Decision[] {d});
        }
        return decide(parts, false, deadlineNanos);
    }

    @Override
    public JointDecision decideAll(List<Acquisition> parts) {
        JointDecision d = decide(parts, true, 0);
        if (d == null) {
            throw new IllegalStateException("undecided"); // unreachable: a request that may call the store is decided
        }
        return d;
    }

    /**
     * The loop of {@link #decideAll} ({@code mayCall}: claims made on this thread, waits unbounded but for the
     * store's own timeout, a failing store answered part by part) and of {@link #decideAllBy} (no call: null where a
     * claim is needed or the store fails, waits until {@code deadlineNanos} at most).
     */
    private @Nullable JointDecision decide(List<Acquisition> parts, boolean mayCall, long deadlineNanos) {
        int n = parts.size();
        int[] order = JointLocks.openInOrder(parts);
        Decision[] decisions = new Decision[n];
        Lease[] held = new Lease[n];
        long[] now = new long[n];
        int[] claims = new int[n];
        boolean[] counted = new boolean[n]; // each part's cost counted as demand on its lease
        while (true) {
            for (int i = 0; i < n; i++) {
                Acquisition a = parts.get(i);
                held[i] = limiter(a).held(a.key());
                now[i] = limiter(a).now();
            }
            Pass pass = new Pass();
            if (!JointLocks.underAll(
                    held, order, () -> decideHeld(parts, held, now, claims, counted, decisions, pass, mayCall))) {
                continue; // a lease was retired (dropped as idle) before its lock was taken: look the keys up again
            }
            if (pass.decided) {
                return JointLocks.decided(parts, decisions);
            }
            if (!mayCall) {
                if (pass.waitFor == null) {
                    return null; // a claim to make, or the store fails: decideAll does it
                }
                claims[pass.part]++;
                if (!Latches.awaitUntil(pass.waitFor, deadlineNanos)) {
                    return null;
                }
                continue;
            }
            if (pass.failing) {
                return takeAndGiveBack(parts, held, counted);
            }
            int j = pass.part;
            claims[j]++;
            if (pass.waitFor != null) {
                store.await(pass.waitFor);
                continue;
            }
            CountDownLatch claiming = pass.claiming;
            if (claiming == null) {
                throw new IllegalStateException("neither waiting nor claiming"); // unreachable: decideHeld sets one
            }
            if (limiter(parts.get(j)).call(held[j], claiming, parts.get(j).cost()) != null) {
                return takeAndGiveBack(parts, held, counted); // the store failed: the failure policy answers
            }
        }
    }

    /**
     * Decides {@code parts} by {@link JointDecider#takeAndGiveBack()}, after taking back the demand this request
     * counted: each part counts it again there, as a request alone.
     */
    private static JointDecision takeAndGiveBack(List<Acquisition> parts, Lease[] held, boolean[] counted) {
        for (int i = 0; i < parts.size(); i++) {
            if (counted[i]) {
                Lease ls = held[i];
                ls.lock();
                try {
                    limiter(parts.get(i)).demand(ls, -parts.get(i).cost());
                } finally {
                    ls.unlock();
                }
            }
        }
        return JointDecider.takeAndGiveBack().decideAll(parts);
    }

    private static void decideHeld(
            List<Acquisition> parts,
            Lease[] held,
            long[] now,
            int[] claims,
            boolean[] counted,
            Decision[] decisions,
            Pass pass,
            boolean mayClaim) {
        int n = parts.size();
        JointLocks.checkOpen(parts); // under the locks: a limiter closed since gives nothing back after this
        LeasedLimiter.Step[] steps = new LeasedLimiter.Step[n];
        boolean refused = false;
        boolean covered = true;
        for (int i = 0; i < n; i++) {
            Acquisition a = parts.get(i);
            if (!counted[i]) {
                limiter(a).demand(held[i], a.cost()); // before any claim, which is sized by it
                counted[i] = true;
            }
            now[i] = limiter(a).timeIn(held[i], now[i]); // read before the locks: see LeasedLimiter.timeIn
            steps[i] = limiter(a).step(held[i], now[i], a.cost(), claims[i]);
            refused |= steps[i] == LeasedLimiter.Step.REFUSE;
            covered &= steps[i] == LeasedLimiter.Step.COVERED;
            pass.failing |= steps[i] == LeasedLimiter.Step.FAILING;
        }
        if (refused) {
            for (int i = 0; i < n; i++) {
                Acquisition a = parts.get(i);
                decisions[i] = limiter(a).refuseJoint(held[i], now[i], a.cost(), steps[i] == LeasedLimiter.Step.REFUSE);
            }
            pass.decided = true;
            pass.failing = false;
            return;
        }
        if (covered) {
            for (int i = 0; i < n; i++) {
                decisions[i] = limiter(parts.get(i))
                        .takePart(held[i], now[i], parts.get(i).cost());
            }
            pass.decided = true;
            return;
        }
        if (!mayClaim) { // undecided here: the request is decided again, counting its demand again
            for (int i = 0; i < n; i++) {
                limiter(parts.get(i)).demand(held[i], -parts.get(i).cost());
                counted[i] = false;
            }
        }
        if (pass.failing) {
            return;
        }
        for (int i = 0; i < n; i++) {
            if (steps[i] == LeasedLimiter.Step.WAIT) {
                pass.part = i;
                pass.waitFor = held[i].busy;
                return;
            }
            if (steps[i] == LeasedLimiter.Step.CLAIM) {
                pass.part = i;
                if (mayClaim) {
                    pass.claiming = held[i].busy = new CountDownLatch(1);
                }
                return;
            }
        }
    }

    private static LeasedLimiter limiter(Acquisition a) {
        return (LeasedLimiter) a.limiter();
    }

    @Override
    public String toString() {
        return "LeaseJoint[" + store + "]";
    }
}
