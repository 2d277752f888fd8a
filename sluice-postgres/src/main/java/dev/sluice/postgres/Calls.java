package dev.sluice.postgres;

import dev.sluice.RateLimitListener;
import dev.sluice.SluiceException;
import dev.sluice.spi.Durations;
import dev.sluice.spi.Listeners;
import java.lang.System.Logger.Level;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Collections;
import java.util.Optional;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

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
    /** Between two attempts to reach the database while a build waits for it. */
    private static final long STARTUP_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** The SQLSTATEs {@code 57P01} to {@code 57P05}: the server is shutting down, starting up, or crashed. */
    private static final String SERVER_NOT_READY = "57P0";

    private static final System.Logger LOG = System.getLogger(PostgresStore.class.getName());

    /** Per DataSource class: its public {@code boolean isClosed()}, if it has one (HikariCP, Commons DBCP 2). */
    private static final ClassValue<Optional<Method>> IS_CLOSED = publicMethod("isClosed", boolean.class);
    /** Per DataSource class: its public {@code long getConnectionTimeout()} in milliseconds, if it has one (HikariCP). */
    private static final ClassValue<Optional<Method>> CONNECTION_TIMEOUT =
            publicMethod("getConnectionTimeout", long.class);

    /** Per class: its public method {@code name()} returning {@code returns}, if it has one. */
    private static ClassValue<Optional<Method>> publicMethod(String name, Class<?> returns) {
        return new ClassValue<>() {
            @Override
            protected Optional<Method> computeValue(Class<?> type) {
                try {
                    Method m = type.getMethod(name);
                    boolean usable = m.getReturnType() == returns
                            && Modifier.isPublic(m.getDeclaringClass().getModifiers());
                    return usable ? Optional.of(m) : Optional.empty();
                } catch (NoSuchMethodException | SecurityException e) {
                    return Optional.empty();
                }
            }
        };
    }

    private Calls() {}

    /**
     * Warns, once per store built, if {@code dataSource} says how long it waits to lend a connection (HikariCP's
     * {@code connectionTimeout}) and that is longer than both the store's {@code timeout} and 250 ms (HikariCP's
     * least): the store cannot interrupt {@link DataSource#getConnection()}, so during an outage every call would wait
     * that long, not the store's timeout.
     */
    static void checkBorrowTimeout(DataSource dataSource, Duration timeout, String store) {
        Optional<Method> getter = CONNECTION_TIMEOUT.get(dataSource.getClass());
        if (getter.isEmpty()) {
            return;
        }
        long millis;
        try {
            millis = (long) getter.get().invoke(dataSource);
        } catch (IllegalAccessException | InvocationTargetException | RuntimeException e) {
            return;
        }
        long bound = Math.max(timeout.toMillis(), 250);
        if (millis > bound) {
            LOG.log(
                    Level.WARNING,
                    "the DataSource of the Sluice " + store + " waits up to " + millis + " ms to lend a connection"
                            + " (its connectionTimeout), longer than the store's timeout of "
                            + Durations.format(timeout) + ": while the"
                            + " database is down every call will wait that long before the failure policy answers."
                            + " Set the pool's connectionTimeout to " + bound
                            + " ms, or give Sluice a pool of its own");
        }
    }

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
        return run(dataSource, schema, createSchema, timeout, listener, null, body);
    }

    /**
     * As {@link #run(DataSource, Schema, boolean, Duration, RateLimitListener, Body)}, and a connection that
     * {@code warmer} has not seen yet is first warmed by it, outside the call's timeout (see {@link Warmer}).
     */
    static <T> T run(
            DataSource dataSource,
            Schema schema,
            boolean createSchema,
            Duration timeout,
            RateLimitListener listener,
            @Nullable Warmer warmer,
            Body<T> body)
            throws SQLException {
        long deadline = System.nanoTime() + Math.min(saturatedNanos(timeout), MAX_TIMEOUT_NANOS);
        return run(dataSource, schema, createSchema, timeout, listener, warmer, deadline, body);
    }

    /**
     * As {@link #run(DataSource, Schema, boolean, Duration, RateLimitListener, Warmer, Body)}, by {@code deadline} (a
     * {@link System#nanoTime()} value) rather than within {@code timeout} from now.
     */
    static <T> T run(
            DataSource dataSource,
            Schema schema,
            boolean createSchema,
            Duration timeout,
            RateLimitListener listener,
            @Nullable Warmer warmer,
            long deadline,
            Body<T> body)
            throws SQLException {
        if (createSchema && !schema.knownInstalled()) {
            // built without reaching the database: the first call that reaches it checks the schema first
            schema.install(dataSource, false, remaining(timeout, deadline));
        }
        try {
            return attempt(dataSource, timeout, warmer, body, deadline);
        } catch (SQLException e) {
            if (!isMissingSchema(e)) {
                throw e;
            }
            if (!createSchema) {
                throw new SQLException(
                        "the table " + schema.table() + " or one of its functions is missing or older than this"
                                + " version's, and createSchema is off: run Builder.schemaScript() (SQLSTATE "
                                + e.getSQLState() + ": " + e.getMessage() + ")",
                        e.getSQLState(),
                        e);
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
            return attempt(dataSource, timeout, warmer, body, deadline);
        }
    }

    private static <T> T attempt(
            DataSource dataSource, Duration timeout, @Nullable Warmer warmer, Body<T> body, long deadline)
            throws SQLException {
        try (Connection c = connect(dataSource)) {
            if (warmer != null && warmer.warm(c) && deadline - System.nanoTime() <= 0) {
                // the call's time went to warming a new connection: it fails rather than be made late
                throw new SQLTimeoutException("the connection was new and was warmed (its server process's first"
                        + " calls) past the call's timeout of " + Durations.format(timeout)
                        + "; the call was not made");
            }
            return inTransaction(c, millis(remaining(timeout, deadline) + 999_999), body);
        }
    }

    /**
     * Runs {@code body} on {@code c} as one transaction (committed, or rolled back on failure, unless {@code c} is in
     * auto-commit mode) with the network timeout {@code networkTimeoutMillis}, restoring the connection's own after.
     */
    private static <T> T inTransaction(Connection c, int networkTimeoutMillis, Body<T> body) throws SQLException {
        int before = c.getNetworkTimeout();
        c.setNetworkTimeout(DIRECT, networkTimeoutMillis);
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

    /** {@code nanos} in whole milliseconds, rounded down, within 1 and {@code Integer.MAX_VALUE}: a network timeout. */
    static int millis(long nanos) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, nanos / 1_000_000));
    }

    /**
     * A connection from {@code dataSource} whose network timeout is {@code timeoutNanos}, for the short calls around
     * the store's own (a catalog read, a probe, the schema's creation).
     */
    static Connection connect(DataSource dataSource, long timeoutNanos) throws SQLException {
        Connection c = connect(dataSource);
        try {
            c.setNetworkTimeout(DIRECT, millis(timeoutNanos));
        } catch (SQLException | RuntimeException e) {
            try {
                c.close();
            } catch (SQLException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return c;
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
            throw new SQLTimeoutException("no connection from the DataSource within the store's timeout of "
                    + Durations.format(timeout) + " (bound the pool's connection timeout by it)");
        }
        return left;
    }

    /**
     * A connection from {@code dataSource}.
     *
     * @throws PoolClosedException if the DataSource fails because it has been closed: it has a public
     *                             {@code boolean isClosed()} (HikariCP, Commons DBCP 2) that says so
     * @throws SQLException        if it fails otherwise
     */
    static Connection connect(DataSource dataSource) throws SQLException {
        try {
            return dataSource.getConnection();
        } catch (SQLException e) {
            if (isClosed(dataSource)) {
                throw new PoolClosedException(
                        "the DataSource of the Sluice store has been closed (" + dataSource + "): " + e.getMessage(),
                        e);
            }
            throw e;
        }
    }

    private static boolean isClosed(DataSource dataSource) {
        Optional<Method> isClosed = IS_CLOSED.get(dataSource.getClass());
        if (isClosed.isEmpty()) {
            return false;
        }
        try {
            return Boolean.TRUE.equals(isClosed.get().invoke(dataSource));
        } catch (IllegalAccessException | InvocationTargetException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Warms each new connection once before it serves a call: a new connection reaches a new server process, whose
     * first call of each PL/pgSQL function compiles it, which on a busy server takes longer than a call's short timeout.
     * Such a call would fail, the driver's network timeout would close the connection, and the pool would open another
     * cold one, so calls after an outage could keep timing out. The warmer runs its statements (calls that write
     * nothing) on each connection it has not seen yet, with its own, generous timeout, and remembers the connection
     * (the pool's physical one, {@link Connection#unwrap}ped, held weakly) once they have answered. Thread-safe.
     */
    static final class Warmer {

        /** Statements that return nothing, on a connection. */
        @FunctionalInterface
        interface Statements {
            void run(Connection c) throws SQLException;
        }

        /** The least timeout of a warm-up: generous, as a cold server process may take long to compile. */
        static final Duration TIMEOUT = Duration.ofSeconds(5);

        private final int timeoutMillis;
        private final Statements statements;
        private final Set<Connection> warm =
                Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

        /**
         * @param timeout    the store's timeout: a warm-up's is {@link #TIMEOUT}, or this if longer
         * @param statements what each new connection runs once: calls that write nothing
         */
        Warmer(Duration timeout, Statements statements) {
            this.timeoutMillis = (int)
                    Math.min(Integer.MAX_VALUE, Math.max(TIMEOUT.toMillis(), saturatedNanos(timeout) / 1_000_000));
            this.statements = statements;
        }

        /**
         * Runs the statements on {@code c} if it is new, within the warm-up's timeout.
         *
         * @return whether {@code c} was new (and is now warm)
         * @throws SQLException if the statements fail or time out: the connection stays cold
         */
        boolean warm(Connection c) throws SQLException {
            Connection physical = physical(c);
            if (warm.contains(physical)) {
                return false;
            }
            inTransaction(c, timeoutMillis, w -> {
                statements.run(w);
                return true;
            });
            warm.add(physical);
            return true;
        }

        /** The connection under a pool's proxy of it, or {@code c} itself if it cannot tell. */
        private static Connection physical(Connection c) {
            try {
                Connection under = c.unwrap(Connection.class);
                return under != null ? under : c;
            } catch (SQLException | RuntimeException e) {
                return c;
            }
        }
    }

    /**
     * Thrown instead of the DataSource's exception when the DataSource has been closed: a mistake of the application,
     * which no failure policy answers for.
     */
    static final class PoolClosedException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        PoolClosedException(String message, SQLException cause) {
            super(message, cause);
        }
    }

    /**
     * Waits up to {@code startupTimeout} (zero: not at all) until the database answers: creates the schema if
     * {@code createSchema} (which reads the catalog when it is installed), else runs {@code SELECT 1}. While the
     * database cannot be reached, tries again every 100 ms; if it still cannot when the time is up, logs one warning
     * and returns false.
     *
     * @throws SluiceException     if the database answers with a refusal (a missing right, a wrong password, ...)
     * @throws PoolClosedException if the DataSource has been closed
     */
    static boolean awaitDatabase(
            DataSource dataSource, Schema schema, boolean createSchema, Duration startupTimeout, String what) {
        if (startupTimeout.isZero()) {
            return false;
        }
        long deadline = System.nanoTime() + Math.min(saturatedNanos(startupTimeout), MAX_TIMEOUT_NANOS);
        while (true) {
            long left = deadline - System.nanoTime();
            Exception last;
            try {
                if (createSchema) {
                    schema.install(dataSource, false, Math.max(left, 1_000_000));
                } else {
                    probe(dataSource, Math.max(left, 1_000_000));
                }
                return true;
            } catch (SluiceException e) {
                if (!unreachable(e.getCause())) {
                    throw e;
                }
                last = e;
            } catch (SQLException e) {
                if (!unreachable(e)) {
                    throw new SluiceException(
                            "PostgreSQL refused the " + what + " on " + schema.table() + ": " + e.getMessage(), e);
                }
                last = e;
            }
            left = deadline - System.nanoTime();
            if (left <= 0) {
                LOG.log(
                        Level.WARNING,
                        "PostgreSQL did not answer the " + what + " on " + schema.table()
                                + " within the startup timeout of " + Durations.format(startupTimeout)
                                + "; built all the same: each call is answered by the failure policy until the"
                                + " DataSource connects, and the first call that reaches the database checks the"
                                + (createSchema ? " table and functions" : " connection") + " first: " + last);
                return false;
            }
            LockSupport.parkNanos(Math.min(left, STARTUP_PAUSE_NANOS));
        }
    }

    /**
     * For a store built without {@code createSchema}: whether {@code schema}'s table and functions, of this version,
     * are in place (one catalog read, bounded by {@code timeoutNanos}), so that warming the store up can succeed.
     * Without them every call fails, and a warm-up would spend the whole startup timeout on calls that cannot; so
     * missing ones are logged once, and the store is built all the same (its calls answered by the failure policy
     * until they are created).
     */
    static boolean schemaInPlace(DataSource dataSource, Schema schema, long timeoutNanos) {
        try (Connection c = connect(dataSource, timeoutNanos)) {
            if (schema.installed(c)) {
                return true;
            }
            LOG.log(
                    Level.WARNING,
                    "the table " + schema.table() + " and its functions are missing or not this version's, and"
                            + " createSchema is off: each call is answered by the failure policy until they are"
                            + " created (Builder.schemaScript() gives the script)");
        } catch (SQLException e) {
            LOG.log(
                    Level.WARNING,
                    "could not check the table " + schema.table() + " and its functions: " + e.getMessage());
        }
        return false;
    }

    private static void probe(DataSource dataSource, long timeoutNanos) throws SQLException {
        try (Connection c = connect(dataSource, timeoutNanos);
                Statement s = c.createStatement()) {
            s.execute("SELECT 1");
        }
    }

    /**
     * Whether {@code e} says the database could not be reached (yet) rather than that a server answered with a
     * refusal. The first SQLSTATE in the chain of causes decides (pools such as HikariCP pass the driver's on):
     * {@code 08...} (connection exception) and {@code 57P0x} (the server is starting or stopping) are unreachable,
     * any other (a refused login {@code 28000}, a missing right {@code 42501}, ...) is a refusal. Without one, a
     * connection or socket exception is unreachable.
     */
    static boolean unreachable(@Nullable Throwable e) {
        boolean connectionTrouble = false;
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException) {
                String state = ((SQLException) t).getSQLState();
                if (state != null) {
                    return state.startsWith("08") || state.startsWith(SERVER_NOT_READY);
                }
            }
            connectionTrouble |= t instanceof SQLTransientConnectionException
                    || t instanceof SQLNonTransientConnectionException
                    || t instanceof SQLTimeoutException
                    || t instanceof SocketException
                    || t instanceof SocketTimeoutException;
        }
        return connectionTrouble;
    }

    /**
     * Whether {@code e}'s SQLSTATE is one of {@code states}: false for one without an SQLSTATE (a pool's own failure
     * may have none), which a set made by {@code Set.of} would refuse to look up.
     */
    static boolean stateIn(SQLException e, Set<String> states) {
        String state = e.getSQLState();
        return state != null && states.contains(state);
    }

    private static boolean isMissingSchema(SQLException e) {
        return UNDEFINED_FUNCTION.equals(e.getSQLState()) || UNDEFINED_TABLE.equals(e.getSQLState());
    }
}
