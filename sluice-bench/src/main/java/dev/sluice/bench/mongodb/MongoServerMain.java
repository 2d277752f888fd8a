package dev.sluice.bench.mongodb;

import dev.sluice.testkit.server.EmbeddedMongoServer;
import dev.sluice.testkit.server.MongoServers;
import java.io.IOException;

/**
 * Starts one MongoDB server (mongo-java-server, in this JVM and no other work in it) for a whole load run, prints its
 * connection string on the first line of standard output, and stops it when standard input closes. Its CPU is this
 * process's: {@link MongoLoad} reads it from {@code /proc}.
 */
public final class MongoServerMain {

    private MongoServerMain() {}

    public static void main(String[] args) throws IOException {
        try (EmbeddedMongoServer server = MongoServers.start()) {
            System.out.println(server.connectionString());
            System.out.flush();
            while (System.in.read() >= 0) {
                // wait for the end of input
            }
        }
    }
}
