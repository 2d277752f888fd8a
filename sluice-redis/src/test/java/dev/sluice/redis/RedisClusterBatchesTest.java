package dev.sluice.redis;

import dev.sluice.FailurePolicy;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.StoreBatchingContract;
import dev.sluice.testkit.server.RedisCluster;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
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
        return new OwnServer() {
            private RedisStore own;

            @Override
            public RateLimitStore store(Duration timeout, Consumer<? super SluiceException> failures) {
                own = RedisStore.builder(client)
                        .timeSource(TimeSource.CLOCK)
                        .failurePolicy(FailurePolicy.FAIL_CLOSED)
                        .timeout(timeout)
                        .failureListener(failures)
                        .build();
                return own;
            }

            @Override
            public List<Long> pids() {
                return cluster.nodes().stream().map(RedisServer::pid).collect(Collectors.toList());
            }

            @Override
            public void close() {
                if (own != null) {
                    own.close();
                }
                client.shutdown();
                cluster.close();
            }
        };
    }
}
