package dev.sluice.spring.boot;

import com.mongodb.client.MongoClient;
import dev.sluice.assembly.StoreAssembly;
import dev.sluice.assembly.StoreMode;
import dev.sluice.assembly.StoreModeException;
import dev.sluice.lease.LeasedStore;
import dev.sluice.mongodb.MongoStore;
import dev.sluice.postgres.PostgresStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreConnection;
import dev.sluice.sync.SynchronizedStore;
import io.lettuce.core.RedisClient;
import java.util.Locale;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ConfigurationCondition;

/**
 * The store of {@code sluice.store.type} and {@code sluice.store.mode}, each shared store only with its module on the
 * class path, and all only when the application defines no {@link RateLimitStore} of its own. A shared store lets
 * every instance of the application count against the same limits.
 *
 * <p>The stores are assembled by the {@link StoreAssembly} the rate-limit service uses too, so a mode, its interval
 * and timeout mean the same in both. A shared store's configuration defines the {@link StoreConnection}: on
 * {@code sluice.store.uri} when it is set (opened, and closed with the context), else on the application's own client
 * ({@link RedisClient}, {@link DataSource}, {@link MongoClient}). {@link OnConnection} then defines, in exact mode
 * (the default), the {@link RateLimitStore}: every decision is one call to the store; in synchronized and leased mode
 * the {@link CounterStore}, and {@link Synchronized} or {@link Leased} the {@link RateLimitStore} that decides in
 * memory on it. The context closes the beans in the reverse order of their dependencies: the limiter, then the mode's
 * store (a synchronized store flushes, a leased store gives back the unused part of its slices), then the counter
 * store, then the connection.
 */
public final class SluiceStoreConfigurations {

    private static final System.Logger LOG = System.getLogger(SluiceStoreConfigurations.class.getName());

    private SluiceStoreConfigurations() {}

    /**
     * The assembly of {@code sluice.store.mode}, {@code .interval}, {@code .timeout}, {@code .over-limit-cache} and
     * the password given apart ({@code sluice.store.password}, {@code .password-file}).
     *
     * @throws IllegalStateException naming the property whose value the assembly refuses
     */
    static StoreAssembly assembly(SluiceProperties.Store p) {
        StoreAssembly.Builder b = StoreAssembly.builder().mode(mode(p.getMode()));
        try {
            if (p.getMode() != SluiceProperties.StoreMode.EXACT) {
                b.interval(p.getInterval());
            }
            b.timeout(p.getTimeout());
            b.overLimitCache(p.getOverLimitCache());
        } catch (IllegalArgumentException e) {
            // the message says it all, with the property's name; not chained, so it is the root cause shown
            throw new IllegalStateException("sluice.store." + e.getMessage());
        }
        String password = p.getPassword();
        return b.password(password == null || password.isEmpty() ? null : password)
                .passwordFile(p.getPasswordFile())
                .build();
    }

    /** Logs a warning when {@code sluice.store.over-limit-cache} is set where it has no effect. */
    private static void warnIfCacheUnused(SluiceProperties.Store p, boolean inMemory) {
        String why = StoreAssembly.unusedOverLimitCache(mode(p.getMode()), inMemory, p.getOverLimitCache());
        if (why != null) {
            LOG.log(System.Logger.Level.WARNING, "sluice.store.over-limit-cache has no effect " + why);
        }
    }

    private static StoreMode mode(SluiceProperties.StoreMode mode) {
        return StoreMode.valueOf(mode.name());
    }

    /** A connection on {@code sluice.store.uri}, or null when it is not set. */
    private static @Nullable StoreConnection onUri(SluiceProperties properties) {
        String uri = properties.getStore().getUri();
        return uri == null || uri.isEmpty()
                ? null
                : assembly(properties.getStore()).connect(uri);
    }

    /** Whether {@code sluice.store.mode} is {@code synchronized} or {@code leased}: the modes on a counter store. */
    public static final class OnCounterStoreMode extends AnyNestedCondition {

        OnCounterStoreMode() {
            super(ConfigurationCondition.ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnProperty(prefix = "sluice.store", name = "mode", havingValue = "synchronized")
        static final class SynchronizedMode {}

        @ConditionalOnProperty(prefix = "sluice.store", name = "mode", havingValue = "leased")
        static final class LeasedMode {}
    }

    /** {@code memory}, the default: counts in this instance only. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "sluice.store", name = "type", havingValue = "memory", matchIfMissing = true)
    public static class Memory {

        /** Created by Spring. */
        public Memory() {}

        /**
         * The in-memory store.
         *
         * @throws IllegalStateException if {@code sluice.store.mode} is not {@code exact}: the other modes share the
         *                               counts of a shared store
         */
        @Bean
        @ConditionalOnMissingBean
        public RateLimitStore sluiceRateLimitStore(SluiceProperties properties) {
            try {
                RateLimitStore store = assembly(properties.getStore()).memoryStore();
                warnIfCacheUnused(properties.getStore(), true);
                return store;
            } catch (StoreModeException e) {
                throw new IllegalStateException(
                        "sluice.store.mode=" + e.mode().name().toLowerCase(Locale.ROOT)
                                + " needs a shared store, and sluice.store.type is memory: set sluice.store.type to"
                                + " redis, postgresql or mongodb, or sluice.store.mode to exact");
            }
        }
    }

    /** {@code redis}: a Lettuce client on {@code sluice.store.uri}, or the application's {@link RedisClient}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.sluice.redis.RedisStore")
    @ConditionalOnProperty(prefix = "sluice.store", name = "type", havingValue = "redis")
    @ConditionalOnMissingBean(RateLimitStore.class)
    public static class Redis {

        /** Created by Spring. */
        public Redis() {}

