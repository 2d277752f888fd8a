package dev.sluice.postgres;

import dev.sluice.SluiceException;
import dev.sluice.spi.AtomicDecider;
import dev.sluice.spi.AtomicJointDecider;
import dev.sluice.spi.StoreDecision;
import java.nio.ByteBuffer;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The joint requests of one {@link PostgresStore} ({@link dev.sluice.RateLimiter#tryAcquireAll}): each is one
 * statement, one call of {@code <table>_decide_all} over arrays with an element per part, on a connection borrowed
 * for the call. Thread-safe.
 */
final class PostgresJoint implements AtomicJointDecider {

    /*
     * How a joint request runs, and why.
     *
     * The function (common.sql) locks every part's row FOR NO KEY UPDATE in id order, inserting a row with no state
     * for a key that has none, then runs each part's algorithm twice at most, through the same step functions as a
     * single decision: once without taking, and, if every part is allowed, once more taking its cost (else only for
     * the refusing parts that count rejections). Rows are written, rows it created and did not write are deleted, and
     * the call's transaction commits: no other call sees some parts taken and not others.
     *
     * Deadlocks: two joint calls over the keys a and b, sent as (a, b) and (b, a), both lock the lower id first, so
     * one waits for the other's commit and neither holds a lock the other wants. A single decision locks one row only.
     *
     * Example: 10/s and 100/min on key "k", both token buckets (shapes tb:1000000000 and tb:60000000000, two rows).
     * With 10 taken in the first second the per-second row refuses the 11th request; the per-minute row answers
     * "allowed, 90 left" and keeps its 90: the refused request took nothing from it.
     *
     * Two parts on one row (two limiters of one shape, on one key) are not decided together: canDecideTogether says
     * no, and SharedJoint takes and gives back, part after part, as on any store.
     */

    private final PostgresStore store;
    private final String sql;

    PostgresJoint(PostgresStore store) {
        this.store = store;
        this.sql = store.schema().decideAllSql();
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

    @Override
    public List<StoreDecision> decideAll(
            List<AtomicDecider> deciders, List<String> keys, long[] costs, long[] nowNanos) {
        int n = deciders.size();
        String[] algorithms = new String[n];
        byte[][] ids = new byte[n][];
        String[] shapes = new String[n];
        String[] readable = new String[n];
        long[] limits = new long[n];
        long[] windows = new long[n];
        long[] subWindows = new long[n];
        boolean[] stricts = new boolean[n];
        boolean[] counted = new boolean[n];
        @Nullable Long[] now = new Long[n]; // null: the store's own time
        for (int i = 0; i < n; i++) {
            PostgresDecider d = (PostgresDecider) deciders.get(i);
            algorithms[i] = d.algorithm();
            ids[i] = d.id(keys.get(i));
            shapes[i] = d.shape();
            readable[i] = Keys.readable(keys.get(i));
            limits[i] = d.limit();
            windows[i] = d.window();
            subWindows[i] = d.subWindow();
            stricts[i] = d.strict();
            counted[i] = d.countRejected();
            now[i] = nowNanos[i] == AtomicDecider.STORE_TIME ? null : nowNanos[i];
        }
        try {
            return store.call(c -> {
                try (PreparedStatement s = c.prepareStatement(sql)) {
                    s.setArray(1, c.createArrayOf("text", algorithms));
                    s.setObject(2, ids);
                    s.setString(3, store.options().namespace());
                    s.setArray(4, c.createArrayOf("text", shapes));
                    s.setArray(5, c.createArrayOf("text", readable));
                    s.setObject(6, limits);
                    s.setObject(7, windows);
                    s.setObject(8, subWindows);
                    s.setObject(9, stricts);
                    s.setObject(10, counted);
                    s.setObject(11, costs);
                    s.setArray(12, c.createArrayOf("bigint", now));
                    s.setInt(13, Calls.lockTimeoutMillis(store.options().timeout()));
                    s.setBoolean(14, !store.synchronousCommit());
                    List<StoreDecision> out = new ArrayList<>(n);
                    try (ResultSet rs = s.executeQuery()) {
                        while (rs.next()) {
                            out.add(new StoreDecision(
                                    rs.getBoolean(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)));
                        }
                    }
                    if (out.size() != n) {
                        throw new SQLException(
                                "the joint decision function returned " + out.size() + " rows for " + n + " parts");
                    }
                    return out;
                }
            });
        } catch (Calls.PoolClosedException e) {
            throw e;
        } catch (SQLException | RuntimeException e) {
            throw new SluiceException(
                    "PostgreSQL failed deciding a joint request of " + n + " parts (key '"
                            + Keys.abbreviate(keys.get(0)) + "'" + (n > 1 ? ", ..." : "") + ") in " + store.table()
                            + ": "
                            + e,
                    e);
        }
    }

    @Override
    public String toString() {
        return "PostgresJoint[" + store.table() + "]";
    }
}
