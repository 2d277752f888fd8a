package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.lease.LeasedStore;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.ManualClock;
import io.lettuce.core.RedisClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * A service instance in leased mode that takes slices of one key and then dies holding them, run by
 * {@link RedisLeasedDeadInstanceTest} in a JVM of its own, which kills it.
 *
 * <p>It builds a leased store on Redis and a fixed window of {@code limit} per {@code windowMillis}, connects, and
 * waits until the current window has at least two thirds of it left, so that the test has time to act within it. Then
 * it makes {@code requests} requests, all at one instant of the wall clock (its limiter's clock is read once, so its
 * slices all lie in one window, whatever the scheduler does), prints
 * {@code holding frame=<window start, ns> admitted=<n> held=<unused permits>} and waits for nothing more: it runs no
 * round and never closes, so it gives nothing back. It exits if its standard input ends (the test's JVM is gone).
 *
 * <p>Arguments: the Redis URI, the key, the limit, the window in milliseconds, the number of requests.
 */
public final class LeasedHolder {

    private LeasedHolder() {}

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        String key = args[1];
        long limit = Long.parseLong(args[2]);
        Duration window = Duration.ofMillis(Long.parseLong(args[3]));
        int requests = Integer.parseInt(args[4]);

        RedisClient client = RedisClient.create(uri);
        client.setOptions(RedisStore.recommendedClientOptions());
        RedisCounterStore counters =
                RedisStore.counterStoreBuilder(client).timeout(Servers.PATIENCE).build();
        LeasedStore leased = LeasedStore.builder(counters).manualRounds().build();
        ManualClock clock = new ManualClock(Instant.now());
        RateLimiter limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(limit, window)
                .clock(clock)
                .store(leased)
                .build();
        limiter.peek("warm-up:" + key, 1); // connects, so the requests do not wait for the connection

        long w = window.toNanos();
        Clock wall = Clock.systemUTC();
        Await.until("a window with two thirds of it left", Await.GENEROUS, () -> {
            long now = nanos(wall.instant());
            return now - frame(now, w) <= w / 3;
        });
        Instant at = wall.instant();
        clock.set(at);
        long admitted = 0;
        for (int r = 0; r < requests; r++) {
            if (limiter.tryAcquire(key).allowed()) {
                admitted++;
            }
        }
        System.out.println(
                "holding frame=" + frame(nanos(at), w) + " admitted=" + admitted + " held=" + leased.unusedPermits());
        System.out.flush();
        while (System.in.read() >= 0) {
            // killed while waiting here; nothing the test writes means anything
        }
        Runtime.getRuntime().halt(0); // the test's JVM is gone: still no close, no give-back
    }

    private static long nanos(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    private static long frame(long nanos, long window) {
        return Math.floorDiv(nanos, window) * window;
    }
}
