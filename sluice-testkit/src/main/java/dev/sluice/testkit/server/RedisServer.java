package dev.sluice.testkit.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * One Redis server for tests: a {@code redis-server} process on a loopback port that this JVM started (and can
 * stop and restart on the same port, as a crash and recovery), or an external server named by
 * {@value RedisServers#URL_VARIABLE}. Obtain one from {@link RedisServers}. Thread-safe.
 */
public final class RedisServer implements AutoCloseable {
    /** The first option of a sentinel's ({@link RedisServers#startSentinel}). */
    static final String SENTINEL = "--sentinel";

    private static final long READY_TIMEOUT_MILLIS = 20_000;

    private final String host;
    private final int port;
    private final @Nullable Local local; // null for an external server
    private final List<String> options;
    private @Nullable Process process; // guarded by this; null while stopped

    /** What a server started here has: the binary it runs and its data directory. */
    private record Local(Path binary, Path dir) {}

    private RedisServer(String host, int port, @Nullable Local local, List<String> options) {
        this.host = host;
        this.port = port;
        this.local = local;
        this.options = List.copyOf(options);
    }

    static RedisServer external(String host, int port) {
        return new RedisServer(host, port, null, List.of());
    }

    /** Starts a server process on {@code port}; fails with what to install if it cannot. */
    static RedisServer launch(Path binary, int port, List<String> options) {
        Path dir;
        try {
            dir = Files.createTempDirectory("sluice-redis-" + port + "-");
        } catch (IOException e) {
            throw new IllegalStateException("cannot create a directory for a Redis server", e);
        }
        RedisServer server = new RedisServer("127.0.0.1", port, new Local(binary, dir), options);
        server.restart();
        return server;
    }

    /** The port it serves TLS on ({@link RedisServers#startTls}); -1 if it serves none. */
    public int tlsPort() {
        int i = options.indexOf("--tls-port");
        return i < 0 ? -1 : Integer.parseInt(options.get(i + 1));
    }

    /** The host to connect to. */
    public String host() {
        return host;
    }

    /** The port to connect to. */
    public int port() {
        return port;
    }

    /** {@code redis://host:port}, as Lettuce's {@code RedisURI.create} takes it. */
    public String uri() {
        return "redis://" + host + ":" + port;
    }

    /** Whether this server was not started here (so it cannot be stopped or restarted). */
    public boolean external() {
        return local == null;
    }

    /** The server's version, from {@code INFO server}. */
    public String version() {
        String info = (String) Objects.requireNonNull(call("INFO", "server"), "INFO answers a bulk string");
        return info.lines()
                .filter(line -> line.startsWith("redis_version:"))
                .map(line -> line.substring("redis_version:".length()))
                .findFirst()
                .orElse("unknown");
    }

    /**
     * Runs one command and returns its reply ({@code String}, {@code Long}, {@code List} or {@code null}).
     *
     * @throws IllegalStateException if the server cannot be reached or answers with an error
     */
    public @Nullable Object call(String... command) {
        try {
            return Resp.call(host, port, command);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "Redis at " + uri() + ": " + String.join(" ", command) + ": " + e.getMessage(), e);
        }
    }

    /**
     * How many times the server has run {@code commands} in all (lower case, e.g. {@code "eval", "evalsha"}), from
     * {@code INFO commandstats}: 0 for a command it has not run.
     */
    public long calls(String... commands) {
        String info = String.valueOf(call("INFO", "commandstats"));
        long calls = 0;
        for (String line : info.split("\r\n", -1)) {
            for (String command : commands) {
                String prefix = "cmdstat_" + command + ":calls=";
                if (line.startsWith(prefix)) {
                    String rest = line.substring(prefix.length());
                    calls += Long.parseLong(rest.substring(0, rest.indexOf(',')));
                }
            }
        }
        return calls;
    }

    /**
     * The commands the server runs while {@code action} runs, from every client, as {@code MONITOR} shows them (one
     * line each, the arguments quoted; a script's own {@code redis.call}s too): to tell the calls one key caused from
     * what else runs on a shared server. Complete: read until a marker sent after {@code action} returns.
     *
     * @throws IllegalStateException if the server cannot be reached
     */
    public List<String> commandsDuring(Runnable action) {
        try {
            return Resp.monitor(host, port, action);
        } catch (IOException e) {
            throw new IllegalStateException("Redis at " + uri() + ": MONITOR: " + e.getMessage(), e);
        }
    }

    /** The process id of the server, for {@link ProcessStall#of}; only for a server started here and running. */
    public synchronized long pid() {
        requireLocal("stall");
        if (process == null) {
            throw new IllegalStateException("Redis at " + uri() + " is stopped");
        }
        return process.pid();
    }

    /**
     * Kills the server process at once, as a crash would. Its data is gone unless it was started with persistence
     * options that had written it to disk (such as {@code --appendonly yes --appendfsync always}); the port and the
     * data directory stay this server's.
     */
    public synchronized void stop() {
        requireLocal("stop");
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("Redis at " + uri() + " did not stop");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while stopping Redis at " + uri(), e);
        }
        process = null;
    }

    /**
     * Starts the server again on the same port and data directory, and waits until it answers. It is empty unless
     * its persistence options had it write its data to disk, in which case it loads that data.
     */
    public synchronized void restart() {
        Local here = requireLocal("restart");
        if (process != null) {
            return;
        }
        Path binary = here.binary();
        Path dir = here.dir();
        List<String> command = new ArrayList<>(List.of(binary.toString()));
        if (!options.isEmpty() && options.get(0).equals(SENTINEL)) {
            // sentinel mode needs a configuration file, the first argument, which it rewrites
            Path conf = dir.resolve("sentinel.conf");
            try {
                if (!Files.exists(conf)) {
                    Files.createFile(conf);
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot create " + conf, e);
            }
            command.add(conf.toString());
        }
        command.addAll(List.of(
                "--port", Integer.toString(port), "--bind", host, "--protected-mode", "no", "--dir", dir.toString()));
        if (!options.contains("--save")) {
            command.addAll(List.of("--save", ""));
        }
        if (!options.contains("--appendonly")) {
            command.addAll(List.of("--appendonly", "no"));
        }
        command.addAll(options);
        Path log = dir.resolve("redis.log");
        try {
            process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot run " + binary + ": " + e.getMessage() + ". " + RedisServers.INSTALL_HINT, e);
        }
        RedisServers.register(this);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READY_TIMEOUT_MILLIS);
        while (true) {
            try {
                if ("PONG".equals(Resp.call(host, port, "PING"))) {
                    return;
                }
            } catch (IOException notYet) {
                // polled again below, within the bound
            }
            if (!process.isAlive() || System.nanoTime() > deadline) {
                String output = tail(log);
                process.destroyForcibly();
                process = null;
                throw new IllegalStateException("Redis (" + binary + ") did not start on port " + port + ". "
                        + RedisServers.INSTALL_HINT + "\nIts output:\n" + output);
            }
            pause();
        }
    }

    /** Stops a server started here and deletes its files; does nothing to an external server. */
    @Override
    public synchronized void close() {
        if (local == null) {
            return;
        }
        stop();
        try (Stream<Path> files = Files.walk(local.dir())) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a leftover temporary directory is harmless
        }
    }

    /** {@link #close()}, for a shutdown hook: never throws. */
    void closeQuietly() {
        try {
            close();
        } catch (RuntimeException ignored) {
            // the JVM is exiting; a server that would not stop is killed with it
        }
    }

    private Local requireLocal(String what) {
        if (local == null) {
            throw new IllegalStateException("cannot " + what + " the external Redis at " + uri());
        }
        return local;
    }

    static void pause() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for Redis", e);
        }
    }

    private static String tail(Path log) {
        try {
            String all = Files.readString(log);
            return all.length() > 4000 ? all.substring(all.length() - 4000) : all;
        } catch (IOException e) {
            return "(no output: " + e.getMessage() + ")";
        }
    }

    @Override
    public String toString() {
        return "RedisServer[" + uri() + (external() ? ", external" : "") + "]";
    }
}
