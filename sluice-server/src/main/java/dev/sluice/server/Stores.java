package dev.sluice.server;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.lease.LeasedStore;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.mongodb.MongoStore;
import dev.sluice.postgres.PostgresStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterStoreBuilder;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.sync.SynchronizedStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The store a {@code --store} URI names, opened: {@code memory:}; {@code redis://} (and {@code rediss://}) or
 * {@code redis-cluster://host:port[,host:port…]}; {@code postgresql://user:password@host:port/database} (a HikariCP
 * pool); {@code mongodb://…/database}. In exact mode each decision is one call to the store, bounded by the store
 * timeout; with a sync interval the store keeps the counters of a {@link SynchronizedStore}, which decides from memory
 * and flushes every interval; with a lease interval those of a {@link LeasedStore}, which decides from memory within
 * slices it claims from the store (a claim on a request's thread bounded by the store timeout) and runs a round every
 * interval.
 */
final class Stores {
    /** Connections the MongoDB pool keeps open, unless the URI sets {@code minPoolSize}. */
    static final int MONGO_MIN_POOL = 2;
    /** How often the MongoDB pool refills itself to its minimum, in milliseconds. */
    static final long MONGO_MAINTENANCE_MILLIS = 100;

    private Stores() {}

    /**
     * An open store and how to close it and its clients.
     *
     * @param waits whether a decision may wait for the store: in exact mode every decision calls it, in leased mode a
     *              request that its slice does not cover claims on its own thread; the in-memory store and
     *              synchronized mode decide from memory only
     */
    record Opened(RateLimitStore store, String description, boolean waits, AutoCloseable closer) {
        void close() {
            try {
                closer.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing " + description + " failed: " + e, e);
            }
        }
    }

    /**
     * How the service shares its limits on a shared store.
     *
     * @param interval the flush interval of synchronized mode, the round's of leased mode; null in exact mode
     */
    record Sharing(Mode mode, @Nullable Duration interval) {
        static final Sharing EXACT = new Sharing(Mode.EXACT, null);

        /**
         * The sharing that {@code --sync-interval} and {@code --lease-interval} ask for (each null when not given):
         * exact mode when neither is.
         *
         * @throws UsageException if both are given
         */
        static Sharing of(@Nullable Duration syncInterval, @Nullable Duration leaseInterval) {
            if (syncInterval != null && leaseInterval != null) {
                throw new UsageException("serve: give --sync-interval (synchronized mode) or --lease-interval (leased"
                        + " mode), not both");
            }
            return syncInterval != null
                    ? new Sharing(Mode.SYNCHRONIZED, syncInterval)
                    : leaseInterval != null ? new Sharing(Mode.LEASED, leaseInterval) : EXACT;
        }
    }

    /** Exact mode, synchronized mode ({@code --sync-interval}) or leased mode ({@code --lease-interval}). */
    enum Mode {
        EXACT(""),
        SYNCHRONIZED("--sync-interval"),
        LEASED("--lease-interval");

        final String option;

        Mode(String option) {
            this.option = option;
        }
    }

    /**
     * Opens the store of {@code uri}.
     *
     * @param memoryMaxKeys the in-memory store's bound on keys per limit ({@link InMemoryStore.Builder#maximumKeys})
     * @throws UsageException if the URI names no store this service knows, or is malformed, or names the in-memory
     *                        store with a sharing other than exact
     */
    static Opened open(String uri, Sharing sharing, Duration timeout, int memoryMaxKeys) {
        String scheme = uri.contains(":") ? uri.substring(0, uri.indexOf(':')) : uri;
        switch (scheme) {
            case "memory" -> {
                if (sharing.mode() != Mode.EXACT) {
                    throw new UsageException("serve: " + sharing.mode().option + " needs a shared store, not " + uri);
                }
                InMemoryStore memory =
                        InMemoryStore.builder().maximumKeys(memoryMaxKeys).build();
                return new Opened(memory, "memory:", false, () -> {});
            }
            case "redis", "rediss" -> {
                RedisClient client = RedisClient.create(redisUri(uri));
                return opened(
                        uri,
                        sharing,
                        timeout,
                        () -> RedisStore.builder(client).timeout(timeout).build(),
                        () -> RedisStore.counterStoreBuilder(client),
                        client::shutdown);
            }
            case "redis-cluster" -> {
                List<RedisURI> nodes = new ArrayList<>();
                for (String node : uri.substring("redis-cluster://".length()).split(",", -1)) {
                    nodes.add(redisUri("redis://" + node));
                }
                RedisClusterClient client = RedisClusterClient.create(nodes);
                client.setOptions(RedisStore.recommendedClusterClientOptions());
                return opened(
                        uri,
                        sharing,
                        timeout,
                        () -> RedisStore.builder(client).timeout(timeout).build(),
                        () -> RedisStore.counterStoreBuilder(client),
                        client::shutdown);
            }
            case "postgresql", "postgres" -> {
                HikariDataSource pool = new HikariDataSource(hikari(uri));
                return opened(
                        uri,
                        sharing,
                        timeout,
                        () -> PostgresStore.builder(pool).timeout(timeout).build(),
                        () -> PostgresStore.counterStoreBuilder(pool),
                        pool);
            }
            case "mongodb", "mongodb+srv" -> {
                ConnectionString cs;
                try {
                    cs = new ConnectionString(uri);
                } catch (IllegalArgumentException e) {
                    throw bad(uri, String.valueOf(e.getMessage()));
                }
                String database = cs.getDatabase();
                if (database == null || database.isEmpty()) {
                    throw bad(uri, "name the database: mongodb://host:port/database");
                }
                MongoClient client = MongoClients.create(mongoSettings(cs));
                return opened(
                        uri,
                        sharing,
                        timeout,
                        () -> MongoStore.builder(client, database)
                                .timeout(timeout)
                                .build(),
                        () -> MongoStore.counterStoreBuilder(client, database),
                        client);
            }
            default -> throw bad(
                    uri,
                    "expected memory:, redis://…, redis-cluster://…, postgresql://user:password@host:port/database"
                            + " or mongodb://host:port/database");
        }
    }

    private interface Build<T> {
        T build();
    }

    private static Opened opened(
            String uri,
            Sharing sharing,
            Duration timeout,
            Build<RateLimitStore> exact,
            Build<? extends CounterStoreBuilder<?>> counters,
            AutoCloseable client) {
        String shown = redact(uri);
        try {
            switch (sharing.mode()) {
                case EXACT -> {
                    RateLimitStore store = exact.build();
                    return new Opened(store, shown, true, inOrder(store, client));
                }
                case SYNCHRONIZED -> {
                    Duration interval = Objects.requireNonNull(sharing.interval(), "synchronized mode has one");
                    CounterStore counterStore = counters.build().build(); // flushes off the request path
                    SynchronizedStore store = SynchronizedStore.builder(counterStore)
                            .flushInterval(interval)
                            .build();
                    String how = " (synchronized every " + interval.toMillis() + "ms)";
                    // the store first: it flushes what this instance admitted since the last flush
                    return new Opened(store, shown + how, false, inOrder(store, counterStore, client));
                }
                case LEASED -> {
                    Duration interval = Objects.requireNonNull(sharing.interval(), "leased mode has one");
                    // a claim runs on the request's thread: the store timeout bounds it, and a request the slice held
                    // cannot cover while the store fails is the domain's on_store_failure to answer (the policy
                    // limiter answers every failed decision by it)
                    CounterStore counterStore =
                            counters.build().timeout(timeout).build();
                    LeasedStore store = LeasedStore.builder(counterStore)
                            .refreshInterval(interval)
                            .build();
                    String how = " (leased, a round every " + interval.toMillis() + "ms)";
                    // the store first: it gives back the unused part of every slice held
                    return new Opened(store, shown + how, true, inOrder(store, counterStore, client));
                }
                default -> throw new IllegalStateException("unknown mode " + sharing.mode());
            }
        } catch (RuntimeException e) {
            try {
                client.close();
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * The client's settings from the URI, with a pool that keeps {@value #MONGO_MIN_POOL} connections open unless the
     * URI says how many ({@code minPoolSize}), refilled every {@value #MONGO_MAINTENANCE_MILLIS} ms. Each decision
     * gets the store timeout (15 ms by default), too short for the driver to open a connection under load; after an
     * outage the driver empties its pool, and without connections opened in the background every call would try to
     * open one within its own few milliseconds and give up, so the service could stay on its failure policy long
     * after MongoDB is back.
     */
    static MongoClientSettings mongoSettings(ConnectionString cs) {
        return MongoClientSettings.builder()
                .applyConnectionString(cs)
                .applyToConnectionPoolSettings(pool -> {
                    if (cs.getMinConnectionPoolSize() == null) {
                        pool.minSize(MONGO_MIN_POOL);
                    }
                    pool.maintenanceInitialDelay(0, TimeUnit.MILLISECONDS)
                            .maintenanceFrequency(MONGO_MAINTENANCE_MILLIS, TimeUnit.MILLISECONDS);
                })
                .build();
    }

    /** Closes each of {@code parts} that is closeable, in their order: a store before what it writes through. */
    private static AutoCloseable inOrder(Object... parts) {
        return () -> {
            for (Object o : parts) {
                if (o instanceof AutoCloseable c) {
                    c.close();
                }
            }
        };
    }

    private static RedisURI redisUri(String uri) {
        try {
            return RedisURI.create(uri);
        } catch (IllegalArgumentException e) {
            throw bad(uri, String.valueOf(e.getMessage()));
        }
    }

    /** A pool for {@code postgresql://user:password@host:port/database?options}. */
    static HikariConfig hikari(String uri) {
        URI u;
        try {
            u = new URI(uri);
        } catch (java.net.URISyntaxException e) {
            throw bad(uri, String.valueOf(e.getMessage()));
        }
        String host = u.getHost();
        String path = u.getRawPath();
        if (host == null || path == null || path.length() < 2) {
            throw bad(uri, "expected postgresql://user:password@host:port/database");
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
        c.setPoolName("sluice-server");
        c.setMaximumPoolSize(16);
        c.setConnectionTimeout(250); // HikariCP's least; a decision is bounded by the store timeout besides
        c.setInitializationFailTimeout(-1); // start while the database is down; the store waits and reconnects
        return c;
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    /** The URI without its password, for logs. */
    static String redact(String uri) {
        return uri.replaceAll("//([^:/@]*):[^@/]*@", "//$1:***@");
    }

    private static UsageException bad(String uri, String why) {
        return new UsageException("serve: --store '" + redact(uri) + "' is not valid: " + why);
    }
}
