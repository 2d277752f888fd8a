package dev.sluice.policy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.redis.RedisStore;
import dev.sluice.testkit.server.MongoServers;
import dev.sluice.testkit.server.PostgresServers;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * Clients of the real servers the store tests run against, one of each for the whole test run, created on first
 * use (the testkit starts the servers unless environment variables name external ones); never closed, the JVM's
 * exit ends them.
 */
final class Servers {

    /**
     * The timeout of every store here: these tests are about answers, not timeouts, and on a loaded machine a call
     * can wait seconds for the CPU; a slow answer must never turn into a failure policy's answer.
     */
    static final Duration PATIENCE = Duration.ofSeconds(30);

    private static RedisClient redis; // guarded by Servers.class
    private static HikariDataSource postgres; // likewise
    private static MongoClient mongo; // likewise

    private Servers() {}

    /** A client of the shared Redis, with {@link RedisStore#recommendedClientOptions()}. */
    static synchronized RedisClient redis() {
        if (redis == null) {
            redis = RedisClient.create(RedisServers.shared().uri());
            redis.setOptions(RedisStore.recommendedClientOptions());
        }
        return redis;
    }

    /** A pool on the shared PostgreSQL, enough connections for eight threads and a probe, borrowing patiently. */
    static synchronized DataSource postgres() {
        if (postgres == null) {
            HikariConfig c = new HikariConfig();
            c.setJdbcUrl(PostgresServers.shared());
            c.setMaximumPoolSize(10);
            c.setConnectionTimeout(PATIENCE.toMillis());
            c.setPoolName("sluice-policy-test");
            postgres = new HikariDataSource(c);
        }
        return postgres;
    }

    /** A client of the shared MongoDB. */
    static synchronized MongoClient mongo() {
        if (mongo == null) {
            mongo = MongoClients.create(MongoServers.connectionString());
        }
        return mongo;
    }
}
