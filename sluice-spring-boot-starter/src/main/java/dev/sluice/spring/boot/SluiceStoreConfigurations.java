package dev.sluice.spring.boot;

import com.mongodb.client.MongoClient;
import dev.sluice.lease.LeasedStore;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.mongodb.MongoStore;
import dev.sluice.postgres.PostgresStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterStoreBuilder;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.SharedStoreBuilder;
import dev.sluice.spring.boot.SluiceProperties.StoreMode;
import dev.sluice.sync.SynchronizedStore;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.Locale;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
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
 * <p>In exact mode (the default) the store's configuration defines the {@link RateLimitStore}: every decision is one
 * call to the store. In synchronized and leased mode it defines the {@link CounterStore} instead, and
 * {@link Synchronized} or {@link Leased} the {@link RateLimitStore} that decides in memory on it. The context closes
 * the beans in the reverse order of their dependencies: the limiter, then the mode's store (a synchronized store
 * flushes, a leased store gives back the unused part of its slices), then the counter store, then the client.
 */
public final class SluiceStoreConfigurations {

    private SluiceStoreConfigurations() {}

    /**
     * The counter store of synchronized or leased mode. A claim of leased mode runs on a request's thread, so its
     * calls are bounded by {@code sluice.store.timeout}, or else by the exact stores' default (250 ms), as a decision
     * in exact mode would be. Synchronized mode's calls are background flushes and refreshes (and one read when an
     * instance takes up a key), so they keep the counter store's own default (1 s).
     */
    static CounterStore counterStore(CounterStoreBuilder<?> builder, SluiceProperties.Store properties) {
        if (properties.getMode() == StoreMode.LEASED) {
            Duration timeout = properties.getTimeout();
            builder.timeout(timeout != null ? timeout : SharedStoreBuilder.DEFAULT_TIMEOUT);
        }
        return builder.build();
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
            StoreMode mode = properties.getStore().getMode();
            if (mode != StoreMode.EXACT) {
                throw new IllegalStateException(
                        "sluice.store.mode=" + mode.name().toLowerCase(Locale.ROOT)
                                + " needs a shared store, and sluice.store.type is memory: set sluice.store.type to"
                                + " redis, postgresql or mongodb, or sluice.store.mode to exact");
            }
            return InMemoryStore.create();
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

        @Bean(destroyMethod = "shutdown")
        @ConditionalOnMissingBean
        public RedisClient sluiceRedisClient(SluiceProperties properties) {
            String uri = properties.getStore().getUri();
            if (uri == null || uri.isEmpty()) {
                throw new IllegalStateException(
                        "sluice.store.type=redis needs sluice.store.uri, e.g. redis://localhost:6379");
            }
            RedisClient client = RedisClient.create(uri);
            client.setOptions(RedisStore.recommendedClientOptions());
            return client;
        }

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnProperty(prefix = "sluice.store", name = "mode", havingValue = "exact", matchIfMissing = true)
        public RateLimitStore sluiceRateLimitStore(RedisClient client, SluiceProperties properties) {
            RedisStore.Builder b = RedisStore.builder(client);
            Duration timeout = properties.getStore().getTimeout();
            return (timeout == null ? b : b.timeout(timeout)).build();
        }

        /** The counts of synchronized and leased mode, in Redis. */
        @Bean
        @ConditionalOnMissingBean({CounterStore.class, RateLimitStore.class})
        @Conditional(OnCounterStoreMode.class)
        public CounterStore sluiceCounterStore(RedisClient client, SluiceProperties properties) {
            return counterStore(RedisStore.counterStoreBuilder(client), properties.getStore());
        }
    }

    /** {@code postgresql}: the application's {@link DataSource} ({@code spring.datasource.*}). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.sluice.postgres.PostgresStore")
    @ConditionalOnProperty(prefix = "sluice.store", name = "type", havingValue = "postgresql")
    public static class Postgres {

        /** Created by Spring. */
        public Postgres() {}

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnProperty(prefix = "sluice.store", name = "mode", havingValue = "exact", matchIfMissing = true)
        public RateLimitStore sluiceRateLimitStore(ObjectProvider<DataSource> dataSource, SluiceProperties properties) {
            PostgresStore.Builder b = PostgresStore.builder(dataSource.getObject());
            Duration timeout = properties.getStore().getTimeout();
            return (timeout == null ? b : b.timeout(timeout)).build();
        }

        /** The counts of synchronized and leased mode, in a table of the application's database. */
        @Bean
        @ConditionalOnMissingBean({CounterStore.class, RateLimitStore.class})
        @Conditional(OnCounterStoreMode.class)
        public CounterStore sluiceCounterStore(ObjectProvider<DataSource> dataSource, SluiceProperties properties) {
            return counterStore(PostgresStore.counterStoreBuilder(dataSource.getObject()), properties.getStore());
        }
    }

    /**
     * {@code mongodb}: the application's {@link MongoClient} ({@code spring.data.mongodb.*}), database
     * {@code sluice.store.database}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.sluice.mongodb.MongoStore")
    @ConditionalOnProperty(prefix = "sluice.store", name = "type", havingValue = "mongodb")
    public static class Mongo {

        /** Created by Spring. */
        public Mongo() {}

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnProperty(prefix = "sluice.store", name = "mode", havingValue = "exact", matchIfMissing = true)
        public RateLimitStore sluiceRateLimitStore(ObjectProvider<MongoClient> client, SluiceProperties properties) {
            MongoStore.Builder b =
                    MongoStore.builder(client.getObject(), properties.getStore().getDatabase());
            Duration timeout = properties.getStore().getTimeout();
            return (timeout == null ? b : b.timeout(timeout)).build();
        }

        /** The counts of synchronized and leased mode, in database {@code sluice.store.database}. */
        @Bean
        @ConditionalOnMissingBean({CounterStore.class, RateLimitStore.class})
        @Conditional(OnCounterStoreMode.class)
        public CounterStore sluiceCounterStore(ObjectProvider<MongoClient> client, SluiceProperties properties) {
            SluiceProperties.Store p = properties.getStore();
            return counterStore(MongoStore.counterStoreBuilder(client.getObject(), p.getDatabase()), p);
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
            return SynchronizedStore.builder(counterStore)
                    .flushInterval(interval(properties))
                    .build();
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
            return LeasedStore.builder(counterStore)
                    .refreshInterval(interval(properties))
                    .build();
        }
    }

    private static Duration interval(SluiceProperties properties) {
        Duration interval = properties.getStore().getInterval();
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalStateException("sluice.store.interval must be > 0, was " + interval);
        }
        return interval;
    }
}
