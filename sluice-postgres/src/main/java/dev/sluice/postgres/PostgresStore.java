package dev.sluice.postgres;

import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.spi.AtomicDecider;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.Durations;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.SharedJoint;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.spi.SharedStoreBuilder;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.spi.StoreConnection;
import dev.sluice.spi.WarmUp;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A store that keeps every limiter's per-key state in one PostgreSQL table, shared by every service instance that
 * uses the same database: exact mode, every decision atomic on the database, concurrent ones sharing round trips.
 *
 * <pre>{@code
 * HikariConfig pool = new HikariConfig();                    // a pooling DataSource, every wait bounded
 * pool.setJdbcUrl("jdbc:postgresql://db:5432/app?user=app&connectTimeout=1&loginTimeout=1");
 * pool.setConnectionTimeout(250);                            // borrowing: at most the store's timeout
 * pool.setInitializationFailTimeout(-1);                     // no failing here: build() waits for the database
 * DataSource dataSource = new HikariDataSource(pool);
 * RateLimitStore store = PostgresStore.builder(dataSource)
 *         .timeout(Duration.ofMillis(250))
 *         .failurePolicy(FailurePolicy.FAIL_OPEN)
 *         .build();          // waits up to 10 s for the database; creates the table and functions if missing
 * RateLimiter limiter = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
 *         .limit(100, Duration.ofMinutes(1))
 *         .store(store)
 *         .build();
 * }</pre>
 *
 * <ul>
 *   <li><b>Atomic.</b> Each decision, peek or cancellation is decided by a PL/pgSQL function inside one
 *       transaction that reads, decides and writes the key's row under its row lock. Every algorithm answers
 *       exactly as the in-memory store does, to the nanosecond; there is no client-side read-modify-write. A joint
 *       request ({@link RateLimiter#tryAcquireAll}) over limiters of one store is all or nothing, its rows locked in
 *       one order (see {@code PostgresJoint}).</li>
 *   <li><b>Batched.</b> Consuming decisions, single and joint, of every limiter of the store share calls (group
 *       commit): one that finds no call in flight goes at once, alone; those that arrive meanwhile go together in the
 *       next call, one statement that decides them one after the other in the order they came, each exactly as alone.
 *       Under load, many decisions cost one round trip and one commit. A {@code peek} or a cancellation is a call of
 *       its own.</li>
 *   <li><b>Time.</b> By default ({@link dev.sluice.TimeSource#STORE}) the database's {@code clock_timestamp()} times
 *       each decision, so instances whose clocks disagree still share one time line; with
 *       {@link dev.sluice.TimeSource#CLOCK} the limiter's {@link java.time.Clock} does.</li>
 *   <li><b>Keys.</b> A row is found by the SHA-256 of (namespace, state shape, key): any characters, any length. The
 *       key itself is kept in a column for reading.</li>
 *   <li><b>Expiry.</b> Each row carries the time from which it may be deleted: one window after it decides as a
 *       missing row would. Every new row deletes the expired rows among the few that follow it in key order, so idle
 *       keys do not pile up. Nothing runs in the background.</li>
 *   <li><b>Failures.</b> Each decision is bounded by {@link Builder#timeout(Duration)}: its caller waits no longer,
 *       and each call is bounded by the socket read timeout ({@link java.sql.Connection#setNetworkTimeout}) and the
 *       server's {@code lock_timeout}. A failure or timeout goes to the {@link dev.sluice.FailurePolicy}; a driver
 *       exception never reaches the caller. A consuming decision answered by the failure policy is never applied
 *       afterwards: one still waiting for its batch is dropped unsent, and the database refuses one that reaches it
 *       past its deadline by the database's clock (a stalled server). The store
 *       keeps no connection of its own: each call borrows one from the {@link DataSource} and returns it, so when the
 *       database comes back the next call works again ({@code PostgresRecoveryTest}; HikariCP retries opening
 *       connections for waiting callers, pausing at most its connection timeout, and drops a broken connection at
 *       its validation or its first failed call).</li>
 *   <li><b>New connections.</b> A connection the store has not used before reaches a new server process, whose first
 *       call of each PL/pgSQL function compiles it, slower than a short timeout. So before such a connection serves
 *       a call, the store runs a {@code peek} of every algorithm on it (writing nothing) with a timeout of
 *       5 s or the store's, if longer; a call whose time that took fails without being made. Each connection is
 *       warmed once, as long as the pool keeps it.</li>
 *   <li><b>Start-up.</b> {@link Builder#build()} waits up to the {@link Builder#startupTimeout startup timeout}
 *       (default 10 s) for the database to answer (the schema check is that answer), so a new process's first
 *       decisions are not failure policy answers to a connection still being made; a database that cannot be
 *       reached in time gives a store all the same, and a warning, while a refusal (a login or right refused) throws.
 *       </li>
 *   <li><b>Closing.</b> The DataSource is the caller's: the store never closes it. A call to a closed DataSource
 *       throws an {@link IllegalStateException} saying so, which the limiter passes to its caller instead of the
 *       failure policy, if the DataSource can tell: it has a public {@code boolean isClosed()} (HikariCP's
 *       {@code HikariDataSource}, Commons DBCP 2's {@code BasicDataSource}) that answers {@code true} once its
 *       {@code getConnection()} has failed. {@link DataSource} itself has no such method and a closed pool's
 *       exception has no standard SQLSTATE (HikariCP's has none), so with another DataSource a closed pool looks like
 *       an outage and goes to the failure policy.</li>
 * </ul>
 *
 * <p><b>What the DataSource must do.</b> Pooling is the DataSource's: give a pool, or each call opens a connection.
 * The store cannot interrupt {@link DataSource#getConnection()}, so the pool must bound it: a connection timeout at
 * most the store's timeout (HikariCP {@code connectionTimeout}, at least 250 ms there), and the driver's
 * {@code connectTimeout} and {@code loginTimeout} for new connections. {@code build()} logs a warning when the
 * DataSource says it waits longer than that (a public {@code long getConnectionTimeout()}, as HikariCP's: its default
 * of 30 s would make every call wait 30 s while the database is down). Connections in auto-commit mode are used
 * as they are; otherwise each call commits (or rolls back) its own transaction.
 *
 * <p><b>Synchronized mode.</b> {@link #counterStoreBuilder(DataSource)} builds the {@link CounterStore} of a
 * {@link dev.sluice.sync.SynchronizedStore}: records of counts per frame in a table of their own, read and written in
 * batches, one statement per batch.
 *
 * <p>Immutable and thread-safe; limiters bound to one store share nothing but the DataSource.
 */
public final class PostgresStore implements RateLimitStore {

    /*
     * How a decision runs, and why.
     *
     * A decision on its own (a peek; the decisions of a batch are decided alike on rows the batch has locked, see
     * PostgresBatches) is "SELECT * FROM sluice_limit_decide('tb', id, ..., cost, consume, now, ...)". The function (in
     * common.sql: the one lock-and-write loop of every algorithm, which runs the algorithm's state machine from its
     * own script through sluice_limit_step) reads the key's row without a lock and decides. If the answer writes nothing (a peek, or a rejection that is not
     * counted), it returns at once: the answer is the one at its snapshot, and a crowd rejected on a hot key never
     * queues for the row lock. Otherwise it reads the row again FOR NO KEY UPDATE, which at READ COMMITTED waits for
     * any concurrent writer and then sees its committed version, decides on that, and writes the row back (or inserts
     * a new one; a lost insert race is decided again on the winner's row). The read-decide-write is thus serialized
     * per key by the row lock, inside one statement: no update is lost, and different keys never wait for each other.
     *
     * Example: a token bucket of 3 per 60 s, drained at 12:00:00, two instances A and B. At 12:00:20 both send a
     * request. Both read tokens = 0, frac = 0, last = 12:00:00 and both see one token refilled, so both want to
     * write; A locks first, refills to 1 token, takes it (tokens 0, last 12:00:20) and commits; B's locked read then
     * returns A's version, refills nothing (no time has passed since 12:00:20) and rejects, retry after 20 s. One
     * admitted, as on one machine.
     *
     * State is exact: token fractions, GCRA's fractional nanosecond, log entries merged per instant or sub-window, as
     * in dev.sluice.algorithm, with numeric for products that overflow 64 bits. The contract suite in sluice-testkit
     * compares every answer with the in-memory store, request by request.
     *
     * Rows expire without a background job: a new row deletes the expired rows among the four that follow it by id
     * (SKIP LOCKED, so it never waits). Ids are uniform digests, so these are four random rows; in a steady state
     * where keys come and go, about a quarter of the table is expired rows, whatever its size, and no index on
     * expires_at slows every update. A decision never depends on whether an expired row is still there. A row
     * expires one window after its state is idle: a key that comes back within that window is an update, not a
     * delete and an insert (a token bucket far from its limit is idle again microseconds after each request).
     */

    /** The default {@link Builder#table(String)}. */
    public static final String DEFAULT_TABLE = "sluice_limit";
    /** The default {@link CounterStoreBuilder#table(String)}: the default namespace's. */
    public static final String DEFAULT_COUNTER_TABLE = "sluice_counter";

    private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,39}");

    private final DataSource dataSource;
    private final SharedStoreOptions options;
    private final Schema schema;
    private final boolean createSchema;
    private final boolean synchronousCommit;
    private final SharedJoint joint; // one for every limiter bound here, so their joint requests meet
    private final Calls.Warmer warmer; // each new connection's first calls: a peek of every algorithm's function
    private final PostgresBatches batches; // every consuming decision of every limiter bound here

    private PostgresStore(Builder b, SharedStoreOptions options) {
        this.dataSource = b.dataSource;
        this.options = options;
        this.schema = Schema.limits(b.schemaName, b.table);
        this.createSchema = b.createSchema;
        this.synchronousCommit = b.synchronousCommit;
        this.batches = new PostgresBatches(this);
        this.joint = new SharedJoint(new PostgresJoint(this), options);
        List<PostgresDecider> peeks = new ArrayList<>();
        for (LimiterConfig config : WarmUp.configs()) {
            peeks.add(new PostgresDecider(this, config));
        }
        this.warmer = new Calls.Warmer(options.timeout(), c -> {
            for (PostgresDecider peek : peeks) {
                peek.decide(c, WarmUp.KEY, 1, false, AtomicDecider.STORE_TIME);
            }
            batches.warm(c);
        });
    }

    /**
     * A builder for a store on {@code dataSource}, which should pool connections and bound the time to get one (see
     * the class comment).
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(Objects.requireNonNull(dataSource, "dataSource must not be null"));
    }

    /**
     * A builder for the counter store of synchronized mode on {@code dataSource}, which should pool connections and
     * bound the time to get one (see the class comment):
     *
     * <pre>{@code
     * CounterStore counters = PostgresStore.counterStoreBuilder(dataSource).build();  // creates its table if missing
     * SynchronizedStore sync = SynchronizedStore.builder(counters).build();
     * RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
     *         .limit(100, Duration.ofMinutes(1))
     *         .store(sync)
     *         .build();
     * }</pre>
     */
    public static CounterStoreBuilder counterStoreBuilder(DataSource dataSource) {
        return new CounterStoreBuilder(Objects.requireNonNull(dataSource, "dataSource must not be null"));
    }

    /**
     * {@code dataSource} as a {@link StoreConnection}, for {@link dev.sluice.assembly.StoreAssembly} to build the store
     * of a mode on; closing the connection leaves the data source open.
     */
    public static StoreConnection connection(DataSource dataSource) {
        return connection(dataSource, () -> {});
    }

    static StoreConnection connection(DataSource dataSource, AutoCloseable closer) {
        return StoreConnection.of(
                (timeout, overLimitCache) -> {
                    Builder b = builder(dataSource).overLimitCache(overLimitCache);
                    return (timeout == null ? b : b.timeout(timeout)).build();
                },
                () -> counterStoreBuilder(dataSource),
                closer);
    }

    /**
     * A limiter with {@code config} whose state lives in this store's table. Creates nothing on the database; the
     * limiter is a {@link SharedRateLimiter}.
     */
    @Override
    public RateLimiter bind(LimiterConfig config) {
        Objects.requireNonNull(config, "config must not be null");
        return SharedRateLimiter.create(config, new PostgresDecider(this, config), options, joint);
    }

    /** The options every limiter of this store decides with. */
    public SharedStoreOptions options() {
        return options;
    }

    /** The table that holds the state, schema-qualified if a schema was given. */
    public String table() {
        return schema.table();
    }

    DataSource dataSource() {
        return dataSource;
    }

    Schema schema() {
        return schema;
    }

    boolean createsSchema() {
        return createSchema;
    }

    /**
     * Runs {@code body} as one call of this store (see {@link Calls#run}).
     *
     * @throws SQLException     if the database fails, refuses or times out
     * @throws RuntimeException if {@code body} or the DataSource throws one
     */
    <T> T call(Calls.Body<T> body) throws SQLException {
        return Calls.run(dataSource, schema, createSchema, options.timeout(), options.listener(), warmer, body);
    }

    /**
     * Runs {@code body} as one call of this store by {@code deadlineNanos}, a {@link System#nanoTime()} value.
     *
     * @throws SQLException     if the database fails, refuses or times out
     * @throws RuntimeException if {@code body} or the DataSource throws one
     */
    <T> T call(long deadlineNanos, Calls.Body<T> body) throws SQLException {
        return Calls.run(
                dataSource, schema, createSchema, options.timeout(), options.listener(), warmer, deadlineNanos, body);
    }

    /** The batches every consuming decision of this store goes in. */
    PostgresBatches batches() {
        return batches;
    }

    boolean synchronousCommit() {
        return synchronousCommit;
    }

    @Override
    public String toString() {
        return "PostgresStore[" + schema.table() + ", namespace=" + options.namespace() + ", " + options.timeSource()
                + ", " + options.failurePolicy() + ", timeout=" + Durations.format(options.timeout()) + "]";
    }

    /** Builds a {@link PostgresStore}. Not thread-safe; setters validate at once. */
    public static final class Builder extends SharedStoreBuilder<Builder> {

        private final DataSource dataSource;
        private String table = DEFAULT_TABLE;
        private @Nullable String schemaName; // null: the search_path
        private boolean createSchema = true;
        private boolean synchronousCommit;

        private Builder(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        /**
         * The table that holds the state; default {@value PostgresStore#DEFAULT_TABLE}. Its functions are named after
         * it ({@code <table>_decide}, {@code <table>_step_tb}, ...). A lower-case SQL identifier of at most 40 characters.
         */
        public Builder table(String table) {
            this.table = identifier("table", table);
            return this;
        }

        /** The schema of the table and functions; default none, that is the connection's {@code search_path}. */
        public Builder schema(String schema) {
            this.schemaName = identifier("schema", schema);
            return this;
        }

        /**
         * Whether {@link #build()} creates the table and functions when they are missing or out of date, and a call
         * that finds them missing (a database restored without them) creates them again; default {@code true}. Needs
         * the right to create in the schema. Without it, run {@link #schemaScript()} beforehand, e.g. in a migration.
         */
        public Builder createSchema(boolean createSchema) {
            this.createSchema = createSchema;
            return this;
        }

        /**
         * Whether each decision's commit waits for its WAL record to reach disk (and synchronous standbys); default
         * {@code false}. Rate-limit state is short-lived: an asynchronous commit is still atomic and crash-consistent,
         * and loses at most the last fraction of a second of decisions if the server crashes, for a commit that costs
         * no disk flush. Set {@code true} to use the server's {@code synchronous_commit} as it is.
         */
        public Builder synchronousCommit(boolean synchronousCommit) {
            this.synchronousCommit = synchronousCommit;
            return this;
        }

        /** The SQL script that creates this store's table and functions: idempotent, for running by hand. */
        public String schemaScript() {
            return Schema.limits(schemaName, table).script();
        }

        /**
         * Builds the store. First waits up to the {@link #startupTimeout startup timeout} (default 10 s) for the
         * database to answer, trying every 100 ms while it cannot be reached: with {@link #createSchema(boolean)} (the
         * default) by creating the table and functions if missing or out of date (one catalog read when they are
         * up to date), else by a {@code SELECT 1}. Then, within the same bound, it makes the store's first calls itself
         * ({@link WarmUp}: a {@code peek} and a consuming decision through the batches of every algorithm, from several
         * threads, on a key under a namespace of the warm-up's own, which also has the DataSource open several
         * connections). So a new process's first decisions find the database
         * reached, the schema in place and the pool open, instead of being answered by the failure policy. Without
         * {@code createSchema}, a table and functions that are missing (or not this version's) are logged once and
         * no warm-up is made, since none of its calls could succeed.
         *
         * <p>If the database cannot be reached in time, the store is built all the same and one warning is logged
         * ({@link System.Logger} {@code dev.sluice.postgres.PostgresStore}). Until the DataSource connects, each call
         * is answered by the failure policy within the store's {@link #timeout timeout}; the first call that reaches
         * the database then checks (and if needed creates) the table and functions before it decides, within the
         * same timeout. With a startup timeout of zero the builder sends nothing and leaves that check to the first
         * call. A wait for a connection that the DataSource does not bound (see the class comment) can make the
         * build last longer than the startup timeout.
         *
         * @throws SluiceException       if the database answers with a refusal: creating the schema is not allowed,
         *                               the login is refused, ...
         * @throws IllegalStateException if the DataSource has been closed
         */
        public PostgresStore build() {
            long start = System.nanoTime();
            PostgresStore store = new PostgresStore(this, options());
            Calls.checkBorrowTimeout(dataSource, timeout(), "store");
            if (Calls.awaitDatabase(
                            dataSource, store.schema, createSchema, startupTimeout(), "exact-mode store's first call")
                    && (createSchema
                            || Calls.schemaInPlace(
                                    dataSource,
                                    store.schema,
                                    Math.max(1_000_000, startupTimeout().toNanos() - (System.nanoTime() - start))))) {
                WarmUp.run(
                        startupTimeout().minusNanos(System.nanoTime() - start),
                        WarmUp.calls(config ->
                                new PostgresDecider(store, config, WarmUp.namespace(store.options.namespace()))));
            }
            return store;
        }
    }

    private static String identifier(String what, String name) {
        Objects.requireNonNull(name, what + " must not be null");
        if (!IDENTIFIER.matcher(name).matches()) {
            throw new IllegalArgumentException(what + " must be a lower-case SQL identifier ([a-z_][a-z0-9_]*, at"
                    + " most 40 characters), was '" + name + "'");
        }
        return name;
    }

    /**
     * Builds the {@link CounterStore} of synchronized mode ({@link dev.sluice.sync.SynchronizedStore}) on PostgreSQL.
     * Not thread-safe; setters validate at once.
     *
     * <ul>
     *   <li><b>Records.</b> One row per counter key (shape and key) in one table: the SHA-256 of the shape and the key
     *       as the primary key (any characters, any length), the shape and the key for reading, a {@code version},
     *       the counts as two {@code bigint[]} (frame starts in nanoseconds and their counts: exact), and an
     *       {@code expires_at}.</li>
     *   <li><b>One round trip per batch.</b> {@link CounterStore#load} is one {@code SELECT ... WHERE id = ANY(?)};
     *       {@link CounterStore#compareAndSet} is one call of one function that writes the whole batch with set-based
     *       statements, atomically: all of a batch's applied writes commit together. Of two instances writing the
     *       same version of a record at once, exactly one is applied; concurrent batches never deadlock (rows are
     *       locked in id order).</li>
     *   <li><b>Expiry.</b> Each new record deletes the records among the four that follow it in id order whose
     *       {@code expires_at} passed over a minute ago by the database's clock (the minute covers a database clock
     *       ahead of the instances'), as the exact-mode store's rows are swept: nothing runs in the background, and
     *       idle keys do not pile up. A record is read as it is until its row is deleted.</li>
     *   <li><b>Failures.</b> Each call is bounded by {@link #timeout(Duration)} (the socket read timeout of the call,
     *       and four fifths of it as the server's {@code lock_timeout}) and throws a {@link SluiceException} wrapping
     *       the driver's; the synchronized store keeps the counts and writes them when the database answers again. A
     *       write that PostgreSQL rolled back (deadlock, lock timeout) answers "not applied" instead, since nothing of
     *       it was written. Commits use the server's {@code synchronous_commit}: a flush costs one commit per batch,
     *       and an acknowledged write is not lost by a server crash.</li>
     * </ul>
     */
    public static final class CounterStoreBuilder extends dev.sluice.spi.CounterStoreBuilder<CounterStoreBuilder> {

        private final DataSource dataSource;
        private @Nullable String table; // null: the namespace's
        private @Nullable String schemaName; // null: the search_path
        private boolean createSchema = true;

        private CounterStoreBuilder(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        /**
         * The table that holds the records; default {@code <namespace>_counter}, {@value
         * PostgresStore#DEFAULT_COUNTER_TABLE} for the default namespace. Its function is named after it
         * ({@code <table>_cas}). A lower-case SQL identifier of at most 40 characters.
         */
        public CounterStoreBuilder table(String table) {
            this.table = identifier("table", table);
            return this;
        }

        /** The schema of the table and function; default none, that is the connection's {@code search_path}. */
        public CounterStoreBuilder schema(String schema) {
            this.schemaName = identifier("schema", schema);
            return this;
        }

        /**
         * Whether {@link #build()} creates the table and function when they are missing or out of date, and a call
         * that finds them missing creates them again; default {@code true}. Without it, run {@link #schemaScript()}
         * beforehand, e.g. in a migration.
         */
        public CounterStoreBuilder createSchema(boolean createSchema) {
            this.createSchema = createSchema;
            return this;
        }

        /** The SQL script that creates this store's table and function: idempotent, for running by hand. */
        public String schemaScript() {
            return Schema.counters(schemaName, table()).script();
        }

        /** The table set, or the namespace's; checked here since the namespace is checked for every store alike. */
        private String table() {
            return table != null ? table : identifier("namespace + \"_counter\"", namespace() + "_counter");
        }

        /**
         * Builds the counter store, first waiting for the database as {@link Builder#build()} does: up to the
         * {@link #startupTimeout startup timeout} (default 10 s), creating the table and function if missing or out of
         * date with {@link #createSchema(boolean)} (the default), else running a {@code SELECT 1}. If the database
         * cannot be reached in time, the store is built all the same and one warning is logged ({@link System.Logger}
         * {@code dev.sluice.postgres.PostgresStore}); until the DataSource connects each call throws a
         * {@link SluiceException} (the synchronized store keeps its counts meanwhile), and the first call that reaches
         * the database checks the table and function first.
         *
         * @throws SluiceException          if the database answers with a refusal (creating the schema is not
         *                                  allowed, the login is refused, ...)
         * @throws IllegalStateException    if the DataSource has been closed
         * @throws IllegalArgumentException if no table is set and the namespace does not make a table name
         */
        @Override
        public CounterStore build() {
            Schema schema = Schema.counters(schemaName, table());
            Calls.checkBorrowTimeout(dataSource, timeout(), "counter store");
            Calls.awaitDatabase(dataSource, schema, createSchema, startupTimeout(), "counter store's first call");
            return new PostgresCounterStore(dataSource, schema, createSchema, timeout(), listener());
        }
    }
}