        /** Redis on {@code sluice.store.uri}, or through the application's {@link RedisClient}. */
        @Bean
        @ConditionalOnMissingBean
        public StoreConnection sluiceStoreConnection(ObjectProvider<RedisClient> client, SluiceProperties properties) {
            StoreConnection c = onUri(properties);
            if (c != null) {
                return c;
            }
            RedisClient own = client.getIfAvailable();
            if (own == null) {
                throw new IllegalStateException(
                        "sluice.store.type=redis needs sluice.store.uri, e.g. redis://localhost:6379");
            }
            return RedisStore.connection(own);
        }
    }

    /** {@code postgresql}: {@code sluice.store.uri}, or the application's {@link DataSource} ({@code spring.datasource.*}). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.sluice.postgres.PostgresStore")
    @ConditionalOnProperty(prefix = "sluice.store", name = "type", havingValue = "postgresql")
    @ConditionalOnMissingBean(RateLimitStore.class)
    public static class Postgres {

        /** Created by Spring. */
        public Postgres() {}

        /** PostgreSQL on {@code sluice.store.uri}, or through the application's {@link DataSource}. */
        @Bean
        @ConditionalOnMissingBean
        public StoreConnection sluiceStoreConnection(
                ObjectProvider<DataSource> dataSource, SluiceProperties properties) {
            StoreConnection c = onUri(properties);
            return c != null ? c : PostgresStore.connection(dataSource.getObject());
        }
    }

    /**
     * {@code mongodb}: {@code sluice.store.uri}, or the application's {@link MongoClient}
     * ({@code spring.data.mongodb.*}) and database {@code sluice.store.database}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.sluice.mongodb.MongoStore")
    @ConditionalOnProperty(prefix = "sluice.store", name = "type", havingValue = "mongodb")
    @ConditionalOnMissingBean(RateLimitStore.class)
    public static class Mongo {

        /** Created by Spring. */
        public Mongo() {}

        /** MongoDB on {@code sluice.store.uri}, or through the application's {@link MongoClient}. */
        @Bean
        @ConditionalOnMissingBean
        public StoreConnection sluiceStoreConnection(ObjectProvider<MongoClient> client, SluiceProperties properties) {
            StoreConnection c = onUri(properties);
            return c != null
                    ? c
                    : MongoStore.connection(
                            client.getObject(), properties.getStore().getDatabase());
        }
    }

    /** The stores on the shared store's {@link StoreConnection}: exact mode's, or the counter store of the others. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(StoreConnection.class)
    public static class OnConnection {

        /** Created by Spring. */
        public OnConnection() {}

        /** Exact mode: every decision one call to the store, bounded by {@code sluice.store.timeout}. */
        @Bean
        @ConditionalOnMissingBean({RateLimitStore.class, CounterStore.class})
        @ConditionalOnProperty(prefix = "sluice.store", name = "mode", havingValue = "exact", matchIfMissing = true)
        public RateLimitStore sluiceRateLimitStore(StoreConnection connection, SluiceProperties properties) {
            return assembly(properties.getStore()).exactStore(connection);
        }

        /**
         * The counts of synchronized and leased mode. A claim of leased mode runs on a request's thread, so its calls
         * are bounded by {@code sluice.store.timeout}, or else by the exact stores' default (250 ms), as a decision in
         * exact mode would be. Synchronized mode's calls are background flushes and refreshes (and one read when an
         * instance takes up a key), so they keep the counter store's own default (1 s).
         */
        @Bean
        @ConditionalOnMissingBean({CounterStore.class, RateLimitStore.class})
        @Conditional(OnCounterStoreMode.class)
        public CounterStore sluiceCounterStore(StoreConnection connection, SluiceProperties properties) {
            return assembly(properties.getStore()).counterStore(connection);
        }
    }

    /**
     * {@code sluice.store.mode: synchronized}: a {@link SynchronizedStore} on the counter store of
     * {@code sluice.store.type}. Decisions are made in memory; what each instance admitted is flushed in bulk every
     * {@code sluice.store.interval}, and the others' counts read back. The instances together may pass a limit by
     * what the others admit in one interval. A store outage stops no decision: counts are kept and written when it
     * answers again.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "sluice.store", name = "mode", havingValue = "synchronized")
    public static class Synchronized {

        /** Created by Spring. */
        public Synchronized() {}

        /** The store; closed with the context, when it flushes what it has not written yet. */
        @Bean
        @ConditionalOnMissingBean(RateLimitStore.class)
        public SynchronizedStore sluiceRateLimitStore(CounterStore counterStore, SluiceProperties properties) {
            warnIfCacheUnused(properties.getStore(), false);
            return assembly(properties.getStore()).synchronizedStore(counterStore);
        }
    }

    /**
     * {@code sluice.store.mode: leased}: a {@link LeasedStore} on the counter store of {@code sluice.store.type}.
     * Decisions are made in memory within slices of each limit claimed from the store, so the instances together
     * never pass it; a round every {@code sluice.store.interval} gives back what is unused and claims ahead. A
     * request its slice does not cover claims on its own thread, bounded by {@code sluice.store.timeout}; while the
     * store fails such a request is answered by its domain's {@code on_store_failure}, as a decision of an exact-mode
     * store is then.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "sluice.store", name = "mode", havingValue = "leased")
    public static class Leased {

        /** Created by Spring. */
        public Leased() {}

        /** The store; closed with the context, when it gives back the unused part of every slice it holds. */
        @Bean
        @ConditionalOnMissingBean(RateLimitStore.class)
        public LeasedStore sluiceRateLimitStore(CounterStore counterStore, SluiceProperties properties) {
            warnIfCacheUnused(properties.getStore(), false);
            return assembly(properties.getStore()).leasedStore(counterStore);
        }
    }
}
