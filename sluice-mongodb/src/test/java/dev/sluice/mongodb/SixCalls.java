package dev.sluice.mongodb;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.AtOnce;
import java.time.Duration;

/**
 * A new service instance, for {@link MongoFreshJvmTest}: builds the store and limiter as {@link MongoStore}'s class
 * comment shows, from a connection string, and right after makes six calls at once on a new key limited to 5 an hour,
 * printing one line per decision: {@code allowed=<bool> failed=<bool>}.
 *
 * <p>Arguments: the connection string, the database, the key.
 */
public final class SixCalls {

    private SixCalls() {}

    public static void main(String[] args) throws Exception {
        try (MongoClient mongoClient = MongoClients.create(args[0])) {
            RateLimitStore store = MongoStore.builder(mongoClient, args[1]).build();
            RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
                    .limit(5, Duration.ofHours(1))
                    .store(store)
                    .build();
            for (Decision d : AtOnce.tryAcquire(limiter, args[2], 6)) {
                System.out.println("allowed=" + d.allowed() + " failed=" + d.failed());
            }
        }
    }
}
