package dev.sluice.spring.boot;

import com.mongodb.client.MongoClient;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.mongodb.MongoStore;
import dev.sluice.postgres.PostgresStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.RateLimitStore;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The store of {@code sluice.store.type}, each only with its module on the class path and only when the application
 * defines no {@link RateLimitStore} of its own. A shared store lets every instance of the application count against
 * the same limits.
 */
public final class SluiceStoreConfigurations {

    private SluiceStoreConfigurations() {}

    /** {@code memory}, the default: counts in this instance only. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "sluice.store", name = "type", havingValue = "memory", matchIfMissing = true)
    public static class Memory {

        /** Created by Spring. */
        public Memory() {}

        @Bean
        @ConditionalOnMissingBean
        public RateLimitStore sluiceRateLimitStore() {
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
        public RateLimitStore sluiceRateLimitStore(RedisClient client, SluiceProperties properties) {
            RedisStore.Builder b = RedisStore.builder(client);
            Duration timeout = properties.getStore().getTimeout();
            return (timeout == null ? b : b.timeout(timeout)).build();
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
        public RateLimitStore sluiceRateLimitStore(ObjectProvider<DataSource> dataSource, SluiceProperties properties) {
            PostgresStore.Builder b = PostgresStore.builder(dataSource.getObject());
            Duration timeout = properties.getStore().getTimeout();
            return (timeout == null ? b : b.timeout(timeout)).build();
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
        public RateLimitStore sluiceRateLimitStore(ObjectProvider<MongoClient> client, SluiceProperties properties) {
            MongoStore.Builder b =
                    MongoStore.builder(client.getObject(), properties.getStore().getDatabase());
            Duration timeout = properties.getStore().getTimeout();
            return (timeout == null ? b : b.timeout(timeout)).build();
        }
    }
}
