package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Await;
import dev.sluice.testkit.server.ProcessStall;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /json} checks waiting for the store hold no thread, so what bounds them is {@link HttpApi#MAX_WAITING}:
 * with Redis stalled (SIGSTOP) and a store timeout longer than the test, 42 h2c connections of 100 streams each ask
 * 4,200 checks at once; exactly {@value HttpApi#MAX_WAITING} wait and the rest are answered 503 at once, while
 * {@code /healthcheck} is still answered and the gauge of the bound reads it; once Redis goes on, every waiting check
 * is answered by the store, and the gauge reads 0.
 */
class JsonWaitingIT {
    private static final int CONNECTIONS = 42;

    @Test
    void checksPastTheWaitingBoundAreAnsweredBusyAndTheOthersByTheStore() throws Exception {
        Path config = Files.createTempDirectory("sluice-waiting");
        Files.writeString(
                config.resolve("w.yaml"),
                """
                domain: w
                descriptors:
                  - key: client_id
                    rate_limit:
                      unit: hour
                      requests_per_unit: 1000000
                """);
        byte[] body = "{\"domain\":\"w\",\"descriptors\":[{\"entries\":[{\"key\":\"client_id\",\"value\":\"c\"}]}]}"
                .getBytes(StandardCharsets.UTF_8);
        try (RedisServer redis = RedisServers.start();
                ServerProcess server = ServerProcess.serve(
                        "--config", config.toString(), "--store", redis.uri(), "--store-timeout", "60s")) {
            List<RawHttp2> connections = new ArrayList<>();
            List<List<Integer>> streams = new ArrayList<>();
            try {
                for (int c = 0; c < CONNECTIONS; c++) {
                    connections.add(new RawHttp2(server.httpPort()));
                }
                ProcessStall stalled = ProcessStall.of(List.of(redis.pid()));
                try {
                    for (RawHttp2 c : connections) {
                        List<Integer> ids = new ArrayList<>();
                        for (int i = 0; i < Http2Requests.MAX_STREAMS; i++) {
                            int id = c.request("POST", "/json", body.length, false);
                            c.data(id, body, true);
                            ids.add(id);
                        }
                        c.flush();
                        streams.add(ids);
                    }
                    int asked = CONNECTIONS * Http2Requests.MAX_STREAMS;
                    int busy = asked - HttpApi.MAX_WAITING;
                    Await.until(
                            "the checks past the bound answered", Await.GENEROUS, () -> answered(connections) >= busy);
                    assertEquals(busy, answered(connections), "only the checks past the bound are answered");
                    for (RawHttp2 c : connections) {
                        for (int id : c.answered) {
                            RawHttp2.HttpAnswer a = c.answers.get(id);
                            assertEquals(503, a.status(), a.text());
                            assertEquals("1", a.headers().get("retry-after"));
                        }
                    }
                    int health = server.get("/healthcheck").statusCode(); // 500 once its probe of the store fails
                    assertTrue(health == 200 || health == 500, "the event loops still answer: " + health);
                    assertEquals(
                            HttpApi.MAX_WAITING,
                            Metrics.boundUsed(server, "http_waiting"),
                            "the gauge of the bound, at the bound");
                } finally {
                    stalled.close(); // Redis goes on
                }
                int asked = CONNECTIONS * Http2Requests.MAX_STREAMS;
                Await.until(
                        "every check answered once Redis goes on",
                        Await.GENEROUS,
                        () -> answered(connections) == asked);
                int decided = 0;
                for (RawHttp2 c : connections) {
                    for (int id : c.answered) {
                        int status = c.answers.get(id).status();
                        assertTrue(status == 200 || status == 503, "answered " + status);
                        decided += status == 200 ? 1 : 0;
                    }
                }
                assertEquals(HttpApi.MAX_WAITING, decided, "every waiting check decided by the store");
                Await.until(
                        "the gauge of the bound back at 0",
                        Await.GENEROUS,
                        () -> Metrics.boundUsed(server, "http_waiting") == 0);
            } finally {
                for (RawHttp2 c : connections) {
                    c.close();
                }
            }
        }
    }

    private static int answered(List<RawHttp2> connections) {
        int n = 0;
        for (RawHttp2 c : connections) {
            n += c.answered.size();
        }
        return n;
    }
}
