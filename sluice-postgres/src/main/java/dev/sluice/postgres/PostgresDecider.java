package dev.sluice.postgres;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import dev.sluice.SluiceException;
import dev.sluice.spi.AtomicDecider;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.spi.StoreDecision;
import dev.sluice.spi.WarmUp;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;

/**
 * The decider of one limiter on a {@link PostgresStore}: each call is one statement calling the algorithm's function,
 * on a connection borrowed from the store's DataSource for that call. Thread-safe.
 */
final class PostgresDecider implements AtomicDecider {

    private final PostgresStore store;
    private final String decideSql;
    private final String giveBackSql;
    private final String algorithm; // its code, which names its functions
    private final String namespace;
    private final String shape;
    private final byte[] idPrefix;
    private final long limit;
    private final long window;
    private final long subWindow; // 0 but for the sub-window counter: the log's functions take its expiry rule from it
    private final boolean strict;
    private final boolean countRejected;
    private final int lockTimeoutMillis; // see Calls.lockTimeoutMillis
    private final boolean async;

    PostgresDecider(PostgresStore store, LimiterConfig config) {
        this(store, config, store.options().namespace());
    }

    /**
     * A decider whose rows' ids are made from {@code namespace}, not the store's (the warm-up's,
     * {@link WarmUp#namespace}).
     */
    PostgresDecider(PostgresStore store, LimiterConfig config, String namespace) {
        this.store = store;
        this.decideSql = store.schema().decideSql();
        this.giveBackSql = store.schema().giveBackSql();
        this.algorithm = config.algorithm().code();
        this.namespace = namespace;
        this.shape = SharedStoreOptions.shape(config);
        this.idPrefix = Keys.parts(namespace, shape);
        this.limit = config.limit();
        this.window = config.windowNanos();
        this.subWindow = config.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER ? config.subWindowNanos() : 0;
        this.strict = config.strict();
        this.countRejected = config.countRejected();
        this.lockTimeoutMillis = Calls.lockTimeoutMillis(store.options().timeout());
        this.async = !store.synchronousCommit();
    }

    /**
     * A consuming decision goes in the next batch of the store ({@link PostgresBatches}), by the store's timeout; a
     * {@code peek} is one call of the decision function.
     */
    @Override
    public StoreDecision decide(String key, long cost, boolean consume, long nowNanos) {
        if (!consume) {
            return call("deciding", key, c -> decide(c, key, cost, false, nowNanos));
        }
        long deadline = System.nanoTime() + Calls.saturatedNanos(store.options().timeout());
        try {
            return store.batches()
                    .decide(List.of(new PostgresBatches.Part(this, key, cost, nowNanos)), false, deadline)
                    .get(0);
        } catch (SluiceException e) {
            throw failed("deciding key '" + Keys.abbreviate(key) + "'", e);
        }
    }

    /**
     * {@code e}, a batch's failure, as the failure of {@code what} in this store: its cause, the driver's exception or
     * the timeout, kept as the cause.
     */
    SluiceException failed(String what, SluiceException e) {
        Throwable cause = e.getCause();
        String why = cause instanceof SQLException ? cause.toString() : e.getMessage();
        return new SluiceException(
                "PostgreSQL failed " + what + " in " + store.table() + ": " + why, cause != null ? cause : e);
    }

    /** The statement of {@link #decide(String, long, boolean, long)}, on {@code c}. */
    StoreDecision decide(Connection c, String key, long cost, boolean consume, long nowNanos) throws SQLException {
        return callFunction(
                c,
                decideSql,
                "decision",
                s -> {
                    s.setString(3, namespace);
                    s.setString(4, shape);
                    s.setString(5, Keys.readable(key));
                    s.setLong(6, limit);
                    s.setLong(7, window);
                    s.setLong(8, subWindow);
                    s.setBoolean(9, strict);
                    s.setBoolean(10, countRejected);
                    s.setLong(11, cost);
                    s.setBoolean(12, consume);
                    return 13;
                },
                key,
                nowNanos,
                rs -> new StoreDecision(rs.getBoolean(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)));
    }

    @Override
    public boolean giveBack(String key, long cost, long place, long nowNanos) {
        return call(
                "giving back " + cost + " for",
                key,
                c -> callFunction(
                        c,
                        giveBackSql,
                        "give-back",
                        s -> {
                            s.setLong(3, limit);
                            s.setLong(4, window);
                            s.setLong(5, subWindow);
                            s.setBoolean(6, strict);
                            s.setLong(7, cost);
                            s.setLong(8, place);
                            return 9;
                        },
                        key,
                        nowNanos,
                        rs -> rs.getBoolean(1)));
    }

    /** Sets a function's parameters from the third on; returns the index of its time parameter. */
    @FunctionalInterface
    private interface Parameters {
        int set(PreparedStatement s) throws SQLException;
    }

    /** Reads a function's answer from its one row. */
    @FunctionalInterface
    private interface Row<T> {
        T read(ResultSet rs) throws SQLException;
    }

    /**
     * Calls one of the algorithm's functions on {@code c}: the algorithm and {@code key}'s row id, the
     * {@code parameters}, then the time, the lock timeout and whether to commit asynchronously; reads its one row.
     */
    private <T> T callFunction(
            Connection c, String sql, String function, Parameters parameters, String key, long nowNanos, Row<T> row)
            throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, algorithm);
            s.setBytes(2, id(key));
            int now = parameters.set(s);
            setNow(s, now, nowNanos);
            s.setInt(now + 1, lockTimeoutMillis);
            s.setBoolean(now + 2, async);
            try (ResultSet rs = s.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("the " + function + " function returned no row");
                }
                return row.read(rs);
            }
        }
    }

    /** The store this decider belongs to. */
    PostgresStore store() {
        return store;
    }

    String algorithm() {
        return algorithm;
    }

    String shape() {
        return shape;
    }

    long limit() {
        return limit;
    }

    long window() {
        return window;
    }

    long subWindow() {
        return subWindow;
    }

    boolean strict() {
        return strict;
    }

    boolean countRejected() {
        return countRejected;
    }

    static void setNow(PreparedStatement s, int index, long nowNanos) throws SQLException {
        if (nowNanos == STORE_TIME) {
            s.setNull(index, Types.BIGINT);
        } else {
            s.setLong(index, nowNanos);
        }
    }

    /**
     * Runs {@code body} as one call of the store (see {@link Calls#run}).
     *
     * @throws SluiceException on any failure or timeout
     */
    private <T> T call(String what, String key, Calls.Body<T> body) {
        try {
            return store.call(body);
        } catch (Calls.PoolClosedException e) {
            throw e;
        } catch (SQLException | RuntimeException e) {
            throw new SluiceException(
                    "PostgreSQL failed " + what + " key '" + Keys.abbreviate(key) + "' in " + store.table() + ": " + e,
                    e);
        }
    }

    /**
     * The row id of {@code key}: SHA-256 over the namespace, the shape and the key, each as its length and its
     * UTF-16 code units (see {@link Keys}).
     */
    byte[] id(String key) {
        return Keys.digest(idPrefix, key);
    }

    @Override
    public String toString() {
        return "PostgresDecider[" + store.table() + ", " + namespace + ", " + shape + "]";
    }
}
