package dev.sluice.mongodb;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on a loopback port in front of a server, which a test can freeze: while frozen it accepts and keeps
 * every connection but passes no byte either way, as a server that hangs or a network that drops packets would.
 * Thawed, it passes bytes again. Thread-safe.
 */
final class FreezingProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object lock = new Object();
    private boolean frozen;  // guarded by lock
    private volatile boolean closed;

    FreezingProxy(int targetPort) {
        this.targetPort = targetPort;
        try {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread acceptor = new Thread(this::accept, "freezing-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    String connectionString() {
        return "mongodb://127.0.0.1:" + listener.getLocalPort();
    }

    void freeze() {
        synchronized (lock) {
            frozen = true;
        }
    }

    void thaw() {
        synchronized (lock) {
            frozen = false;
            lock.notifyAll();
        }
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(client);
                sockets.add(server);
                pump(client, server);
                pump(server, client);
            } catch (IOException e) {
                if (!closed) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                    awaitThawed();
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the other side closed: close this one too
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "freezing-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private void awaitThawed() throws InterruptedException {
        synchronized (lock) {
            while (frozen && !closed) {
                lock.wait();
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        thaw();
        closeQuietly(listener);
        sockets.forEach(FreezingProxy::closeQuietly);
    }

    private static void closeQuietly(ServerSocket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
