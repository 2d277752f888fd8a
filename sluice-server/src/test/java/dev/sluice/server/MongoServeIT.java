package dev.sluice.server;

import dev.sluice.testkit.server.MongoServers;
import java.util.List;

/** envoyproxy/ratelimit's scenarios on MongoDB, exact mode: one findOneAndUpdate per decision. */
class MongoServeIT extends ServeScenarios {
    @Override
    List<String> storeArgs() {
        return List.of("--store", MongoServers.connectionString() + "/sluice", "--store-timeout", "2s");
    }
}
