package dev.sluice.redis;

import dev.sluice.FailurePolicy;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.StoreBatchingContract;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The batching contract against a standalone Redis ({@link RedisBatches}): concurrent decisions share runs of the
 * batch script. The stall stops the {@code redis-server} process. {@link RedisClusterBatchesTest} runs it on a
 * cluster.
 */
class RedisBatchesTest extends StoreBatchingContract {

    private static RedisStore store;

    @BeforeAll
    static void open() {
        store = RedisContractTest.contractStore(RedisStore.builder(Servers.client()));
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
        RedisServer server = RedisServers.start();
        RedisClient client = RedisClient.create(server.uri());
        client.setOptions(RedisStore.recommendedClientOptions());
        return ownServer(RedisStore.builder(client), List.of(server.pid()), () -> {
            client.shutdown();
            server.close();
        });
    }

    /**
     * The stall's server of a Redis test: the stores {@code builder} builds on a server of the test's own, whose
     * processes are {@code pids}; closing it closes the store, then runs {@code shutdown} (the client's and the
     * server's).
     */
    static OwnServer ownServer(RedisStore.Builder builder, List<Long> pids, Runnable shutdown) {
        return new OwnServer() {
            private RedisStore own;

            @Override
            public RateLimitStore store(Duration timeout, Consumer<? super SluiceException> failures) {
                own = builder.timeSource(TimeSource.CLOCK)
                        .failurePolicy(FailurePolicy.FAIL_CLOSED)
                        .timeout(timeout)
                        .failureListener(failures)
                        .build();
                return own;
            }

            @Override
            public List<Long> pids() {
                return pids;
            }

            @Override
            public void close() {
                if (own != null) {
                    own.close();
                }
                shutdown.run();
            }
        };
    }
}
