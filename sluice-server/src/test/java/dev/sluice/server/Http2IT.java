package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Await;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The HTTP port's cleartext HTTP/2 (h2c) on the real jar: by prior knowledge (frames written by hand, {@link RawHttp2})
 * and by {@code Upgrade: h2c} (the JDK's {@link HttpClient}); many streams on one connection decided exactly; and the
 * bounds a hostile client meets: a stream that never ends (408 on it, the connection serving on), a body announced
 * over the limit (413 at once), streams past the limit (refused), an idle connection (closed with {@code GOAWAY}), and
 * a graceful stop (the open stream answered, then the connection closed).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class Http2IT {
    /** The policy: each client 30 requests an hour, so counts are exact whatever the clock. */
    private static final String POLICY =
            """
            domain: h2
            descriptors:
              - key: client_id
                rate_limit:
                  unit: hour
                  requests_per_unit: 30
            """;

    private Path config;
    private ServerProcess server;

    @BeforeAll
    void start() throws IOException {
        config = Files.createTempDirectory("sluice-h2");
        Files.writeString(config.resolve("h2.yaml"), POLICY);
        server = ServerProcess.serve(
                "--config", config.toString(), "--http-read-timeout", "1s", "--http-idle-timeout", "3s");
    }

    @AfterAll
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static byte[] body(String client) {
        return ("{\"domain\":\"h2\",\"descriptors\":[{\"entries\":[{\"key\":\"client_id\",\"value\":\"" + client
                        + "\"}]}]}")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** Asks for {@code /json} on a new stream: headers, then the body ending the stream; returns the stream's id. */
    private static int json(RawHttp2 c, String client) throws IOException {
        byte[] b = body(client);
        int id = c.request("POST", "/json", b.length, false);
        c.data(id, b, true);
        return id;
    }

    /** Asks for {@code /json} on a new stream, sends what is pending, and waits for the answer. */
    private static RawHttp2.HttpAnswer ask(RawHttp2 c, String client) throws IOException {
        int id = json(c, client);
        c.flush();
        return answer(c, id);
    }

    private static RawHttp2.HttpAnswer answer(RawHttp2 c, int id) {
        Await.until("stream " + id + " answered", Await.GENEROUS, () -> c.answered.contains(id));
        return c.answers.get(id);
    }

    @Test
    void priorKnowledgeCarriesManyStreamsOnOneConnectionDecidedExactly() throws Exception {
        try (RawHttp2 c = new RawHttp2(server.httpPort())) {
            assertEquals(Http2Requests.MAX_STREAMS, c.maxConcurrentStreams());
            List<Integer> ids = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                ids.add(json(c, "many-streams"));
            }
            c.flush();
            int ok = 0;
            int over = 0;
            for (int id : ids) {
                RawHttp2.HttpAnswer a = answer(c, id);
                assertEquals("application/json", a.headers().get("content-type"));
                assertEquals(Integer.toString(a.body().size()), a.headers().get("content-length"));
                if (a.status() == 200) {
                    ok++;
                    assertTrue(a.text().startsWith("{\"overallCode\":\"OK\""), a.text());
                } else {
                    assertEquals(429, a.status(), a.text());
                    assertTrue(a.text().startsWith("{\"overallCode\":\"OVER_LIMIT\""), a.text());
                    over++;
                }
            }
            assertEquals(30, ok, "the limit, exactly");
            assertEquals(20, over);
            int health = c.request("GET", "/healthcheck", -1, true);
            c.flush();
            RawHttp2.HttpAnswer h = answer(c, health);
            assertEquals(200, h.status());
            assertEquals("OK", h.text());
        }
    }

    @Test
    void theJdkClientUpgradesAndIsAnsweredOverHttp2() throws Exception {
        HttpClient client =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build();
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        HttpResponse<String> first = client.send(request("upgrade"), HttpResponse.BodyHandlers.ofString());
        assertEquals(HttpClient.Version.HTTP_2, first.version(), "upgraded to h2c");
        assertEquals(200, first.statusCode(), first.body());
        for (int i = 0; i < 39; i++) { // together on the upgraded connection
            answers.add(client.sendAsync(request("upgrade"), HttpResponse.BodyHandlers.ofString()));
        }
        int ok = 1;
        for (CompletableFuture<HttpResponse<String>> f : answers) {
            HttpResponse<String> r = f.get();
            assertEquals(HttpClient.Version.HTTP_2, r.version());
            if (r.statusCode() == 200) {
                ok++;
            } else {
                assertEquals(429, r.statusCode(), r.body());
            }
        }
        assertEquals(30, ok, "the limit, exactly");
    }

    private HttpRequest request(String client) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/json"))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body(client)))
                .build();
    }

    @Test
    void anUpgradeToAnythingElseIsAnsweredOverHttp11() throws Exception {
        byte[] b = body("websocket");
        try (Socket s = new Socket("127.0.0.1", server.httpPort())) {
            s.setSoTimeout(30_000);
            s.getOutputStream()
                    .write(("POST /json HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                                    + "Content-Length: " + b.length + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().write(b);
            byte[] head = new byte[15];
            new DataInputStream(s.getInputStream()).readFully(head);
            assertEquals("HTTP/1.1 200 OK", new String(head, StandardCharsets.US_ASCII), "the upgrade ignored");
        }
    }

    @Test
    void aStreamNotInFullWithinTheReadTimeoutIsAnswered408AndTheConnectionServesOn() throws Exception {
        try (RawHttp2 c = new RawHttp2(server.httpPort())) {
            int held = c.request("POST", "/json", 100, false);
            c.data(held, "{".getBytes(StandardCharsets.US_ASCII), false);
            assertEquals(200, ask(c, "beside-a-held-stream").status(), "answered while the held stream waits");
            RawHttp2.HttpAnswer late = answer(c, held);
            assertEquals(408, late.status(), late.text());
            assertEquals("{\"error\":\"the request did not arrive in full within 1s of its headers\"}", late.text());
            Await.until("the held stream reset with NO_ERROR", Await.GENEROUS, () -> c.resets.containsKey(held));
            assertEquals(0, c.resets.get(held));
            assertEquals(200, ask(c, "after-a-408").status(), "the connection serves on");
            assertFalse(c.closedByServer());
        }
    }

    @Test
    void aBodyAnnouncedOverTheLimitIsAnswered413AtOnce() throws Exception {
        try (RawHttp2 c = new RawHttp2(server.httpPort())) {
            int id = c.request("POST", "/json", 2L << 20, false);
            c.flush();
            RawHttp2.HttpAnswer a = answer(c, id);
            assertEquals(413, a.status(), a.text());
            assertEquals("{\"error\":\"request body larger than the limit of 1048576 bytes\"}", a.text());
            Await.until("the rest of the stream refused", Await.GENEROUS, () -> c.resets.containsKey(id));
            assertEquals(0, c.resets.get(id), "RST_STREAM NO_ERROR: send no more of it");
        }
    }

    @Test
    void headersOverTheLimitAreAnswered431AndTheConnectionServesOn() throws Exception {
        try (RawHttp2 c = new RawHttp2(server.httpPort())) {
            int id = c.request("GET", "/healthcheck", -1, true, "a".repeat(17_000)); // over 16 KiB
            c.flush();
            assertEquals(431, answer(c, id).status());
            assertEquals(200, ask(c, "after-a-431").status(), "the connection serves on");
        }
    }

    @Test
    void streamsPastTheLimitAreRefused() throws Exception {
        try (RawHttp2 c = new RawHttp2(server.httpPort())) {
            List<Integer> held = new ArrayList<>();
            for (int i = 0; i <= Http2Requests.MAX_STREAMS; i++) {
                held.add(c.request("POST", "/json", 100, false));
            }
            c.flush();
            int last = held.get(Http2Requests.MAX_STREAMS);
            Await.until("the stream past the limit refused", Await.GENEROUS, () -> c.resets.containsKey(last));
            assertEquals(RawHttp2.REFUSED_STREAM, c.resets.get(last));
            for (int id : held.subList(0, Http2Requests.MAX_STREAMS)) {
                assertEquals(408, answer(c, id).status(), "held streams answered at their read timeout");
            }
            assertFalse(c.closedByServer());
        }
    }

    @Test
    void aFloodOfResetsIsCutOff() throws Exception {
        try (RawHttp2 c = new RawHttp2(server.httpPort())) {
            try {
                for (int i = 0; i < 1_000; i++) { // Netty's bound: 200 RST_STREAM frames in 30 s
                    c.openAndReset("/healthcheck");
                }
                c.flush();
            } catch (IOException e) {
                // the server closed the connection while the flood was still being written
            }
            c.awaitClosed(Await.GENEROUS.toSeconds());
            assertEquals(RawHttp2.ENHANCE_YOUR_CALM, c.goAwayErrors().get(0), "GOAWAYs: " + c.goAwayErrors());
            assertTrue(c.closedByServer());
        }
        try (RawHttp2 c = new RawHttp2(server.httpPort())) {
            assertEquals(200, ask(c, "after-resets").status(), "the next connection is served");
        }
    }

    @Test
    void anIdleConnectionIsClosedWithGoAway() throws Exception {
        try (RawHttp2 c = new RawHttp2(server.httpPort())) {
            assertEquals(200, ask(c, "idle").status());
            c.awaitClosed(Await.GENEROUS.toSeconds());
            assertTrue(c.closedByServer(), "closed after the idle timeout of 3s");
            assertEquals(0, c.goAwayError(), "GOAWAY NO_ERROR");
        }
    }

    @Test
    void aClientThatTakesNoAnswerIsClosedAfterTheIdleTimeout() throws Exception {
        try (RawHttp2 c = new RawHttp2(server.httpPort(), 0)) { // no room for any answer's body
            int id = json(c, "takes-no-answer");
            c.flush();
            Await.until("the answer's headers", Await.GENEROUS, () -> c.answers.containsKey(id));
            assertFalse(c.answered.contains(id), "its body waits for room the client never gives");
            c.awaitClosed(Await.GENEROUS.toSeconds());
            assertTrue(c.closedByServer(), "closed after the idle timeout of 3s");
            assertEquals(0, c.goAwayError(), "GOAWAY NO_ERROR: a timeout, not a protocol error");
        }
    }

    @Test
    void aGracefulStopAnswersTheOpenStreamThenCloses() throws Exception {
        ServerProcess stopping = ServerProcess.serve("--config", config.toString());
        try (RawHttp2 c = new RawHttp2(stopping.httpPort())) {
            byte[] b = body("graceful");
            int open = c.request("POST", "/json", b.length, false);
            c.flush();
            assertEquals(200, ask(c, "graceful").status(), "the connection is in use");
            stopping.process().toHandle().destroy(); // SIGTERM
            Await.until("GOAWAY", Await.GENEROUS, () -> c.goAwayError() >= 0);
            assertEquals(0, c.goAwayError());
            c.data(open, b, true);
            c.flush();
            RawHttp2.HttpAnswer a = answer(c, open);
            assertEquals(200, a.status(), a.text());
            c.awaitClosed(Await.GENEROUS.toSeconds());
            assertTrue(c.closedByServer(), "closed once its streams were answered");
        } finally {
            assertEquals(143, stopping.stop(), "stderr: " + stopping.stderr());
        }
    }
}
