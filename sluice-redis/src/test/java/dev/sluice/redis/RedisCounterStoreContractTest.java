package dev.sluice.redis;

import dev.sluice.spi.CounterStore;
import dev.sluice.testkit.CounterStoreContract;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisClient;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/**
 * The counter store contract, unchanged, on a standalone Redis of its own that the outage kills ({@code SIGKILL}, as
 * a crash) and restarts on the same port.
 *
 * <p>The server runs with {@code appendonly yes} and {@code appendfsync always}: it appends every write to its log
 * and fsyncs it before it answers, so a write the store saw acknowledged survives the kill, and the restarted server
 * loads exactly what it had acknowledged. That is what a production Redis configured for durability does after a
 * crash, with no help from the test (no {@code SAVE} or {@code SHUTDOWN} before the kill, which a crash would not
 * give). A server without persistence would come back empty, and the contract's outage test would then fail: the
 * counts flushed before the outage would be gone.
 */
class RedisCounterStoreContractTest extends CounterStoreContract {

    private static RedisServer server;
    private static RedisClient client;
    private final List<RedisCounterStore> opened = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startServer() {
        server = RedisServers.start("--appendonly", "yes", "--appendfsync", "always");
        client = RedisClient.create(server.uri());
        client.setOptions(RedisStore.recommendedClientOptions());
    }

    @AfterAll
    static void stopServer() {
        client.shutdown();
        server.close();
    }

    @AfterEach
    void closeStores() {
        opened.forEach(RedisCounterStore::close);
    }

    /** A store with its own connection per call: each simulated instance talks to Redis on its own. */
    @Override
    protected CounterStore counterStore() {
        RedisCounterStore store =
                RedisStore.counterStoreBuilder(client).timeout(Servers.PATIENCE).build();
        opened.add(store);
        return store;
    }

    @Override
    protected void stopStore() {
        server.stop();
    }

    @Override
    protected void startStore() {
        server.restart();
    }
}
