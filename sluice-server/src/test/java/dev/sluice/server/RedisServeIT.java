package dev.sluice.server;

import dev.sluice.testkit.server.RedisServers;
import java.util.List;

/** envoyproxy/ratelimit's scenarios on Redis, exact mode: one script per decision. */
class RedisServeIT extends ServeScenarios {
    @Override
    List<String> storeArgs() {
        // Patient: these tests are about answers; a slow call on a loaded machine must not become a failure answer.
        return List.of("--store", RedisServers.shared().uri(), "--store-timeout", "2s");
    }
}
