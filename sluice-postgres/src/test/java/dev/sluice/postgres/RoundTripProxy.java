package dev.sluice.postgres;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A TCP proxy to a PostgreSQL server that counts round trips: the ReadyForQuery messages the server sends, one at the
 * end of every exchange the client waits for (a simple query, or an extended-protocol Sync). Clients must connect
 * without SSL and GSS encryption ({@code sslmode=disable&gssEncMode=disable}), so that every byte from the server is
 * part of a framed message.
 */
final class RoundTripProxy implements AutoCloseable {

    private static final int READY_FOR_QUERY = 'Z';
    private static final Pattern URL = Pattern.compile("jdbc:postgresql://([^/:,]+)(?::(\\d+))?/([^?]*)(\\?.*)?");

    private final ServerSocket listener;
    private final String targetHost;
    private final int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicLong roundTrips = new AtomicLong();
    private final String databaseAndParameters;

    /** A proxy to the server of {@code url}, a JDBC URL {@code jdbc:postgresql://host[:port]/database[?...]}. */
    RoundTripProxy(String url) throws IOException {
        Matcher m = URL.matcher(url);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a PostgreSQL JDBC URL with one host: " + url);
        }
        this.targetHost = m.group(1);
        this.targetPort = m.group(2) == null ? 5432 : Integer.parseInt(m.group(2));
        this.databaseAndParameters =
                m.group(3) + (m.group(4) == null ? "?" : m.group(4) + "&") + "sslmode=disable&gssEncMode=disable";
        this.listener = new ServerSocket();
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread acceptor = new Thread(this::acceptLoop, "round-trip-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The JDBC URL given, to the server through this proxy, without SSL or GSS encryption. */
    String url() {
        return "jdbc:postgresql://localhost:" + listener.getLocalPort() + "/" + databaseAndParameters;
    }

    /** ReadyForQuery messages the server has sent so far, over every connection. */
    long roundTrips() {
        return roundTrips.get();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(targetHost, targetPort);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(server);
                start(() -> copy(client, server), "round-trip-proxy-up");
                start(() -> frames(server, client), "round-trip-proxy-down");
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private static void start(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    private void copy(Socket from, Socket to) {
        byte[] buffer = new byte[8192];
        try (InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // one side went away: so does the other
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    /** Forwards the server's messages one by one: a type byte, then a length that counts itself. */
    private void frames(Socket from, Socket to) {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(from.getInputStream()));
                OutputStream out = new BufferedOutputStream(to.getOutputStream())) {
            byte[] body = new byte[8192];
            while (true) {
                int type = in.read();
                if (type < 0) {
                    return;
                }
                int length = in.readInt();
                if (length - 4 > body.length) {
                    body = new byte[length - 4];
                }
                in.readFully(body, 0, length - 4);
                if (type == READY_FOR_QUERY) {
                    roundTrips.incrementAndGet(); // before the client can see the exchange end
                }
                out.write(type);
                out.write(length >>> 24);
                out.write(length >>> 16);
                out.write(length >>> 8);
                out.write(length);
                out.write(body, 0, length - 4);
                if (type == READY_FOR_QUERY || in.available() == 0) {
                    out.flush();
                }
            }
        } catch (EOFException e) {
            // the server closed the connection
        } catch (IOException e) {
            // one side went away: so does the other
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        sockets.forEach(RoundTripProxy::closeQuietly);
    }
}
