package dev.sluice.mongodb;

import com.mongodb.client.MongoClient;
import dev.sluice.spi.CounterStore;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.CounterStoreContract;
import dev.sluice.testkit.server.EmbeddedMongoServer;
import dev.sluice.testkit.server.MongoServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/**
 * The counter store contract, unchanged, against MongoDB: every simulated instance has a client of its own, and the
 * outage stops the server and starts it again on the same port with its data. Always an in-JVM server of its own,
 * since the test stops it.
 */
class MongoCounterStoreContractTest extends CounterStoreContract {

    /** A stopped server fails a call this soon; the store's own timeout is for a server that answers slowly. */
    private static final Duration SERVER_SELECTION = Duration.ofMillis(500);
    /** Very generous: the machine is shared, and the contract has no hung server, only a stopped one. */
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private static EmbeddedMongoServer server;

    private final List<MongoClient> clients = new ArrayList<>();

    @BeforeAll
    static void startServer() {
        server = MongoServers.start();
    }

    @AfterAll
    static void closeServer() {
        server.close();
    }

    @AfterEach
    synchronized void closeClients() {
        clients.forEach(MongoClient::close);
        clients.clear();
    }

    /**
     * A counter store on a new client. While the server runs, the client is connected before it is handed out: on a
     * busy machine a new client may take longer than the short server selection timeout to find the server.
     */
    @Override
    protected synchronized CounterStore counterStore() {
        MongoClient client = Mongo.client(server.connectionString(), SERVER_SELECTION);
        clients.add(client);
        if (server.running()) {
            awaitConnected(client);
        }
        return MongoStore.counterStoreBuilder(client, Mongo.DATABASE)
                .timeout(TIMEOUT)
                .build();
    }

    private static void awaitConnected(MongoClient client) {
        Await.succeeds(
                "a new client to reach the in-JVM MongoDB server", Await.GENEROUS, () -> client.getDatabase("admin")
                        .runCommand(new Document("ping", 1)));
    }

    @Override
    protected void stopStore() {
        server.stop();
    }

    @Override
    protected void startStore() {
        server.start();
    }
}
