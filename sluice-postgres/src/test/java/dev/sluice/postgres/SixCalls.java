package dev.sluice.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.AtOnce;
import java.time.Duration;

/**
 * A new service instance, for {@link PostgresFreshJvmTest}: builds the pool, store and limiter as
 * {@link PostgresStore}'s class comment shows, from a JDBC URL, and right after makes six calls at once on a new key
 * limited to 5 an hour, printing one line per decision: {@code allowed=<bool> failed=<bool>}.
 *
 * <p>Arguments: the JDBC URL, the key.
 */
public final class SixCalls {

    private SixCalls() {}

    public static void main(String[] args) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(args[0] + (args[0].contains("?") ? "&" : "?") + "connectTimeout=1&loginTimeout=1");
        config.setConnectionTimeout(250);
        config.setInitializationFailTimeout(-1);
        try (HikariDataSource dataSource = new HikariDataSource(config)) {
            RateLimitStore store = PostgresStore.builder(dataSource)
                    .timeout(Duration.ofMillis(250))
                    .failurePolicy(FailurePolicy.FAIL_OPEN)
                    .build();
            RateLimiter limiter = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                    .limit(5, Duration.ofHours(1))
                    .store(store)
                    .build();
            for (Decision d : AtOnce.tryAcquire(limiter, args[1], 6)) {
                System.out.println("allowed=" + d.allowed() + " failed=" + d.failed());
            }
        }
    }
}
