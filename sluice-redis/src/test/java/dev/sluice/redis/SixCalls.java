package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.testkit.AtOnce;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A service instance's first moments, run by {@link RedisProductionTest} in a JVM of its own: builds the store and
 * the limiter as the README shows, then makes six calls at once, right away, on a key limited to five an hour.
 * Prints {@code allowed=<n> failed=<n> failures=<n>}: admitted, answered by the failure policy, reported to the
 * listener.
 *
 * <p>Arguments: the Redis URI and the key.
 */
public final class SixCalls {

    private SixCalls() {}

    public static void main(String[] args) throws InterruptedException, ExecutionException {
        String uri = args[0];
        String key = args[1];
        AtomicLong failures = new AtomicLong();

        // As the README shows:
        RedisClient client = RedisClient.create(uri);
        RedisStore store = RedisStore.builder(client)
                .failureListener(e -> failures.incrementAndGet())
                .build();
        RateLimiter limiter = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                .limit(5, Duration.ofHours(1))
                .store(store)
                .build();

        int allowed = 0;
        int failed = 0;
        for (Decision d : AtOnce.tryAcquire(limiter, key, 6)) {
            allowed += d.allowed() ? 1 : 0;
            failed += d.failed() ? 1 : 0;
        }

        limiter.close();
        store.close();
        client.shutdown();
        System.out.println("allowed=" + allowed + " failed=" + failed + " failures=" + failures.get());
    }
}
