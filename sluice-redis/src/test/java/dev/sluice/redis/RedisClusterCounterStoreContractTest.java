package dev.sluice.redis;

import dev.sluice.spi.CounterStore;
import dev.sluice.testkit.CounterStoreContract;
import dev.sluice.testkit.server.RedisCluster;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/**
 * The counter store contract, unchanged, on a 3-master Redis Cluster of its own, through Lettuce's cluster client: every
 * batch spans slots and nodes. The outage kills all three nodes ({@code SIGKILL}) and restarts them on their ports;
 * they keep their data as {@link RedisCounterStoreContractTest}'s server does ({@code appendonly yes},
 * {@code appendfsync always}) and their cluster configuration ({@code nodes.conf}), and the test waits until the
 * cluster reports {@code cluster_state:ok} again.
 */
class RedisClusterCounterStoreContractTest extends CounterStoreContract {

    private static RedisCluster cluster;
    private static RedisClusterClient client;
    private final List<RedisCounterStore> opened = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startCluster() {
        cluster = RedisServers.startCluster(3, "--appendonly", "yes", "--appendfsync", "always");
        client = RedisClusterClient.create(
                cluster.uris().stream().map(RedisURI::create).collect(Collectors.toList()));
        client.setOptions(RedisStore.recommendedClusterClientOptions());
    }

    @AfterAll
    static void stopCluster() {
        client.shutdown();
        cluster.close();
    }

    @AfterEach
    void closeStores() {
        opened.forEach(RedisCounterStore::close);
    }

    /**
     * Wide enough that a loaded machine never turns a good call into a failure, yet below {@link Servers#PATIENCE}: a
     * call to the stopped cluster waits all of it, and the outage test makes several.
     */
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @Override
    protected CounterStore counterStore() {
        RedisCounterStore store =
                RedisStore.counterStoreBuilder(client).timeout(TIMEOUT).build();
        opened.add(store);
        return store;
    }

    @Override
    protected void stopStore() {
        cluster.nodes().forEach(RedisServer::stop);
    }

    @Override
    protected void startStore() {
        cluster.nodes().forEach(RedisServer::restart);
        RedisServers.awaitClusterReady(cluster);
    }
}
