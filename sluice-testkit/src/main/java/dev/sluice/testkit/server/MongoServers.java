package dev.sluice.testkit.server;

import org.jspecify.annotations.Nullable;

/**
 * MongoDB for the stores' tests, started by the tests themselves: an in-JVM, wire-compatible server
 * (mongo-java-server with its in-memory backend) on a free loopback port, or an external server named by the
 * environment variable {@value #URL_VARIABLE}.
 *
 * <p>The in-JVM server speaks the wire protocol of MongoDB 4.0 and implements a subset of MQL: it has no update
 * pipelines and it keeps TTL indexes without ever deleting a document. A test that needs a document to expire moves
 * its clock past the document's {@code expire} field instead.
 *
 * <p>Needs {@code de.bwaldvogel:mongo-java-server} on the test class path (an optional dependency of the testkit).
 */
public final class MongoServers {

    /** Names an external server, e.g. {@code mongodb://127.0.0.1:27017}, to run the tests against instead. */
    public static final String URL_VARIABLE = "SLUICE_MONGODB_URL";

    private static @Nullable EmbeddedMongoServer shared; // guarded by MongoServers.class

    private MongoServers() {}

    /**
     * The connection string of the server the tests of one JVM share: {@value #URL_VARIABLE} if set, else an in-JVM
     * server started on first use and kept until the JVM exits.
     */
    public static synchronized String connectionString() {
        String url = System.getenv(URL_VARIABLE);
        if (url != null && !url.isBlank()) {
            return url.trim();
        }
        if (shared == null) {
            shared = start();
        }
        return shared.connectionString();
    }

    /**
     * A new in-JVM server of its own on a free loopback port, for a test that stops it and starts it again (an
     * external server cannot be stopped by a test). Close it when done.
     */
    public static EmbeddedMongoServer start() {
        return new EmbeddedMongoServer();
    }
}
