package dev.sluice.postgres;

import dev.sluice.RateLimitListener;
import dev.sluice.SluiceException;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import dev.sluice.spi.Durations;
import dev.sluice.spi.Listeners;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * The counter store of synchronized mode on PostgreSQL: one row per {@link CounterKey} in one table, each call one
 * statement on a connection borrowed from the DataSource for that call. Built by
 * {@link PostgresStore#counterStoreBuilder}. Thread-safe.
 */
final class PostgresCounterStore implements CounterStore {

    /*
     * How a batch is written, and why.
     *
     * compareAndSet is one statement, "SELECT <table>_cas(ids, shapes, keys, expected, versions, ...)", whose
     * arguments are parallel arrays, one element per write. The function (sluice-postgres-counters.sql) runs four
     * set-based statements in the call's transaction: it locks the batch's existing rows in id order; inserts the
     * records of the writes that expect none (ON CONFLICT DO NOTHING), in id order; updates the rows whose version is
     * the one expected (already locked, so this waits for nothing); and deletes rows near the new ones that expired
     * over a minute ago. It answers the positions of the writes applied. At READ COMMITTED a row lock granted after
     * a wait returns the row's newest version, so two instances that read the same version and write at once never
     * both win: the second finds the first's version.
     *
     * Example: instances A and B both read key k at version 7 (count 4). A writes count 5 as version 91, B count 6 as
     * version 33, at once. A's call locks k first; B's waits in its step 1. A updates k to 5 at 91 and commits; B's
     * lock is granted on that row, B's update finds version 91, not 7, and leaves it: A's call answers [1], B's [].
     * B then reads k again (5 at 91) and writes 5 + its 2 as 7 at a new version: the row holds all 7 requests.
     *
     * Why a function and not a single INSERT ... ON CONFLICT: within one statement the order in which rows are locked
     * is the plan's, so two instances writing overlapping batches could lock them in opposite orders and deadlock
     * (PostgreSQL would end one of them after deadlock_timeout, a second by default). In the function, step 1 takes
     * every lock the call will update under, in id order, before anything is written; step 2 waits only for calls that
     * are themselves inserting a row of the same id, and both go up in id order: no cycle of waits can form. And a
     * plain INSERT cannot say "update only at this version, and never insert" for a write that expects a record
     * that has meanwhile been deleted; the function's UPDATE can.
     *
     * Outcomes. The call's transaction either commits all the writes it applied or none. An error that PostgreSQL
     * reports for the statement (a deadlock, a lock timeout, a serialization failure) means it was rolled back, so
     * every write answers false, not applied, and core reads those keys again as after a conflict. Any other failure
     * (a socket timeout, a lost connection, a failed commit) leaves the outcome unknown: it is thrown, and core settles
     * each write by a read before writing the key again.
     */

    /** SQLSTATEs of a statement that failed and was rolled back, having applied nothing. */
    private static final Set<String> ROLLED_BACK = Set.of(
            "40P01", // deadlock_detected
            "40001", // serialization_failure
            "55P03", // lock_not_available (lock_timeout)
            "57014"); // query_canceled (statement_timeout)

    private final DataSource dataSource;
    private final Schema schema;
    private final boolean createSchema;
    private final Duration timeout;
    private final int lockTimeoutMillis;
    private final String loadSql;
    private final String casSql;
    private final RateLimitListener listener;

    PostgresCounterStore(
            DataSource dataSource, Schema schema, boolean createSchema, Duration timeout, RateLimitListener listener) {
        this.dataSource = dataSource;
        this.listener = listener;
        this.schema = schema;
        this.createSchema = createSchema;
        this.timeout = timeout;
        this.lockTimeoutMillis = Calls.lockTimeoutMillis(timeout);
        this.loadSql = schema.loadCountersSql();
        this.casSql = schema.casCountersSql();
    }

    /**
     * Reads the records of {@code keys} in one statement. A record whose expiry has passed is returned as long as
     * its row is there (as a MongoDB document is until the TTL monitor deletes it): core never depends on deletion.
     *
     * @throws SluiceException if the database fails or times out
     * @throws IllegalArgumentException if a key is null
     */
    @Override
    public List<CounterSnapshot> load(List<CounterKey> keys) {
        Objects.requireNonNull(keys, "keys must not be null");
        if (keys.isEmpty()) {
            return List.of();
        }
        byte[][] ids = new byte[keys.size()][];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = id(Objects.requireNonNull(keys.get(i), "key must not be null"));
        }
        Map<ByteBuffer, CounterSnapshot> found;
        long start = System.nanoTime();
        try {
            found = Calls.run(dataSource, schema, createSchema, timeout, listener, c -> read(c, ids));
        } catch (Calls.PoolClosedException e) {
            throw e;
        } catch (SQLException | RuntimeException e) {
            Listeners.call(listener, null, System.nanoTime() - start);
            throw new SluiceException(
                    "PostgreSQL failed reading " + keys.size() + " counter records (" + describe(keys.get(0))
                            + (keys.size() > 1 ? ", ..." : "") + ") in " + schema.table() + ": " + e,
                    e);
        }
        Listeners.call(listener, null, System.nanoTime() - start);
        List<CounterSnapshot> out = new ArrayList<>(ids.length);
        for (byte[] id : ids) {
            out.add(found.getOrDefault(ByteBuffer.wrap(id), CounterSnapshot.absent()));
        }
        return out;
    }

    private Map<ByteBuffer, CounterSnapshot> read(Connection c, byte[][] ids) throws SQLException {
        Map<ByteBuffer, CounterSnapshot> found = new HashMap<>();
        try (PreparedStatement s = c.prepareStatement(loadSql)) {
            s.setObject(1, ids);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    byte[] id = rs.getBytes(1);
                    long version = rs.getLong(2);
                    Long[] frames = (Long[]) rs.getArray(3).getArray();
                    Long[] counts = (Long[]) rs.getArray(4).getArray();
                    if (frames.length != counts.length) {
                        throw new SQLException(
                                "a counter record holds " + frames.length + " frames and " + counts.length + " counts");
                    }
                    TreeMap<Long, Long> counters = new TreeMap<>();
                    for (int i = 0; i < frames.length; i++) {
                        counters.put(frames[i], counts[i]);
                    }
                    found.put(ByteBuffer.wrap(id), new CounterSnapshot(version, counters));
                }
            }
        }
        return found;
    }

    /**
     * Applies the writes whose expected version matches, in one statement (see the class comment for the
     * concurrency). A write is applied or not as a whole; the batch commits together.
     *
     * @return per write, whether it was applied; all {@code false} when PostgreSQL rolled the statement back (a
     *         deadlock, a lock or statement timeout, a serialization failure), which applies nothing
     * @throws SluiceException if the database fails or times out such that the outcome is unknown
     * @throws IllegalArgumentException if a write is null or a key is written twice
     */
    @Override
    public boolean[] compareAndSet(List<CounterWrite> writes) {
        Objects.requireNonNull(writes, "writes must not be null");
        int n = writes.size();
        if (n == 0) {
            return new boolean[0];
        }
        byte[][] ids = new byte[n][];
        String[] shapes = new String[n];
        String[] keys = new String[n];
        long[] expected = new long[n];
        long[] versions = new long[n];
        long[] expires = new long[n];
        int[] offsets = new int[n];
        int[] sizes = new int[n];
        int total = 0;
        Map<ByteBuffer, Integer> seen = new HashMap<>();
        for (int i = 0; i < n; i++) {
            CounterWrite w = Objects.requireNonNull(writes.get(i), "write must not be null");
            ids[i] = id(w.key());
            Integer earlier = seen.putIfAbsent(ByteBuffer.wrap(ids[i]), i);
            if (earlier != null) {
                throw new IllegalArgumentException("the key " + describe(w.key()) + " is written twice in one batch,"
                        + " at " + earlier + " and " + i);
            }
            shapes[i] = Keys.readable(w.key().shape());
            keys[i] = Keys.readable(w.key().key());
            expected[i] = w.expectedVersion();
            versions[i] = w.newVersion();
            expires[i] = w.expireAtNanos();
            offsets[i] = total;
            sizes[i] = w.counters().size();
            total += sizes[i];
        }
        long[] frames = new long[total];
        long[] counts = new long[total];
        int at = 0;
        for (CounterWrite w : writes) {
            for (Map.Entry<Long, Long> e : w.counters().entrySet()) {
                frames[at] = e.getKey();
                counts[at] = e.getValue();
                at++;
            }
        }
        Integer[] applied;
        long start = System.nanoTime();
        try {
            applied = Calls.run(dataSource, schema, createSchema, timeout, listener, c -> {
                try (PreparedStatement s = c.prepareStatement(casSql)) {
                    s.setObject(1, ids);
                    s.setArray(2, c.createArrayOf("text", shapes));
                    s.setArray(3, c.createArrayOf("text", keys));
                    s.setObject(4, expected);
                    s.setObject(5, versions);
                    s.setObject(6, expires);
                    s.setObject(7, offsets);
                    s.setObject(8, sizes);
                    s.setObject(9, frames);
                    s.setObject(10, counts);
                    s.setInt(11, lockTimeoutMillis);
                    try (ResultSet rs = s.executeQuery()) {
                        if (!rs.next()) {
                            throw new SQLException("the compare-and-set function returned no row");
                        }
                        return (Integer[]) rs.getArray(1).getArray();
                    }
                }
            });
        } catch (SQLException e) {
            Listeners.call(listener, null, System.nanoTime() - start);
            if (Calls.stateIn(e, ROLLED_BACK)) {
                // answered, not thrown: nobody else hears of it
                Listeners.failure(
                        listener,
                        null,
                        new SluiceException(
                                "PostgreSQL rolled back writing "
                                        + writes.size() + " counter records ("
                                        + describe(writes.get(0).key())
                                        + (writes.size() > 1 ? ", ..." : "") + ") in " + schema.table() + " (SQLSTATE "
                                        + e.getSQLState() + "); none applied: " + e,
                                e));
                return new boolean[n];
            }
            throw failure(writes, e);
        } catch (Calls.PoolClosedException e) {
            throw e;
        } catch (RuntimeException e) {
            Listeners.call(listener, null, System.nanoTime() - start);
            throw failure(writes, e);
        }
        Listeners.call(listener, null, System.nanoTime() - start);
        boolean[] result = new boolean[n];
        for (Integer position : applied) {
            if (position == null || position < 1 || position > n || result[position - 1]) {
                throw new SluiceException("the compare-and-set function of " + schema.table() + " answered position "
                        + position + " for " + n + " writes");
            }
            result[position - 1] = true;
        }
        return result;
    }

    private SluiceException failure(List<CounterWrite> writes, Exception e) {
        return new SluiceException(
                "PostgreSQL failed writing " + writes.size() + " counter records ("
                        + describe(writes.get(0).key()) + (writes.size() > 1 ? ", ..." : "") + ") in " + schema.table()
                        + "; whether they were applied is unknown: " + e,
                e);
    }

    /**
     * The row id of {@code key}: SHA-256 over its shape and its key, each as its length and its UTF-16 code units
     * (see {@link Keys}).
     */
    static byte[] id(CounterKey key) {
        return Keys.digest(Keys.parts(key.shape()), key.key());
    }

    private static String describe(CounterKey key) {
        return key.shape() + " '" + Keys.abbreviate(key.key()) + "'";
    }

    /** The table that holds the records, schema-qualified if a schema was given. */
    String table() {
        return schema.table();
    }

    @Override
    public String toString() {
        return "PostgresCounterStore[" + schema.table() + ", timeout=" + Durations.format(timeout) + "]";
    }
}
