package dev.sluice.server;

import dev.sluice.testkit.server.MongoServers;
import java.util.List;

/**
 * envoyproxy/ratelimit's scenarios on MongoDB in leased mode: decided in memory within slices claimed from the
 * counter documents, a round every 100 ms.
 */
class MongoLeasedServeIT extends ServeScenarios {
    @Override
    List<String> storeArgs() {
        return List.of(
                "--store",
                MongoServers.connectionString() + "/sluice",
                "--lease-interval",
                "100ms",
                "--store-timeout",
                "2s");
    }
}
