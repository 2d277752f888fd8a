package dev.sluice.postgres;

import dev.sluice.RateLimitListener;
import dev.sluice.SluiceException;
import dev.sluice.spi.Listeners;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.concurrent.Executor;
import javax.sql.DataSource;

/**
 * One call of a store: a connection borrowed from the DataSource for the call, the call's statements bounded by the
 * store's timeout, its own transaction committed (or rolled back) unless the connection is in auto-commit mode, and the
 * schema created again if it has gone missing. Shared by both stores of this module. Stateless.
 */
final class Calls {

    /** For {@link Connection#setNetworkTimeout}, which wants an executor; PostgreSQL's driver runs nothing on it. */
    static final Executor DIRECT = Runnable::run;

    private static final String UNDEFINED_FUNCTION = "42883";
    private static final String UNDEFINED_TABLE = "42P01";
    /** The longest network timeout the driver takes: {@code Integer.MAX_VALUE} milliseconds. */
    private static final long MAX_TIMEOUT_NANOS = Integer.MAX_VALUE * 1_000_000L;

    private Calls() {}

    /** The statements of one call, on a borrowed connection. */
    @FunctionalInterface
    interface Body<T> {
        T run(Connection c) throws SQLException;
    }

    /**
     * Four fifths of {@code timeout}, in milliseconds (at least 1): the {@code lock_timeout} of a call that writes. A
     * call stuck behind a row lock is then ended by the server, cleanly (the connection stays usable and nothing is
     * written), before the client's socket timeout gives up on the call.
     */
    static int lockTimeoutMillis(Duration timeout) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, saturatedNanos(timeout) / 1_000_000 * 4 / 5));
    }

    /** {@code d} in nanoseconds, the largest long if it does not fit. */
    static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /**
     * Runs {@code body} within {@code timeout}, once more after creating the schema again if a table or function of
     * it has gone missing (when {@code createSchema}). The missing schema is a failure the call recovers from, so it
     * throws nothing: it goes to {@code listener} ({@link RateLimitListener#onStoreFailure}, with no limiter).
     *
     * @throws SQLException     if the database fails, refuses or times out
     * @throws RuntimeException if {@code body} or the DataSource throws one
     */
    static <T> T run(
            DataSource dataSource,
            Schema schema,
            boolean createSchema,
            Duration timeout,
            RateLimitListener listener,
            Body<T> body)
            throws SQLException {
        long deadline = System.nanoTime() + Math.min(saturatedNanos(timeout), MAX_TIMEOUT_NANOS);
        try {
            return attempt(dataSource, timeout, body, deadline);
        } catch (SQLException e) {
            if (!createSchema || !isMissingSchema(e)) {
                throw e;
            }
            Listeners.failure(
                    listener,
                    null,
                    new SluiceException(
                            "the table " + schema.table() + " or one of its"
                                    + " functions is missing on PostgreSQL (SQLSTATE " + e.getSQLState()
                                    + "); creating them again: "
                                    + e.getMessage(),
                            e));
            schema.install(dataSource, true, remaining(timeout, deadline));
            return attempt(dataSource, timeout, body, deadline);
        }
    }

    private static <T> T attempt(DataSource dataSource, Duration timeout, Body<T> body, long deadline)
            throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            long left = remaining(timeout, deadline);
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
            cause.addSuppressed(e); // a broken connection: the pool will drop it
        }
    }

    private static void rollbackQuietly(Connection c, Exception cause) {
        try {
            c.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    /** Nanoseconds left before {@code deadline}. */
    private static long remaining(Duration timeout, long deadline) throws SQLTimeoutException {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw new SQLTimeoutException("no connection from the DataSource within the store's timeout of " + timeout
                    + " (bound the pool's connection timeout by it)");
        }
        return left;
    }

    private static boolean isMissingSchema(SQLException e) {
        return UNDEFINED_FUNCTION.equals(e.getSQLState()) || UNDEFINED_TABLE.equals(e.getSQLState());
    }
}
