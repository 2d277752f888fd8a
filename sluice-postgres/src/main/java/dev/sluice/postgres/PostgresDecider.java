package dev.sluice.postgres;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import dev.sluice.SluiceException;
import dev.sluice.spi.AtomicDecider;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.spi.StoreDecision;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.Types;
import java.util.concurrent.Executor;

/**
 * The decider of one limiter on a {@link PostgresStore}: each call is one statement calling the algorithm's function,
 * on a connection borrowed from the store's DataSource for that call. Thread-safe.
 */
final class PostgresDecider implements AtomicDecider {

    /** For {@link Connection#setNetworkTimeout}, which wants an executor; PostgreSQL's driver runs nothing on it. */
    static final Executor DIRECT = Runnable::run;

    private static final String UNDEFINED_FUNCTION = "42883";
    private static final String UNDEFINED_TABLE = "42P01";
    private static final int KEY_IN_MESSAGES = 80;

    private final PostgresStore store;
    private final String decideSql;
    private final String giveBackSql;
    private final String namespace;
    private final String state;
    private final byte[] idPrefix;
    private final long limit;
    private final long window;
    private final long subWindow;  // 0 for the sliding log: the log function takes its expiry rule from it
    private final boolean strict;
    private final boolean countRejected;
    private final long timeoutNanos;
    /*
     * Four fifths of the timeout: a call stuck behind a row lock is then ended by the server, cleanly (the
     * connection stays usable and nothing is written), before the client's socket timeout gives up on the call.
     */
    private final int lockTimeoutMillis;
    private final boolean async;

    PostgresDecider(PostgresStore store, LimiterConfig config) {
        this.store = store;
        String suffix = suffix(config.algorithm());
        this.decideSql = store.schema().decideSql(suffix);
        this.giveBackSql = store.schema().giveBackSql(suffix);
        this.namespace = store.options().namespace();
        this.state = SharedStoreOptions.stateName(config);
        this.idPrefix = idPrefix(namespace, state);
        this.limit = config.limit();
        this.window = config.windowNanos();
        this.subWindow = config.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER ? config.subWindowNanos() : 0;
        this.strict = config.strict();
        this.countRejected = config.countRejected();
        this.timeoutNanos = store.options().timeout().toNanos();
        this.lockTimeoutMillis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeoutNanos / 1_000_000 * 4 / 5));
        this.async = !store.synchronousCommit();
    }

    private static String suffix(Algorithm algorithm) {
        switch (algorithm) {
            case FIXED_WINDOW:
                return "fw";
            case SLIDING_LOG:
            case SLIDING_WINDOW_COUNTER:
                return "log";
            case SLIDING_TAIL:
                return "tail";
            case TOKEN_BUCKET:
                return "tb";
            case LEAKY_BUCKET:
                return "lb";
            default:
                throw new IllegalArgumentException("unknown algorithm " + algorithm);
        }
    }

    @Override
    public StoreDecision decide(String key, long cost, boolean consume, long nowNanos) {
        return call("deciding", key, c -> {
            try (PreparedStatement s = c.prepareStatement(decideSql)) {
                s.setBytes(1, id(key));
                s.setString(2, namespace);
                s.setString(3, state);
                s.setString(4, readable(key));
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

    /** One statement on a borrowed connection. */
    @FunctionalInterface
    private interface Body<T> {
        T run(Connection c) throws SQLException;
    }

    /**
     * Runs {@code body} within the store's timeout, once more after recreating the schema if it has gone missing.
     *
     * @throws SluiceException on any failure or timeout
     */
    private <T> T call(String what, String key, Body<T> body) {
        long deadline = System.nanoTime() + timeoutNanos;
        try {
            try {
                return attempt(body, deadline);
            } catch (SQLException e) {
                if (!store.createsSchema() || !isMissingSchema(e)) {
                    throw e;
                }
                store.schema().install(store.dataSource(), true, remaining(deadline));
                return attempt(body, deadline);
            }
        } catch (SQLException | RuntimeException e) {
            throw new SluiceException("PostgreSQL failed " + what + " key '" + abbreviate(key) + "' in "
                    + store.table() + ": " + e, e);
        }
    }

    private <T> T attempt(Body<T> body, long deadline) throws SQLException {
        try (Connection c = store.dataSource().getConnection()) {
            long left = remaining(deadline);
            int before = c.getNetworkTimeout();
            int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000));
            c.setNetworkTimeout(DIRECT, millis);
            boolean autoCommit = c.getAutoCommit();
            T result;
            try {
                result = body.run(c);
                if (!autoCommit) {
                    c.commit();
                }
            } catch (SQLException | RuntimeException e) {
                if (!autoCommit) {
                    rollbackQuietly(c, e);
                }
                restoreQuietly(c, before, e);
                throw e;
            }
            c.setNetworkTimeout(DIRECT, before);
            return result;
        }
    }

    private static void restoreQuietly(Connection c, int networkTimeout, Exception cause) {
        try {
            c.setNetworkTimeout(DIRECT, networkTimeout);
        } catch (SQLException | RuntimeException e) {
            cause.addSuppressed(e);  // a broken connection: the pool will drop it
        }
    }

    /** Nanoseconds left before {@code deadline}. */
    private long remaining(long deadline) throws SQLTimeoutException {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw new SQLTimeoutException("no connection from the DataSource within the store's timeout of "
                    + store.options().timeout() + " (bound the pool's connection timeout by it)");
        }
        return left;
    }

    private static void rollbackQuietly(Connection c, Exception cause) {
        try {
            c.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    private static boolean isMissingSchema(SQLException e) {
        return UNDEFINED_FUNCTION.equals(e.getSQLState()) || UNDEFINED_TABLE.equals(e.getSQLState());
    }

    // ---- keys -------------------------------------------------------------------------------------------------------

    /**
     * The row id of {@code key}: SHA-256 over the namespace, the state shape and the key, each as its length and its
     * UTF-16 code units, so that every distinct string (lone surrogates and U+0000 included) has its own row and no
     * two concatenations collide.
     */
    byte[] id(String key) {
        MessageDigest d = sha256();
        d.update(idPrefix);
        d.update(part(key));
        return d.digest();
    }

    private static byte[] idPrefix(String namespace, String state) {
        byte[] a = part(namespace);
        byte[] b = part(state);
        return ByteBuffer.allocate(a.length + b.length).put(a).put(b).array();
    }

    private static byte[] part(String s) {
        ByteBuffer b = ByteBuffer.allocate(4 + 2 * s.length()).putInt(s.length());
        for (int i = 0; i < s.length(); i++) {
            b.putChar(s.charAt(i));
        }
        return b.array();
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** The key as stored for reading: PostgreSQL text cannot hold U+0000, shown as U+2400 instead. */
    static String readable(String key) {
        return key.indexOf('\0') < 0 ? key : key.replace('\0', '\u2400');
    }

    private static String abbreviate(String key) {
        return key.length() <= KEY_IN_MESSAGES ? key : key.substring(0, KEY_IN_MESSAGES) + "…";
    }

    @Override
    public String toString() {
        return "PostgresDecider[" + store.table() + ", " + namespace + ", " + state + "]";
    }
}
