package dev.sluice.postgres;

import dev.sluice.SluiceException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The table and functions of one store: names, the script that creates them, and its installation. The installed
 * version is the digest of the script, kept as the table's comment, so a store built against an up-to-date schema
 * only reads one catalog row. Thread-safe; immutable but for whether this process has seen the schema installed.
 */
final class Schema {

    /**
     * The script of the exact-mode store's table and functions: the common part (the table, the helpers, the
     * lock-and-write loops), then each algorithm's state machine, as the Redis store's scripts are laid out.
     */
    private static final String LIMITS = load("common.sql")
            + load("fixed_window.sql")
            + load("sliding_tail.sql")
            + load("token_bucket.sql")
            + load("leaky_bucket.sql")
            + load("expiring_log.sql");
    /** The script of the synchronized-mode counter store's table and function. */
    private static final String COUNTERS = load("sluice-postgres-counters.sql");

    private final String table; // qualified
    private final String prefix; // of every function name, qualified
    private final String script;
    private final String version;
    private volatile boolean knownInstalled; // seen installed (or installed) by this object's install()

    private Schema(String template, @Nullable String schemaName, String tableName) {
        String qualifier = schemaName == null ? "" : schemaName + ".";
        this.table = qualifier + tableName;
        this.prefix = qualifier + tableName;
        this.script = template.replace("{{table}}", table).replace("{{fn}}", prefix);
        this.version = "sluice-postgres " + sha256Hex(script).substring(0, 16);
    }

    /** The exact-mode store's table {@code tableName} in {@code schemaName} (null: the search path). */
    static Schema limits(@Nullable String schemaName, String tableName) {
        return new Schema(LIMITS, schemaName, tableName);
    }

    /** The counter store's table {@code tableName} in {@code schemaName} (null: the search path). */
    static Schema counters(@Nullable String schemaName, String tableName) {
        return new Schema(COUNTERS, schemaName, tableName);
    }

    String table() {
        return table;
    }

    /** Whether {@link #install} has found (or made) this version installed. */
    boolean knownInstalled() {
        return knownInstalled;
    }

    String script() {
        return script;
    }

    /** {@code SELECT ... FROM <prefix>_decide(...)}: the one statement of a decision. */
    String decideSql() {
        return "SELECT allowed, remaining, reset_after, retry_after, place FROM " + prefix + "_decide"
                + "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    }

    /** {@code SELECT ... FROM <prefix>_decide_batch(...)}: the one statement of a batch of consuming requests. */
    String decideBatchSql() {
        return "SELECT o_now, o_done, o_allowed, o_remaining, o_reset, o_retry, o_place FROM " + prefix
                + "_decide_batch(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    }

    /** {@code SELECT <prefix>_now()}: the store's clock, in nanoseconds since the epoch. */
    String nowSql() {
        return "SELECT " + prefix + "_now()";
    }

    /** {@code SELECT <prefix>_give_back(...)}: the one statement of a cancellation. */
    String giveBackSql() {
        return "SELECT " + prefix + "_give_back(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    }

    /** {@code SELECT ... WHERE id = ANY(?)}: the one statement that reads a batch of counter records. */
    String loadCountersSql() {
        return "SELECT id, version, frames, counts FROM " + table + " WHERE id = ANY(?)";
    }

    /** {@code SELECT <prefix>_cas(...)}: the one statement that writes a batch of counter records. */
    String casCountersSql() {
        return "SELECT " + prefix + "_cas(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    }

    /**
     * Creates the table and functions unless this version is installed. Concurrent installers (instances starting
     * together) serialize on a transaction-scoped advisory lock, so none sees another's half-made catalog.
     *
     * @param force        install even if the table says this version is installed (a function has gone missing)
     * @param timeoutNanos bound on each network read and on the wait for the lock
     * @throws SluiceException if the database fails or refuses
     */
    void install(DataSource dataSource, boolean force, long timeoutNanos) {
        int timeoutMillis = Calls.millis(timeoutNanos);
        try (Connection c = Calls.connect(dataSource, timeoutNanos)) {
            if (!force && installed(c)) {
                knownInstalled = true;
                return;
            }
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("SET LOCAL lock_timeout = " + timeoutMillis);
                try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?))")) {
                    lock.setString(1, "sluice-postgres " + table);
                    lock.execute();
                }
                if (force || !installed(c)) {
                    s.execute(script);
                    s.execute("COMMENT ON TABLE " + table + " IS '" + version + "'");
                }
                c.commit();
                knownInstalled = true;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            throw new SluiceException(
                    "cannot create the table " + table + " and its functions on PostgreSQL: " + e.getMessage(), e);
        }
    }

    boolean installed(Connection c) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT obj_description(to_regclass(?), 'pg_class')")) {
            s.setString(1, table);
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() && version.equals(rs.getString(1));
            }
        }
    }

    private static String load(String resource) {
        try (InputStream in = Schema.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + resource);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }

    private static String sha256Hex(String s) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    @Override
    public String toString() {
        return "Schema[" + table + ", " + version + "]";
    }
}
