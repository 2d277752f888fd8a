package dev.sluice.mongodb;

import com.mongodb.client.MongoClient;
import dev.sluice.spi.CounterStore;
import dev.sluice.testkit.LeasedContract;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;

/** The leased mode contract, unchanged, against the shared test MongoDB: every simulated instance a client of its own. */
class MongoLeasedContractTest extends LeasedContract {

    private final List<MongoClient> clients = new ArrayList<>();

    @AfterEach
    synchronized void closeClients() {
        clients.forEach(MongoClient::close);
        clients.clear();
    }

    @Override
    protected synchronized CounterStore counterStore() {
        MongoClient client = Mongo.client();
        clients.add(client);
        return MongoStore.counterStoreBuilder(client, Mongo.DATABASE)
                .timeout(Mongo.TIMEOUT)
                .build();
    }
}
