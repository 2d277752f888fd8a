package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Await;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The HTTP server's connections as hostile and ordinary clients hold them, over raw sockets: slow clients that never
 * finish a request, a body that never ends, TLS and bare-LF bytes, idle and keep-alive connections, a graceful stop
 * with a keep-alive connection open, and a port already in use.
 */
class HttpConnectionsIT {
    /** How long a probe may wait for its answer: seconds beyond what it takes, so only a stall fails it. */
    private static final int PROBE_TIMEOUT_MS = 10_000;

    private static final String USER = "{\"domain\":\"oauth-token\",\"descriptors\":[{\"entries\":"
            + "[{\"key\":\"client_id\",\"value\":\"slow-test\"}]}]}";

    /**
     * The named test of a stall: {@code n} connections each holding a request it never finishes (half a request line;
     * one byte at a time; a slow Content-Length body; a slow chunked body; nothing at all; half a request and then the
     * client's half of the connection closed, a half-open connection) while fresh connections ask for
     * {@code /healthcheck} and {@code /json}. The read timeout is set beyond the test, so it is not what saves it; the
     * half-open ones are let go, the others are still open at the end.
     */
    @ParameterizedTest(name = "{0} slow connections")
    @ValueSource(ints = {8, 500})
    void slowConnectionsDoNotStallTheApi(int n) throws Exception {
        try (ServerProcess server = ServerProcess.serve("--http-read-timeout", "10m");
                Trickle slow = new Trickle()) {
            List<Socket> halfOpen = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Socket s = connect(server);
                String start =
                        switch (i % 6) {
                            case 0 -> "POST /js"; // half a request line, then nothing
                            case 1, 4 -> ""; // the whole request, one byte at a time; nothing at all
                            case 2 -> "POST /json HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{";
                            case 3 -> "POST /json HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{";
                            default -> "POST /json HTTP/1.1\r\nHost: x\r\nContent-Len";
                        };
                s.getOutputStream().write(start.getBytes(StandardCharsets.US_ASCII));
                if (i % 6 == 5) {
                    s.shutdownOutput(); // half-open: the client sends no more, and says so
                    halfOpen.add(s);
                    continue;
                }
                String rest =
                        switch (i % 6) {
                            case 1 -> "POST /json HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
                                    + "x".repeat(1000);
                            case 2 -> "x".repeat(1000);
                            case 3 -> "\r\n1\r\nx".repeat(200);
                            default -> "";
                        };
                slow.add(s, rest);
            }
            slow.start();
            Await.until("the slow connections' first bytes", Await.GENEROUS, () -> slow.rounds() >= 3);
            for (int probe = 0; probe < 10; probe++) {
                Response health = exchange(server, "GET /healthcheck HTTP/1.1\r\nHost: x\r\n\r\n");
                assertEquals(200, health.status(), "probe " + probe + " with " + n + " slow connections open");
                assertEquals("OK", health.body());
                Response json = exchange(server, post("/json", USER));
                assertEquals(200, json.status(), json.body());
                assertTrue(json.body().startsWith("{\"overallCode\":\"OK\""), json.body());
            }
            assertEquals(
                    n - halfOpen.size(),
                    slow.open(),
                    "slow connections still open, so the probes were answered beside them");
            Await.until("the half-open connections let go", Await.GENEROUS, () -> {
                try {
                    return stillOpen(halfOpen) == 0;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }

    @Test
    void aRequestNotInFullWithinTheReadTimeoutIsAnswered408AndClosed() throws IOException {
        try (ServerProcess server = ServerProcess.serve("--http-read-timeout", "1s");
                Socket s = connect(server)) {
            s.getOutputStream().write("GET /healthch".getBytes(StandardCharsets.US_ASCII));
            s.setSoTimeout(60_000);
            Response r = read(s.getInputStream());
            assertEquals(408, r.status(), r.body());
            assertEquals("{\"error\":\"the request did not arrive in full within 1s of its first byte\"}", r.body());
            assertEquals("close", r.header("connection"));
            assertEquals(-1, s.getInputStream().read(), "closed after the 408");
        }
    }

    @Test
    void aBodyThatNeverEndsIsCutOffAndTheServiceGoesOn() throws Exception {
        try (ServerProcess server = ServerProcess.serve();
                Socket s = connect(server)) {
            OutputStream out = s.getOutputStream();
            out.write("POST /json HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = ("10000\r\n" + "x".repeat(0x10000) + "\r\n").getBytes(StandardCharsets.US_ASCII);
            AtomicLong sent = new AtomicLong();
            Thread writer = new Thread(
                    () -> {
                        try {
                            while (sent.get() < (256L << 20)) {
                                out.write(chunk);
                                sent.addAndGet(chunk.length);
                            }
                        } catch (IOException e) {
                            // the server closed the connection: what the test waits for
                        }
                    },
                    "endless-body");
            writer.setDaemon(true);
            writer.start();
            writer.join(Await.GENEROUS.toMillis());
            assertTrue(!writer.isAlive(), "the server still reads an endless body after " + sent + " bytes");
            assertTrue(
                    sent.get() < (64L << 20), "the server read " + sent + " bytes of a body it answers 413 at 16 MiB");
            // The 413 may be lost to the reset of a connection closed while the client still sends; the service goes
            // on.
            Response after = exchange(server, post("/json", USER));
            assertEquals(200, after.status(), after.body());
        }
    }

    @Test
    void keepAliveCarriesRequestsOneAfterAnotherAndPipelined() throws IOException {
        try (ServerProcess server = ServerProcess.serve();
                Socket s = connect(server)) {
            s.setSoTimeout(PROBE_TIMEOUT_MS);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            out.write("GET /healthcheck HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertEquals(200, read(in).status());
            out.write(post("/json", USER).getBytes(StandardCharsets.UTF_8));
            Response json = read(in);
            assertEquals(200, json.status(), json.body());
            assertEquals(null, json.header("connection"), "kept alive");
            // Three at once: answered in order, each in full.
            out.write((post("/json", USER) + "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
                            + "HEAD /healthcheck HTTP/1.1\r\nHost: x\r\n\r\n")
                    .getBytes(StandardCharsets.UTF_8));
            Response first = read(in);
            assertTrue(first.body().startsWith("{\"overallCode\":\"OK\""), first.body());
            Response metrics = read(in);
            assertEquals(200, metrics.status());
            assertTrue(metrics.body().contains("sluice_server_requests_total"), metrics.body());
            Response head = readHead(in);
            assertEquals(200, head.status());
            assertEquals("2", head.header("content-length"), "HEAD: the length of the body not sent");
            out.write("GET /healthcheck HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            Response last = read(in);
            assertEquals("OK", last.body());
            assertEquals("close", last.header("connection"));
            assertEquals(-1, in.read(), "closed as asked");
        }
    }

    @Test
    void anIdleConnectionIsClosedAfterTheIdleTimeoutAndTheNextConnectionServed() throws IOException {
        try (ServerProcess server = ServerProcess.serve("--http-idle-timeout", "1s");
                Socket s = connect(server)) {
            s.setSoTimeout(60_000);
            s.getOutputStream()
                    .write("GET /healthcheck HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertEquals(200, read(s.getInputStream()).status());
            assertEquals(-1, s.getInputStream().read(), "closed, without an answer, once idle for 1 s");
            Response next = exchange(server, "GET /healthcheck HTTP/1.1\r\nHost: x\r\n\r\n");
            assertEquals(200, next.status());
        }
    }

    @Test
    void tlsAndBareLineFeedsAreRefusedNotWaitedOn() throws IOException {
        try (ServerProcess server = ServerProcess.serve()) {
            try (Socket s = connect(server)) {
                s.setSoTimeout(PROBE_TIMEOUT_MS);
                // The start of a TLS ClientHello: a handshake record, TLS 1.0 on the record layer, then a length.
                s.getOutputStream().write(new byte[] {0x16, 0x03, 0x01, 0x00, (byte) 0xa5, 0x01, 0x00, 0x00});
                Response r = read(s.getInputStream());
                assertEquals(400, r.status());
                assertTrue(r.body().contains("not TLS"), r.body());
                assertEquals(-1, s.getInputStream().read());
            }
            // A bare LF ending a line: refused, as RFC 9112 allows, since servers that read it differently can be
            // made to see two requests in one.
            try (Socket s = connect(server)) {
                s.setSoTimeout(PROBE_TIMEOUT_MS);
                s.getOutputStream().write("GET /healthcheck HTTP/1.1\nHost: x\n\n".getBytes(StandardCharsets.US_ASCII));
                Response r = read(s.getInputStream());
                assertEquals(400, r.status());
                assertTrue(r.body().contains("Line Feed must be preceded by Carriage Return"), r.body());
                assertEquals(-1, s.getInputStream().read());
            }
            assertEquals(
                    200,
                    exchange(server, "GET /healthcheck HTTP/1.1\r\nHost: x\r\n\r\n")
                            .status());
        }
    }

    /**
     * SIGTERM with a keep-alive connection open: a request on it during the stop is answered, with
     * {@code Connection: close}, and the connection then closed, not reset.
     */
    @Test
    void aGracefulStopAnswersAKeepAliveConnection() throws IOException {
        ServerProcess server = ServerProcess.serve();
        try (Socket s = connect(server)) {
            s.setSoTimeout(PROBE_TIMEOUT_MS);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            out.write(post("/json", USER).getBytes(StandardCharsets.UTF_8));
            assertEquals(200, read(in).status());
            server.process().toHandle().destroy(); // SIGTERM
            // Ask on the same connection until an answer says the server is closing it; each answer keeps the
            // connection busy, so it is never idle long enough to be closed unasked.
            Response r = Await.succeeds("an answer with Connection: close", Await.GENEROUS, () -> {
                try {
                    out.write(post("/json", USER).getBytes(StandardCharsets.UTF_8));
                    Response a = read(in);
                    assertEquals(200, a.status(), a.body());
                    if (!"close".equals(a.header("connection"))) {
                        throw new IllegalStateException("not stopping yet");
                    }
                    return a;
                } catch (IOException e) {
                    throw new AssertionError("the connection failed during the stop", e);
                }
            });
            assertTrue(r.body().startsWith("{\"overallCode\":\"OK\""), r.body());
            assertEquals(-1, in.read(), "closed after the answer");
        } finally {
            assertEquals(143, server.stop(), "stderr: " + server.stderr());
        }
    }

    @Test
    void aPortInUseIsNamedWithItsOption() {
        try (ServerProcess first = ServerProcess.serve()) {
            String http = String.valueOf(first.httpPort());
            ServerProcess.Result r = ServerProcess.run("serve", "--http-port", http, "--grpc-port", "0");
            assertEquals(3, r.status(), r.err());
            assertTrue(
                    r.err().contains("cannot listen on 127.0.0.1:" + http + " (--http-port " + http + ", --bind"),
                    r.err());
            assertTrue(r.err().toLowerCase(Locale.ROOT).contains("in use"), r.err());
            String grpc = String.valueOf(first.grpcPort());
            ServerProcess.Result g = ServerProcess.run("serve", "--http-port", "0", "--grpc-port", grpc);
            assertEquals(3, g.status(), g.err());
            assertTrue(
                    g.err().contains("cannot listen on 127.0.0.1:" + grpc + " (--grpc-port " + grpc + ", --bind"),
                    g.err());
        }
    }

    // ---- raw HTTP

    record Response(int status, Map<String, String> headers, String body) {
        String header(String name) {
            return headers.get(name);
        }
    }

    private static Socket connect(ServerProcess server) throws IOException {
        return new Socket("127.0.0.1", server.httpPort());
    }

    private static String post(String path, String body) {
        return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
    }

    /** One request on a new connection, its answer within {@link #PROBE_TIMEOUT_MS}. */
    private static Response exchange(ServerProcess server, String request) {
        try (Socket s = connect(server)) {
            s.setSoTimeout(PROBE_TIMEOUT_MS);
            s.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
            return read(s.getInputStream());
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "no answer to " + request.lines().findFirst().orElse(""), e);
        }
    }

    private static Response read(InputStream in) throws IOException {
        Response head = readHead(in);
        int length = Integer.parseInt(head.header("content-length"));
        byte[] body = in.readNBytes(length);
        if (body.length < length) {
            throw new IOException("the body ended after " + body.length + " of " + length + " bytes");
        }
        return new Response(head.status(), head.headers(), new String(body, StandardCharsets.UTF_8));
    }

    /** The status line and headers; the body, if any, is left unread. */
    private static Response readHead(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        while (true) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("the connection ended after " + b);
            }
            b.write(c);
            String s = b.toString(StandardCharsets.ISO_8859_1);
            if (s.endsWith("\r\n\r\n")) {
                String[] lines = s.split("\r\n");
                Map<String, String> headers = new LinkedHashMap<>();
                for (int i = 1; i < lines.length; i++) {
                    int colon = lines[i].indexOf(':');
                    headers.put(
                            lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
                            lines[i].substring(colon + 1).trim());
                }
                return new Response(Integer.parseInt(lines[0].split(" ")[1]), headers, "");
            }
        }
    }

    /** How many of {@code sockets} the server has neither answered nor closed. */
    private static int stillOpen(List<Socket> sockets) throws IOException {
        int open = 0;
        for (Socket s : sockets) {
            s.setSoTimeout(1);
            try {
                s.getInputStream().read(); // an answer or the end: the server let go of it
            } catch (SocketTimeoutException e) {
                open++;
            } catch (SocketException e) {
                // reset
            }
        }
        return open;
    }

    /** Connections that send what they have left one byte at a time, every 100 ms, until closed. */
    private static final class Trickle implements AutoCloseable {
        private final List<Socket> sockets = new ArrayList<>();
        private final List<byte[]> rest = new ArrayList<>();
        private final Thread thread = new Thread(this::run, "trickle");
        private volatile boolean stop;
        private volatile int rounds;

        void add(Socket s, String bytes) {
            sockets.add(s);
            rest.add(bytes.getBytes(StandardCharsets.US_ASCII));
        }

        void start() {
            thread.setDaemon(true);
            thread.start();
        }

        int rounds() {
            return rounds;
        }

        private void run() {
            for (int round = 0; !stop; round++) {
                for (int i = 0; i < sockets.size(); i++) {
                    byte[] r = rest.get(i);
                    if (round < r.length) {
                        try {
                            sockets.get(i).getOutputStream().write(r[round]);
                        } catch (IOException e) {
                            // closed by the server: counted by open()
                        }
                    }
                }
                rounds = round + 1;
                try {
                    Thread.sleep(100); // the pace of a slow client, not a wait for a result
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        /** How many of the connections the server has not closed. */
        int open() throws IOException {
            return stillOpen(sockets);
        }

        @Override
        public void close() {
            stop = true;
            thread.interrupt();
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            for (Socket s : sockets) {
                try {
                    s.close();
                } catch (IOException e) {
                    // closing anyway
                }
            }
        }
    }
}
