package dev.sluice.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.spi.StoreConnection;
import dev.sluice.spi.StoreProvider;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * Opens {@code postgresql://user:password@host:port/database?options} (or {@code postgres://…}) as a HikariCP pool for
 * {@link dev.sluice.assembly.StoreAssembly}; found through {@link java.util.ServiceLoader}, not called directly. Needs
 * HikariCP on the path (an optional dependency of this module); the options are the PostgreSQL JDBC driver's.
 */
public final class PostgresStoreProvider implements StoreProvider {

    /** For {@link java.util.ServiceLoader}. */
    public PostgresStoreProvider() {}

    @Override
    public Set<String> schemes() {
        return Set.of("postgresql", "postgres");
    }

    @Override
    public StoreConnection connect(String uri) {
        try {
            Class.forName("com.zaxxer.hikari.HikariDataSource", false, PostgresStoreProvider.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalArgumentException(
                    "a postgresql:// store URI needs HikariCP (com.zaxxer:HikariCP) on the class path", e);
        }
        return Pool.open(uri);
    }

    /** What touches HikariCP, so that the provider loads without it. */
    static final class Pool {
        private Pool() {}

        static StoreConnection open(String uri) {
            HikariDataSource pool = new HikariDataSource(config(uri));
            return PostgresStore.connection(pool, pool);
        }

        /** A pool for {@code postgresql://user:password@host:port/database?options}. */
        static HikariConfig config(String uri) {
            URI u;
            try {
                u = new URI(uri);
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("expected postgresql://user:password@host:port/database", e);
            }
            String host = u.getHost();
            String path = u.getRawPath();
            if (host == null || path == null || path.length() < 2) {
                throw new IllegalArgumentException("expected postgresql://user:password@host:port/database");
            }
            HikariConfig c = new HikariConfig();
            c.setJdbcUrl("jdbc:postgresql://" + host + ":" + (u.getPort() < 0 ? 5432 : u.getPort()) + path
                    + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery()));
            String info = u.getRawUserInfo();
            if (info != null) {
                int colon = info.indexOf(':');
                c.setUsername(decode(colon < 0 ? info : info.substring(0, colon)));
                if (colon >= 0) {
                    c.setPassword(decode(info.substring(colon + 1)));
                }
            }
            c.setPoolName("sluice");
            c.setMaximumPoolSize(16);
            c.setConnectionTimeout(250); // HikariCP's least; a decision is bounded by the store timeout besides
            c.setInitializationFailTimeout(-1); // start while the database is down; the store waits and reconnects
            return c;
        }

        private static String decode(String s) {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        }
    }
}
