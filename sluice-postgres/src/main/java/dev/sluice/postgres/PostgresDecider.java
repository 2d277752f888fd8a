package dev.sluice.postgres;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import dev.sluice.SluiceException;
import dev.sluice.spi.AtomicDecider;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.spi.StoreDecision;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;

/**
 * The decider of one limiter on a {@link PostgresStore}: each call is one statement calling the algorithm's function,
 * on a connection borrowed from the store's DataSource for that call. Thread-safe.
 */
final class PostgresDecider implements AtomicDecider {

    private final PostgresStore store;
    private final String decideSql;
    private final String giveBackSql;
    private final String namespace;
    private final String shape;
    private final byte[] idPrefix;
    private final long limit;
    private final long window;
    private final long subWindow;  // 0 for the sliding log: the log function takes its expiry rule from it
    private final boolean strict;
    private final boolean countRejected;
    private final int lockTimeoutMillis;  // see Calls.lockTimeoutMillis
    private final boolean async;

    PostgresDecider(PostgresStore store, LimiterConfig config) {
        this.store = store;
        String suffix = suffix(config.algorithm());
        this.decideSql = store.schema().decideSql(suffix);
        this.giveBackSql = store.schema().giveBackSql(suffix);
        this.namespace = store.options().namespace();
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

    /** The suffix of the algorithm's functions: its code, but for the sub-window counter, which runs on the log's. */
    private static String suffix(Algorithm algorithm) {
        return algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? Algorithm.SLIDING_LOG.code() : algorithm.code();
    }

    @Override
    public StoreDecision decide(String key, long cost, boolean consume, long nowNanos) {
        return call("deciding", key, c -> {
            try (PreparedStatement s = c.prepareStatement(decideSql)) {
                s.setBytes(1, id(key));
                s.setString(2, namespace);
                s.setString(3, shape);
                s.setString(4, Keys.readable(key));
                s.setLong(5, limit);
                s.setLong(6, window);
                s.setLong(7, subWindow);
                s.setBoolean(8, strict);
                s.setBoolean(9, countRejected);
                s.setLong(10, cost);
                s.setBoolean(11, consume);
                setNow(s, 12, nowNanos);
                s.setInt(13, lockTimeoutMillis);
                s.setBoolean(14, async);
                try (ResultSet rs = s.executeQuery()) {
                    if (!rs.next()) {
                        throw new SQLException("the decision function returned no row");
                    }
                    return new StoreDecision(rs.getBoolean(1), rs.getLong(2), rs.getLong(3), rs.getLong(4),
                            rs.getLong(5));
                }
            }
        });
    }

    @Override
    public boolean giveBack(String key, long cost, long place, long nowNanos) {
        return call("giving back " + cost + " for", key, c -> {
            try (PreparedStatement s = c.prepareStatement(giveBackSql)) {
                s.setBytes(1, id(key));
                s.setLong(2, limit);
                s.setLong(3, window);
                s.setLong(4, subWindow);
                s.setBoolean(5, strict);
                s.setLong(6, cost);
                s.setLong(7, place);
                setNow(s, 8, nowNanos);
                s.setInt(9, lockTimeoutMillis);
                s.setBoolean(10, async);
                try (ResultSet rs = s.executeQuery()) {
                    if (!rs.next()) {
                        throw new SQLException("the give-back function returned no row");
                    }
                    return rs.getBoolean(1);
                }
            }
        });
    }

    private static void setNow(PreparedStatement s, int index, long nowNanos) throws SQLException {
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
            return Calls.run(store.dataSource(), store.schema(), store.createsSchema(), store.options().timeout(),
                    body);
        } catch (SQLException | RuntimeException e) {
            throw new SluiceException("PostgreSQL failed " + what + " key '" + Keys.abbreviate(key) + "' in "
                    + store.table() + ": " + e, e);
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
