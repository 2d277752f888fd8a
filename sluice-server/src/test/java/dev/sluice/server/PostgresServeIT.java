package dev.sluice.server;

import dev.sluice.testkit.server.PostgresServers;
import java.util.List;

/** envoyproxy/ratelimit's scenarios on PostgreSQL, exact mode: one statement per decision, through a pool. */
class PostgresServeIT extends ServeScenarios {
    @Override
    List<String> storeArgs() {
        return List.of("--store", storeUri(PostgresServers.shared()), "--store-timeout", "2s");
    }

    /** {@code jdbc:postgresql://host:port/db?user=u} as the service takes it: {@code postgresql://u@host:port/db}. */
    static String storeUri(String jdbc) {
        java.net.URI u = java.net.URI.create(jdbc.substring("jdbc:".length()));
        String user = u.getQuery().replaceFirst(".*user=([^&]*).*", "$1");
        return "postgresql://" + user + "@" + u.getHost() + ":" + u.getPort() + u.getPath();
    }
}
