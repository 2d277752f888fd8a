package dev.sluice.testkit.server;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Real Redis servers for tests, started by the tests themselves.
 *
 * <p>The binary is a {@code redis-server} on the {@code PATH} if there is one, else the one shipped in the
 * {@code com.github.codemonstur:embedded-redis} jar (Redis 6.2 for Linux and macOS), which must then be on the class
 * path. Servers listen on free loopback ports and are killed (their files deleted) when the JVM exits.
 * {@value #URL_VARIABLE} ({@code redis://host:port}) points {@link #shared()} at an external server instead, and
 * {@value #CLUSTER_URL_VARIABLE} (comma-separated {@code redis://host:port}) {@link #sharedCluster()} at an external
 * cluster. Thread-safe.
 */
public final class RedisServers {

    /** Names an external server for {@link #shared()}: {@code redis://host:port}. */
    public static final String URL_VARIABLE = "SLUICE_REDIS_URL";
    /** Names an external cluster for {@link #sharedCluster()}: comma-separated {@code redis://host:port}. */
    public static final String CLUSTER_URL_VARIABLE = "SLUICE_REDIS_CLUSTER_URL";

    static final String INSTALL_HINT = "Install Redis (apt-get install redis-server), put redis-server on the PATH, "
            + "or set " + URL_VARIABLE + " to a running server.";

    private static final int SLOTS = 16384;
    private static final int CLUSTER_BUS_OFFSET = 10000;
    private static final long CLUSTER_READY_MILLIS = 30_000;
    private static final List<RedisServer> STARTED = new CopyOnWriteArrayList<>();
    private static @Nullable Path binary; // guarded by RedisServers.class
    private static @Nullable RedisServer shared; // likewise
    private static @Nullable RedisCluster sharedCluster; // likewise

    static {
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(() -> STARTED.forEach(RedisServer::closeQuietly), "sluice-redis-servers-stop"));
    }

    private RedisServers() {}

    /** One server for the whole JVM: the external one if {@value #URL_VARIABLE} is set, else started once here. */
    public static synchronized RedisServer shared() {
        if (shared == null) {
            String url = System.getenv(URL_VARIABLE);
            shared = url == null || url.isBlank() ? start() : external(url);
        }
        return shared;
    }

    /** A new server process of its own (never external), for tests that stop and restart it. Close it after use. */
    public static RedisServer start() {
        return launch(List.of());
    }

    /**
     * A new server process of its own, as {@link #start()}, with extra {@code redis-server} options, kept across
     * {@link RedisServer#restart()}. An option given here replaces the default of the same name: the defaults are
     * no persistence ({@code --save "" --appendonly no}); {@code start("--appendonly", "yes", "--appendfsync",
     * "always")} gives a server that comes back from a kill with every write it acknowledged.
     */
    public static RedisServer start(String... options) {
        return launch(List.of(options));
    }

    /**
     * A new server process of its own, as {@link #start()}, that also serves TLS on a free loopback port
     * ({@link RedisServer#tlsPort()}) with the PEM certificate {@code cert} and key {@code key}, and checks client
     * certificates against the CAs of {@code ca} as {@code authClients} says: {@code yes} (every TLS client must
     * present one), {@code optional} or {@code no}; {@code CONFIG SET tls-auth-clients} changes it for new connections.
     * Redis must be built with TLS (Debian's is, and so is embedded-redis's). Close it after use.
     */
    public static RedisServer startTls(Path cert, Path key, Path ca, String authClients) {
        return launch(List.of(
                "--tls-port", Integer.toString(freePort(false)),
                "--tls-cert-file", cert.toString(),
                "--tls-key-file", key.toString(),
                "--tls-ca-cert-file", ca.toString(),
                "--tls-auth-clients", authClients));
    }

    /**
     * A new Redis Sentinel process of its own ({@code redis-server sentinel.conf --sentinel}), configured by
     * {@code directives} in {@code redis-server}'s command-line form, e.g. {@code "--sentinel", "monitor", "m",
     * "127.0.0.1", "6379", "1"}; it answers {@code PING} and {@code SENTINEL …} commands through
     * {@link RedisServer#call}. It rewrites its configuration file in its own directory. Close it after use.
     */
    public static RedisServer startSentinel(String... directives) {
        List<String> options = new ArrayList<>(List.of(RedisServer.SENTINEL));
        options.addAll(List.of(directives));
        return launch(options);
    }

    /**
     * One 3-master cluster for the whole JVM: the external one if {@value #CLUSTER_URL_VARIABLE} is set, else started
     * once here.
     */
    public static synchronized RedisCluster sharedCluster() {
        if (sharedCluster == null) {
            String urls = System.getenv(CLUSTER_URL_VARIABLE);
            if (urls == null || urls.isBlank()) {
                sharedCluster = startCluster(3);
            } else {
                List<RedisServer> nodes = new ArrayList<>();
                for (String url : urls.split(",", -1)) {
                    if (!url.isBlank()) { // a stray comma names no node
                        nodes.add(external(url.trim()));
                    }
                }
                sharedCluster = new RedisCluster(nodes);
            }
        }
        return sharedCluster;
    }

    /**
     * Starts a Redis Cluster of {@code masters} masters on loopback (no replicas), slots split evenly, and waits until
     * every node reports {@code cluster_state:ok}. Close it after use.
     */
    public static RedisCluster startCluster(int masters) {
        return startCluster(masters, new String[0]);
    }

    /**
     * {@link #startCluster(int)} with extra {@code redis-server} options for every node, as {@link #start(String...)}.
     * A node restarted after {@link RedisServer#stop()} keeps its cluster configuration (its {@code nodes.conf}) and
     * rejoins; {@link #awaitClusterReady(RedisCluster)} waits for that.
     */
    public static RedisCluster startCluster(int masters, String... options) {
        if (masters < 1) {
            throw new IllegalArgumentException("masters must be > 0, was " + masters);
        }
        List<String> nodeOptions = new ArrayList<>(List.of(
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000"));
        nodeOptions.addAll(List.of(options));
        List<RedisServer> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < masters; i++) {
                nodes.add(launch(nodeOptions));
            }
            for (int i = 0; i < masters; i++) {
                List<String> addSlots = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
                for (int slot = i * SLOTS / masters; slot < (i + 1) * SLOTS / masters; slot++) {
                    addSlots.add(Integer.toString(slot));
                }
                nodes.get(i).call(addSlots.toArray(new String[0]));
            }
            for (int i = 1; i < masters; i++) {
                nodes.get(0)
                        .call(
                                "CLUSTER",
                                "MEET",
                                nodes.get(i).host(),
                                Integer.toString(nodes.get(i).port()));
            }
            awaitClusterReady(nodes);
            return new RedisCluster(nodes);
        } catch (RuntimeException e) {
            nodes.forEach(RedisServer::close);
            throw e;
        }
    }

    /**
     * Waits until every node of {@code cluster} reports {@code cluster_state:ok} with all nodes known and all slots
     * assigned, as after {@link #startCluster(int)}; for a cluster whose nodes were stopped and restarted.
     *
     * @throws IllegalStateException if it is not ready within 30 s
     */
    public static void awaitClusterReady(RedisCluster cluster) {
        awaitClusterReady(cluster.nodes());
    }

    private static void awaitClusterReady(List<RedisServer> nodes) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLUSTER_READY_MILLIS);
        String known = "cluster_known_nodes:" + nodes.size();
        for (RedisServer node : nodes) {
            while (true) {
                String info = (String) Objects.requireNonNull(node.call("CLUSTER", "INFO"), "a bulk string");
                if (info.contains("cluster_state:ok")
                        && info.contains(known)
                        && info.contains("cluster_slots_assigned:" + SLOTS)) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            "Redis Cluster " + nodes + " did not become ready; " + node + " reports:\n" + info);
                }
                RedisServer.pause();
            }
        }
    }

    static void register(RedisServer server) {
        if (!STARTED.contains(server)) {
            STARTED.add(server);
        }
    }

    private static RedisServer launch(List<String> options) {
        Path executable = binary();
        IllegalStateException failure = null;
        for (int attempt = 0; attempt < 3; attempt++) { // a free port may be taken before the server binds it
            try {
                return RedisServer.launch(executable, freePort(options.contains("--cluster-enabled")), options);
            } catch (IllegalStateException e) {
                failure = e;
            }
        }
        throw failure;
    }

    private static RedisServer external(String url) {
        URI uri = URI.create(url);
        if (uri.getHost() == null) {
            throw new IllegalArgumentException("a Redis URL must be redis://host:port, was " + url);
        }
        RedisServer server = RedisServer.external(uri.getHost(), uri.getPort() < 0 ? 6379 : uri.getPort());
        try {
            server.call("PING");
        } catch (IllegalStateException e) {
            throw new IllegalStateException("no Redis answers at " + url + " (from an environment variable)", e);
        }
        return server;
    }

    /** A free loopback port; for a cluster node, one whose cluster bus port (the port + 10000) is free too. */
    private static int freePort(boolean cluster) {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = bind(0);
            if (!cluster || (port + CLUSTER_BUS_OFFSET <= 65535 && bind(port + CLUSTER_BUS_OFFSET) > 0)) {
                return port;
            }
        }
        throw new IllegalStateException("no free loopback port for a Redis Cluster node and its bus");
    }

    /** Binds {@code port} (0: any) on loopback and lets it go; answers the port, or -1 if it is taken. */
    private static int bind(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            if (port == 0) {
                throw new IllegalStateException("no free loopback port", e);
            }
            return -1;
        }
    }

    private static synchronized Path binary() {
        if (binary == null) {
            binary = onPath("redis-server");
            if (binary == null) {
                binary = embedded();
            }
        }
        return binary;
    }

    private static @Nullable Path onPath(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator, -1)) { // an empty entry, last too, is "." as for a shell
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /** Extracts embedded-redis's binary for this platform. */
    private static Path embedded() {
        String resource = embeddedResource();
        try (InputStream in = RedisServers.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("No redis-server on the PATH, and no " + resource
                        + " on the class path (com.github.codemonstur:embedded-redis). " + INSTALL_HINT);
            }
            Path file = Files.createTempFile("sluice-" + resource, "");
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            file.toFile().deleteOnExit();
            if (!file.toFile().setExecutable(true)) {
                throw new IllegalStateException("cannot make " + file + " executable. " + INSTALL_HINT);
            }
            return file;
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot extract " + resource + ": " + e.getMessage() + ". " + INSTALL_HINT, e);
        }
    }

    private static String embeddedResource() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        boolean arm = arch.equals("aarch64") || arch.equals("arm64");
        boolean x64 = arch.equals("amd64") || arch.equals("x86_64");
        if (os.contains("linux")) {
            return arm
                    ? "redis-server-6.2.7-linux-arm64"
                    : x64 ? "redis-server-6.2.6-v5-linux-amd64" : "redis-server-6.2.7-linux-386";
        }
        if (os.contains("mac") || os.contains("darwin")) {
            return arm ? "redis-server-6.2.6-v5-darwin-arm64" : "redis-server-6.2.6-v5-darwin-amd64";
        }
        if (os.contains("windows")) {
            return "redis-server-5.0.14.1-windows-amd64.exe";
        }
        throw new IllegalStateException("no embedded Redis for " + os + "/" + arch + ". " + INSTALL_HINT);
    }
}
