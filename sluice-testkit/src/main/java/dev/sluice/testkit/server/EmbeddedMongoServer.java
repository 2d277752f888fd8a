package dev.sluice.testkit.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketAddress;
import org.jspecify.annotations.Nullable;

/**
 * An in-JVM MongoDB server (mongo-java-server, in-memory backend) on a loopback port, which a test can stop and start
 * again on the same port: stopping closes the listening socket and every client connection, as a crashed server
 * would, while the data is kept, as a real server keeps it on disk. Obtain one from {@link MongoServers#start()}.
 * Thread-safe.
 *
 * <p>mongo-java-server is reached by reflection: its two jars split the package {@code de.bwaldvogel.mongo}, so they
 * cannot be modules this module reads. It must be on the class path, where the stores' tests run.
 */
public final class EmbeddedMongoServer implements AutoCloseable {

    private static final String BACKEND_INTERFACE = "de.bwaldvogel.mongo.MongoBackend";
    private static final String MEMORY_BACKEND = "de.bwaldvogel.mongo.backend.memory.MemoryBackend";
    private static final String SERVER = "de.bwaldvogel.mongo.MongoServer";
    private static final int START_ATTEMPTS = 50;

    private final Class<?> backendInterface;
    private final Object data; // the real backend, closed only by close()
    private final Object kept; // what each server is given: the backend, except that close() does nothing
    private final int port;
    private @Nullable Object server; // guarded by this; null while stopped

    EmbeddedMongoServer() {
        try {
            backendInterface = Class.forName(BACKEND_INTERFACE);
            data = Class.forName(MEMORY_BACKEND).getConstructor().newInstance();
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(
                    "the in-JVM MongoDB server needs de.bwaldvogel:mongo-java-server on the "
                            + "test class path: add it as a test dependency (or set " + MongoServers.URL_VARIABLE
                            + " to an external server)",
                    e);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot create mongo-java-server's in-memory backend", e);
        }
        InvocationHandler keepOnClose = (proxy, method, args) -> {
            if (method.getName().equals("close") && method.getParameterCount() == 0) {
                return null; // a stopped server keeps its data
            }
            return invoke(method, data, args);
        };
        kept = Proxy.newProxyInstance(
                backendInterface.getClassLoader(), new Class<?>[] {backendInterface}, keepOnClose);
        port = freePort();
        start();
    }

    private static Object invoke(Method method, Object target, Object... args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port for an in-JVM MongoDB server", e);
        }
    }

    /** {@code mongodb://127.0.0.1:<port>}: the same while stopped and after a restart. */
    public String connectionString() {
        return "mongodb://127.0.0.1:" + port;
    }

    /** The port the server listens on (or will, when started again). */
    public int port() {
        return port;
    }

    /** Whether the server is accepting connections. */
    public synchronized boolean running() {
        return server != null;
    }

    /**
     * Starts the server on its port with the data it had when stopped; does nothing if it is running. Retries for
     * up to about five seconds while the port is still held by the connections just closed.
     *
     * @throws IllegalStateException if the port stays taken
     */
    public synchronized void start() {
        if (server != null) {
            return;
        }
        Throwable last = null;
        for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
            try {
                Object s =
                        Class.forName(SERVER).getConstructor(backendInterface).newInstance(kept);
                s.getClass()
                        .getMethod("bind", SocketAddress.class)
                        .invoke(s, new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
                server = s;
                return;
            } catch (InvocationTargetException e) { // the port is not free yet
                last = e.getCause();
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot start mongo-java-server", e);
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        throw new IllegalStateException("could not start the in-JVM MongoDB server on port " + port, last);
    }

    /** Stops the server: closes its listening socket and every client connection. Keeps the data. */
    public synchronized void stop() {
        if (server != null) {
            call(server, "shutdownNow");
            server = null;
        }
    }

    /** Stops the server for good and drops its data. */
    @Override
    public synchronized void close() {
        stop();
        call(data, "close");
    }

    private static void call(Object target, String method) {
        try {
            target.getClass().getMethod(method).invoke(target);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("mongo-java-server failed in " + method + "()", e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot call mongo-java-server's " + method + "()", e);
        }
    }

    @Override
    public String toString() {
        return "EmbeddedMongoServer[" + connectionString() + (running() ? "" : ", stopped") + "]";
    }
}
