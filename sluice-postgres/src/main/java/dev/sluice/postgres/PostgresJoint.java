package dev.sluice.postgres;

import dev.sluice.SluiceException;
import dev.sluice.spi.AtomicDecider;
import dev.sluice.spi.AtomicJointDecider;
import dev.sluice.spi.StoreDecision;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The joint requests of one {@link PostgresStore} ({@link dev.sluice.RateLimiter#tryAcquireAll}): each is one
 * request of the store's next batch ({@link PostgresBatches}), one call of {@code <table>_decide_batch} over arrays
 * with an element per part. Thread-safe.
 */
final class PostgresJoint implements AtomicJointDecider {

    /*
     * How a joint request runs, and why.
     *
     * The batch function (common.sql) locks the rows of every request of its batch FOR NO KEY UPDATE in id order,
     * inserting a row with no state for a key that has none; for a joint request it runs each part's algorithm twice
     * at most, through the same step functions as a
     * single decision: once without taking, and, if every part is allowed, once more taking its cost (else only for
     * the refusing parts that count rejections), on the rows as the requests before it in the batch left them. Rows
     * are written, rows it created and did not write are deleted, and the call's transaction commits: no other call
     * sees some parts taken and not others.
     *
     * Deadlocks: two batches (of two instances) over the keys a and b, sent as (a, b) and (b, a), both lock the lower
     * id first, so one waits for the other's commit and neither holds a lock the other wants. A peek locks nothing, a
     * give-back one row only.
     *
     * Example: 10/s and 100/min on key "k", both token buckets (shapes tb:1000000000 and tb:60000000000, two rows).
     * With 10 taken in the first second the per-second row refuses the 11th request; the per-minute row answers
     * "allowed, 90 left" and keeps its 90: the refused request took nothing from it.
     *
     * Two parts on one row (two limiters of one shape, on one key) are not decided together: canDecideTogether says
     * no, and SharedJoint takes and gives back, part after part, as on any store.
     */

    private final PostgresStore store;

    PostgresJoint(PostgresStore store) {
        this.store = store;
    }

    /** Whether every part is this store's and on a row of its own. */
    @Override
    public boolean canDecideTogether(List<AtomicDecider> deciders, List<String> keys) {
        Set<ByteBuffer> rows = new HashSet<>();
        for (int i = 0; i < deciders.size(); i++) {
            if (!(deciders.get(i) instanceof PostgresDecider)
                    || ((PostgresDecider) deciders.get(i)).store() != store
                    || !rows.add(ByteBuffer.wrap(((PostgresDecider) deciders.get(i)).id(keys.get(i))))) {
                return false;
            }
        }
        return true;
    }

    /**
     * The request goes in the next batch of the store, by the store's timeout. It does not {@linkplain #keepsDeadlines()
     * keep a shorter deadline}: borrowing a connection from the DataSource cannot be bounded by it, so a caller with a
     * deadline hands the call to a thread of its own ({@link dev.sluice.RateLimiter#tryAcquireAllBy}).
     */
    @Override
    public List<StoreDecision> decideAll(
            List<AtomicDecider> deciders, List<String> keys, long[] costs, long[] nowNanos) {
        long deadlineNanos =
                System.nanoTime() + Calls.saturatedNanos(store.options().timeout());
        int n = deciders.size();
        List<PostgresBatches.Part> parts = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            parts.add(new PostgresBatches.Part((PostgresDecider) deciders.get(i), keys.get(i), costs[i], nowNanos[i]));
        }
        try {
            // sent as a joint request, or as the single request it answers as
            boolean joint = !AtomicJointDecider.answersAsSingle(
                    n, parts.get(0).decider().countRejected());
            return store.batches().decide(parts, joint, deadlineNanos);
        } catch (SluiceException e) {
            throw parts.get(0)
                    .decider()
                    .failed(
                            "deciding a joint request of " + n + " parts (key '" + Keys.abbreviate(keys.get(0)) + "'"
                                    + (n > 1 ? ", ..." : "") + ")",
                            e);
        }
    }

    @Override
    public String toString() {
        return "PostgresJoint[" + store.table() + "]";
    }
}
