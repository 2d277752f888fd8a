package dev.sluice.server;

import dev.sluice.testkit.server.RedisServers;
import java.util.List;

/** envoyproxy/ratelimit's scenarios on Redis in synchronized mode: decided in memory, flushed every 100 ms. */
class RedisSyncServeIT extends ServeScenarios {
    @Override
    List<String> storeArgs() {
        return List.of("--store", RedisServers.shared().uri(), "--sync-interval", "100ms");
    }
}
