package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;

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
        for (int i = 1; i <= 11; i++) {
            RateLimitResponse r = call(request("another", descriptor("key3", v)));
            assertEquals(i <= 10 ? Code.OK : Code.OVER_LIMIT, r.getOverallCode(), "request " + i);
        }
        double hitsBefore = Metrics.value(server.get("/metrics").body(), CACHE_HITS);
        long scriptsBefore = RedisServers.shared().calls("eval", "evalsha");
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
        assertEquals(
                scriptsBefore,
                RedisServers.shared().calls("eval", "evalsha"),
                "no script on Redis for the four refusals from the cache");
        assertEquals(hitsBefore + 4, Metrics.value(server.get("/metrics").body(), CACHE_HITS));
    }
}
