package dev.sluice.server;

import dev.sluice.testkit.server.RedisServers;
import java.util.List;
import java.util.stream.Collectors;

/** envoyproxy/ratelimit's scenarios on a 3-master Redis Cluster ({@code redis-cluster://host:port,…}). */
class RedisClusterServeIT extends ServeScenarios {
    @Override
    List<String> storeArgs() {
        String nodes = RedisServers.sharedCluster().nodes().stream()
                .map(n -> n.host() + ":" + n.port())
                .collect(Collectors.joining(","));
        return List.of("--store", "redis-cluster://" + nodes, "--store-timeout", "2s");
    }
}
