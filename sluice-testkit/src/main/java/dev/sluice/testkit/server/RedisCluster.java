package dev.sluice.testkit.server;

import java.util.List;
import java.util.stream.Collectors;

/** A Redis Cluster of masters on loopback ports, started by {@link RedisServers#startCluster(int)}. */
public final class RedisCluster implements AutoCloseable {

    private final List<RedisServer> nodes;

    RedisCluster(List<RedisServer> nodes) {
        this.nodes = List.copyOf(nodes);
    }

    /** The masters, each holding an equal share of the 16384 slots. */
    public List<RedisServer> nodes() {
        return nodes;
    }

    /** Every node's {@code redis://host:port}: seeds for Lettuce's {@code RedisClusterClient}. */
    public List<String> uris() {
        return nodes.stream().map(RedisServer::uri).collect(Collectors.toList());
    }

    /** Stops every node and deletes its files. */
    @Override
    public void close() {
        nodes.forEach(RedisServer::close);
    }

    @Override
    public String toString() {
        return "RedisCluster" + uris();
    }
}
