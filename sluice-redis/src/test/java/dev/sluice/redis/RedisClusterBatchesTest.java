package dev.sluice.redis;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.StoreBatchingContract;
import dev.sluice.testkit.server.RedisCluster;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The batching contract against a Redis Cluster ({@link RedisBatches}, a lane per hash slot). The stall's cluster is
 * one master of its own, every node of it stopped.
 */
class RedisClusterBatchesTest extends StoreBatchingContract {

    private static RedisStore store;

    @BeforeAll
    static void open() {
        store = RedisContractTest.contractStore(RedisStore.builder(Servers.clusterClient()));
    }

    @AfterAll
    static void close() {
        store.close();
    }

    @Override
    protected RateLimitStore store() {
        return store;
    }

    @Override
    protected OwnServer startOwnServer() {
        RedisCluster cluster = RedisServers.startCluster(1);
        RedisClusterClient client = RedisClusterClient.create(
                cluster.uris().stream().map(RedisURI::create).collect(Collectors.toList()));
        client.setOptions(RedisStore.recommendedClusterClientOptions());
        return RedisBatchesTest.ownServer(
                RedisStore.builder(client),
                cluster.nodes().stream().map(RedisServer::pid).collect(Collectors.toList()),
                () -> {
                    client.shutdown();
                    cluster.close();
                });
    }
}
