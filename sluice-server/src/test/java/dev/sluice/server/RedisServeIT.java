package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.server.RedisServers;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * envoyproxy/ratelimit's scenarios on Redis, exact mode: one script per decision, with an over-limit cache
 * ({@code --over-limit-cache}), so that every scenario's refusals after the first come from it.
 */
class RedisServeIT extends ServeScenarios {
    static final String CACHE_HITS = "sluice_over_limit_cache_hits_total{domain=\"another\"}";

    @Override
    List<String> storeArgs() {
        // Patient: these tests are about answers; a slow call on a loaded machine must not become a failure answer.
        return List.of("--store", RedisServers.shared().uri(), "--store-timeout", "2s", "--over-limit-cache", "1000");
    }

    /**
     * After Redis refuses a key, its checks are answered from the cache as Redis answered them (the limit, nothing
     * remaining, the time to the reset), counted in the metric, with no further script on Redis.
     */
    @Test
    void anOverLimitKeyIsRefusedFromTheCacheWithoutAScriptOnRedis() {
        String v = unique();
        for (int i = 1; i <= 10; i++) {
            assertEquals(
                    Code.OK, call(request("another", descriptor("key3", v))).getOverallCode(), "request " + i);
        }
        // The service's readiness probe runs a script on Redis every second: what a key caused is told by its name.
        List<String> refusedByRedis = RedisServers.shared()
                .commandsDuring(() -> assertEquals(
                        Code.OVER_LIMIT,
                        call(request("another", descriptor("key3", v))).getOverallCode(),
                        "request 11"));
        assertTrue(named(refusedByRedis, v) > 0, "request 11 is decided by a script on Redis: " + refusedByRedis);
        double hitsBefore = Metrics.value(server.get("/metrics").body(), CACHE_HITS);
        List<String> refusedFromCache = RedisServers.shared().commandsDuring(() -> {
            for (int i = 12; i <= 15; i++) {
                long before = Instant.now().getEpochSecond();
                RateLimitResponse r = call(request("another", descriptor("key3", v)));
                long after = Instant.now().getEpochSecond();
                assertEquals(Code.OVER_LIMIT, r.getOverallCode(), "request " + i);
                DescriptorStatus s = r.getStatuses(0);
                assertEquals(Code.OVER_LIMIT, s.getCode());
                assertEquals(limit(10, RateLimit.Unit.DAY), s.getCurrentLimit());
                assertEquals(0, s.getLimitRemaining());
                assertResetOfUnit(86_400, before, after, s);
            }
        });
        assertEquals(
                0,
                named(refusedFromCache, v),
                "no command on Redis for the four refusals from the cache: " + refusedFromCache);
        assertEquals(hitsBefore + 4, Metrics.value(server.get("/metrics").body(), CACHE_HITS));
    }

    /** How many of {@code commands} name {@code key}. */
    private static long named(List<String> commands, String key) {
        return commands.stream().filter(c -> c.contains(key)).count();
    }
}
