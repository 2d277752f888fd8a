package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.lease.LeasedStore;
import io.lettuce.core.RedisClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A service instance in leased mode, run by {@link RedisLeasedFreshJvmTest} in a JVM of its own: builds a leased store
 * on Redis (a round every 20 ms) and a limiter of {@code limit} a day, says it is ready, waits for the go, and then
 * floods one key from {@code threads} threads, {@code requests} each. Prints {@code admitted=<n> unused=<n>} and
 * stops at once, without closing anything: a process killed holding its slices.
 *
 * <p>Arguments: the Redis URI, the key, the limit, threads, requests per thread, the file to create when ready, and
 * the file whose appearance means go.
 */
public final class LeasedFlood {

    private LeasedFlood() {}

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        String key = args[1];
        long limit = Long.parseLong(args[2]);
        int threads = Integer.parseInt(args[3]);
        int requests = Integer.parseInt(args[4]);
        Path ready = Path.of(args[5]);
        Path go = Path.of(args[6]);

        RedisClient client = RedisClient.create(uri);
        client.setOptions(RedisStore.recommendedClientOptions());
        RedisCounterStore counters = RedisStore.counterStoreBuilder(client).build();
        LeasedStore leased =
                LeasedStore.builder(counters).interval(Duration.ofMillis(20)).build();
        RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
                .limit(limit, Duration.ofDays(1))
                .store(leased)
                .build();
        limiter.peek("warm-up:" + key, 1); // connects, so the flood does not wait for the connection

        Files.createFile(ready);
        while (!Files.exists(go)) {
            Thread.onSpinWait();
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<Long>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            results.add(pool.submit(() -> {
                long n = 0;
                for (int r = 0; r < requests; r++) {
                    if (limiter.tryAcquire(key).allowed()) {
                        n++;
                    }
                }
                return n;
            }));
        }
        long admitted = 0;
        for (Future<Long> f : results) {
            admitted += f.get(5, TimeUnit.MINUTES);
        }
        System.out.println("admitted=" + admitted + " unused=" + leased.unusedPermits() + " calls="
                + leased.stats().storeCalls());
        System.out.flush();
        Runtime.getRuntime().halt(0); // killed: no close, no give-back
    }
}
