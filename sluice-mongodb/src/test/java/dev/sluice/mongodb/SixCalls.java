package dev.sluice.mongodb;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.spi.RateLimitStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

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
            ExecutorService threads = Executors.newFixedThreadPool(6);
            CountDownLatch ready = new CountDownLatch(6);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Decision>> calls = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                calls.add(threads.submit(() -> {
                    ready.countDown();
                    go.await();
                    return limiter.tryAcquire(args[2]);
                }));
            }
            ready.await();
            go.countDown();
            for (Future<Decision> call : calls) {
                Decision d = call.get();
                System.out.println("allowed=" + d.allowed() + " failed=" + d.failed());
            }
            threads.shutdown();
        }
    }
}
