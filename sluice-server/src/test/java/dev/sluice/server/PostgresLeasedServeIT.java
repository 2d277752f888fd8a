package dev.sluice.server;

import dev.sluice.testkit.server.PostgresServers;
import java.util.List;

/**
 * envoyproxy/ratelimit's scenarios on PostgreSQL in leased mode: decided in memory within slices claimed from the
 * counter table, a round every 100 ms.
 */
class PostgresLeasedServeIT extends ServeScenarios {
    @Override
    List<String> storeArgs() {
        return List.of(
                "--store",
                PostgresServeIT.storeUri(PostgresServers.shared()),
                "--lease-interval",
                "100ms",
                "--store-timeout",
                "2s");
    }
}
