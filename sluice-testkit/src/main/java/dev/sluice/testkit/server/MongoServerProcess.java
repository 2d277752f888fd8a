package dev.sluice.testkit.server;

import dev.sluice.testkit.FreshJvm;
import java.time.Duration;
import java.util.List;

/**
 * An in-JVM MongoDB server ({@link EmbeddedMongoServer}) in a JVM of its own, so that a test can stall it as a
 * process ({@link ProcessStall}) while its own JVM goes on. The new JVM gets the test's class path, which must hold
 * mongo-java-server. Close it when done (it is killed).
 */
public final class MongoServerProcess implements AutoCloseable {

    private static final String PORT = "port=";
    private static final Duration START = Duration.ofSeconds(60);

    private final FreshJvm jvm;
    private final int port;

    private MongoServerProcess(FreshJvm jvm, int port) {
        this.jvm = jvm;
        this.port = port;
    }

    /** Starts a server in a new JVM and waits until it listens. */
    public static MongoServerProcess start() {
        FreshJvm jvm = FreshJvm.start(Main.class);
        String line = jvm.awaitLine(PORT, START);
        return new MongoServerProcess(
                jvm, Integer.parseInt(line.substring(PORT.length()).trim()));
    }

    /** {@code mongodb://127.0.0.1:<port>}. */
    public String connectionString() {
        return "mongodb://127.0.0.1:" + port;
    }

    /** The server's process, for {@link ProcessStall#of}. */
    public List<Long> pids() {
        return List.of(jvm.pid());
    }

    /** Kills the server's JVM. */
    @Override
    public void close() {
        jvm.kill(Duration.ofSeconds(30));
    }

    @Override
    public String toString() {
        return "MongoServerProcess[" + connectionString() + "]";
    }

    /** The server's JVM: starts the server, prints {@code port=<port>}, and serves until it is killed. */
    public static final class Main {

        private Main() {}

        public static void main(String[] args) throws InterruptedException {
            EmbeddedMongoServer server = new EmbeddedMongoServer();
            System.out.println(PORT + server.port());
            System.out.flush();
            Thread.currentThread().join();
        }
    }
}
