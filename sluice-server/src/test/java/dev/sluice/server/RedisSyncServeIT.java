package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.testkit.Await;
import dev.sluice.testkit.server.RedisServers;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import java.util.List;
import org.junit.jupiter.api.Test;

/** envoyproxy/ratelimit's scenarios on Redis in synchronized mode: decided in memory, flushed every 100 ms. */
class RedisSyncServeIT extends ServeScenarios {
    @Override
    List<String> storeArgs() {
        return List.of("--store", RedisServers.shared().uri(), "--sync-interval", "100ms");
    }

    /** The synchronized store's own counts are in the metrics: a request's count is written by a later flush. */
    @Test
    void theSynchronizedStoresWorkIsInTheMetrics() {
        double writesBefore = Metrics.value(server.get("/metrics").body(), "sluice_sync_writes_total");
        assertEquals(
                Code.OK, call(request("another", descriptor("key3", unique()))).getOverallCode());
        Await.until("the request's count written by a flush", Await.GENEROUS, () -> {
            String page = server.get("/metrics").body();
            return Metrics.value(page, "sluice_sync_writes_total") > writesBefore
                    && Metrics.value(page, "sluice_sync_flushes_total") > 0
                    && Metrics.value(page, "sluice_sync_store_calls_total") > 0;
        });
    }
}
