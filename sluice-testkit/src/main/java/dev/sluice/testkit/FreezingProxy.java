package dev.sluice.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on a loopback port in front of a server, which a test can {@link #freeze()}: while frozen it accepts
 * and keeps every connection open but passes no byte either way, as a server that hangs or a network that loses
 * packets would. What it does with the bytes it reads while frozen is its {@link WhileFrozen} mode: hold them and
 * pass them on when thawed (a hung server that answers again), or drop them (a lossy network: the connections that
 * lost bytes are of no use any more, new ones work). Thread-safe; every thread it starts is a daemon.
 */
public final class FreezingProxy implements AutoCloseable {

    /** What a frozen proxy does with the bytes it reads. */
    public enum WhileFrozen {
        /** Keeps them, and passes them on, in order, once thawed. */
        HOLD,
        /** Discards them ({@link #droppedBytes()} counts them). */
        DROP
    }

    private final int targetPort;
    private final WhileFrozen mode;
    private final ServerSocket listener;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object lock = new Object();
    private final AtomicLong dropped = new AtomicLong();
    private boolean frozen; // guarded by lock
    private volatile boolean closed;

    /**
     * Starts a proxy to {@code targetPort} on the loopback address.
     *
     * @throws UncheckedIOException if no loopback port can be opened
     */
    public FreezingProxy(int targetPort, WhileFrozen mode) {
        this.targetPort = targetPort;
        this.mode = Objects.requireNonNull(mode, "mode must not be null");
        try {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread acceptor = new Thread(this::accept, "freezing-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The proxy's port on the loopback address. */
    public int port() {
        return listener.getLocalPort();
    }

    /** Stops passing bytes, in both directions, on every connection, open or new. */
    public void freeze() {
        synchronized (lock) {
            frozen = true;
        }
    }

    /** Passes bytes again (first, in {@link WhileFrozen#HOLD} mode, the ones held). */
    public void thaw() {
        synchronized (lock) {
            frozen = false;
            lock.notifyAll();
        }
    }

    /** How many bytes the proxy has dropped while frozen in {@link WhileFrozen#DROP} mode. */
    public long droppedBytes() {
        return dropped.get();
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
        Thread t = new Thread(
                () -> {
                    byte[] buffer = new byte[16 * 1024];
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                            if (passes(n)) {
                                out.write(buffer, 0, n);
                                out.flush();
                            }
                        }
                    } catch (IOException | InterruptedException e) {
                        // the other side closed: close this one too
                    } finally {
                        closeQuietly(from);
                        closeQuietly(to);
                    }
                },
                "freezing-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Whether {@code n} bytes just read pass on: at once if thawed; else held until thawed, or dropped. */
    private boolean passes(int n) throws InterruptedException {
        synchronized (lock) {
            if (mode == WhileFrozen.DROP) {
                if (frozen && !closed) {
                    dropped.addAndGet(n);
                    return false;
                }
                return true;
            }
            while (frozen && !closed) {
                lock.wait();
            }
            return true;
        }
    }

    /** Stops the proxy and closes every connection through it. */
    @Override
    public void close() {
        closed = true;
        thaw();
        closeQuietly(listener);
        sockets.forEach(FreezingProxy::closeQuietly);
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // closing anyway
        }
    }
}
