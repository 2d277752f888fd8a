package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Await;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code serve} with no options but the ports: the built-in OAuth example on the in-memory store. */
class BuiltInIT {
    static final String TOKEN = "s3cret-admin-token";
    static ServerProcess server;

    @BeforeAll
    static void start() {
        server = ServerProcess.serve(Map.of("SLUICE_ADMIN_TOKEN", TOKEN), "--response-headers", "draft10");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            // 143 = 128 + SIGTERM: the JVM's status after its shutdown hooks ran, the service's graceful stop among
            // them.
            assertEquals(143, server.stop(), "a graceful stop on SIGTERM; stderr: " + server.stderr());
            Await.until("'sluice: stopped' in " + server.stdout(), Await.GENEROUS, () -> server.stdout()
                    .contains("sluice: stopped"));
        }
    }

    @Test
    void healthcheckAnswersOk() {
        HttpResponse<String> r = server.get("/healthcheck");
        assertEquals(200, r.statusCode());
        assertEquals("OK", r.body());
    }

    @Test
    void theOAuthExampleLimitsAUserTo20AMinute() {
        String client = "client-" + System.nanoTime();
        for (int i = 1; i <= 20; i++) {
            RateLimitResponse r =
                    server.shouldRateLimit(request("oauth-token", descriptor("client_id", client, "username", "bob")));
            assertEquals(Code.OK, r.getOverallCode(), "request " + i);
        }
        RateLimitResponse over =
                server.shouldRateLimit(request("oauth-token", descriptor("client_id", client, "username", "bob")));
        assertEquals(Code.OVER_LIMIT, over.getOverallCode());
        assertEquals(20, over.getStatuses(0).getCurrentLimit().getRequestsPerUnit());

        HttpResponse<String> trusted = server.post(
                "/json",
                "{\"domain\":\"oauth-token\",\"descriptors\":[{\"entries\":[{\"key\":\"client_id\","
                        + "\"value\":\"mobile-app\"}]}]}");
        assertEquals(200, trusted.statusCode());
        assertEquals(
                "{\"overallCode\":\"OK\",\"statuses\":[{\"code\":\"OK\",\"limitRemaining\":4294967295}]}",
                trusted.body());
    }

    @Test
    void theDashboardIsServedFromTheJar() {
        HttpResponse<String> index = server.get("/");
        assertEquals(200, index.statusCode());
        assertEquals(
                "text/html; charset=utf-8",
                index.headers().firstValue("Content-Type").orElse(""));
        assertTrue(index.body().contains("<title>Sluice</title>"), index.body());
        HttpResponse<String> css = server.get("/style.css");
        assertEquals(200, css.statusCode());
        assertEquals(
                "text/css; charset=utf-8",
                css.headers().firstValue("Content-Type").orElse(""));
        assertEquals(404, server.get("/no-such-file.js").statusCode());
        assertEquals(404, server.get("/../oauth-token.yaml").statusCode());
    }

    @Test
    void draft10HeadersNameTheRuleClosestToItsLimit() {
        String client = "client-" + System.nanoTime();
        RateLimitResponse r = server.shouldRateLimit(request(
                "oauth-token", descriptor("client_id", client), descriptor("client_id", client, "username", "al")));
        assertEquals(2, r.getResponseHeadersToAddCount(), r.toString());
        assertEquals("RateLimit-Policy", r.getResponseHeadersToAdd(0).getKey());
        assertEquals(
                "\"client_id.username\";q=20;w=60", r.getResponseHeadersToAdd(0).getValue());
        assertEquals("RateLimit", r.getResponseHeadersToAdd(1).getKey());
        assertTrue(
                r.getResponseHeadersToAdd(1).getValue().matches("\"client_id.username\";r=19;t=\\d+"),
                r.getResponseHeadersToAdd(1).getValue());
    }

    @Test
    void metricsCarryPerClientCountsAndEachRulesLimit() {
        String client = "dash-" + System.nanoTime();
        for (int i = 0; i < 22; i++) {
            server.shouldRateLimit(request("oauth-token", descriptor("client_id", client, "username", "eve")));
        }
        // 50 hits fill the per-client limit of the second; 50 more are refused (counts are of requests, not hits).
        RateLimitRequest fifty = request("oauth-token", descriptor("client_id", client)).toBuilder()
                .setHitsAddend(50)
                .build();
        assertEquals(Code.OK, server.shouldRateLimit(fifty).getOverallCode());
        assertEquals(Code.OVER_LIMIT, server.shouldRateLimit(fifty).getOverallCode());
        HttpResponse<String> page = server.get("/metrics");
        assertEquals(200, page.statusCode());
        assertTrue(page.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
        String body = page.body();
        // The per-user rule is not detailed_metric: no per-client series for it.
        assertTrue(!body.contains("rule=\"client_id.username\",value="), body);
        double allowed = Metrics.value(
                body,
                "sluice_policy_requests_detailed_total{domain=\"oauth-token\",outcome=\"allowed\",rule=\"client_id\",value=\""
                        + client + "\"}");
        double denied = Metrics.value(
                body,
                "sluice_policy_requests_detailed_total{domain=\"oauth-token\",outcome=\"denied\",rule=\"client_id\",value=\""
                        + client + "\"}");
        assertEquals(1, allowed, body);
        assertEquals(1, denied, body);
        assertEquals(
                50,
                Metrics.value(
                        body,
                        "sluice_server_rule_limit{domain=\"oauth-token\",limit=\"0\",rule=\"client_id\",window_seconds=\"1\"}"),
                0.0);
        assertEquals(
                1_000_000,
                Metrics.value(
                        body,
                        "sluice_server_rule_limit{domain=\"oauth-token\",limit=\"1\",rule=\"client_id_big-partner\",window_seconds=\"21600\"}"),
                0.0);
        assertTrue(
                Metrics.value(body, "sluice_server_requests_total{result=\"over_limit\",transport=\"grpc\"}") >= 3,
                body);
        // each bound of the service beside what it holds: the defaults of serve, and this test's gRPC connection
        assertEquals(10_000, Metrics.value(body, "sluice_server_bound_limit{bound=\"grpc_calls\"}"), 0.0);
        assertEquals(1_000, Metrics.value(body, "sluice_server_bound_limit{bound=\"grpc_queue\"}"), 0.0);
        assertEquals(
                HttpApi.MAX_WAITING, Metrics.value(body, "sluice_server_bound_limit{bound=\"http_waiting\"}"), 0.0);
        assertTrue(Metrics.value(body, "sluice_server_bound_limit{bound=\"grpc_connections\"}") >= 16, body);
        assertTrue(Metrics.value(body, "sluice_server_bound_used{bound=\"grpc_connections\"}") >= 1, body);
        for (String bound : List.of("grpc_calls", "grpc_queue", "http_waiting")) {
            assertTrue(body.contains("sluice_server_bound_used{bound=\"" + bound + "\"} "), bound + ": " + body);
        }
        assertTrue(!body.contains("bound=\"store_queue\""), "in memory, no store queue: " + body);
        // which build runs: the version its jar names, and its Java, as its first line said
        assertTrue(
                server.stdout()
                        .contains("sluice: version " + System.getProperty("sluice.server.version") + ", Java "
                                + System.getProperty("java.version")),
                server.stdout().toString());
        assertEquals(
                1,
                Metrics.value(
                        body,
                        "sluice_server_build_info{java=\"" + System.getProperty("java.version") + "\",version=\""
                                + System.getProperty("sluice.server.version") + "\"}"),
                0.0,
                body);
    }

    @Test
    void rlconfigNeedsTheAdminToken() {
        assertEquals(401, server.get("/rlconfig").statusCode());
        HttpResponse<String> wrong = server.get("/rlconfig", "Authorization", "Bearer nope");
        assertEquals(401, wrong.statusCode());
        assertTrue(wrong.body().contains("Authorization: Bearer"), wrong.body());
        HttpResponse<String> config = server.get("/rlconfig", "Authorization", "Bearer " + TOKEN);
        assertEquals(200, config.statusCode(), config.body());
        assertTrue(
                config.body()
                        .contains(
                                "oauth-token.client_id: 50/second sliding_tail, mode enforce (built-in:oauth-token.yaml:"),
                config.body());
        assertTrue(
                config.body().contains("oauth-token.client_id_big-partner: 500/second sliding_tail 1000000/6h"),
                config.body());
        HttpResponse<String> reload = server.post("/reload", "", "Authorization", "Bearer " + TOKEN);
        assertEquals(422, reload.statusCode());
        assertTrue(reload.body().contains("built-in example"), reload.body());
    }

    @Test
    void theCheckCommandAsksTheService() {
        String client = "check-" + System.nanoTime();
        ServerProcess.Result r = ServerProcess.run(
                "check",
                "--domain",
                "oauth-token",
                "--descriptor",
                "client_id=" + client + ",username=bob",
                "--hits",
                "20",
                "--target",
                "127.0.0.1:" + server.grpcPort());
        assertEquals(0, r.status(), r.err());
        RateLimitResponse answer = ServerProcess.parse(r.out());
        assertEquals(Code.OK, answer.getOverallCode());
        assertEquals(0, answer.getStatuses(0).getLimitRemaining());

        // 20 hits again, not 1: the built-in limit is a sliding tail of 20 a minute, and should the minute turn
        // between the two processes, the first 20 still weigh at least 1 for 57 s, so 20 more cannot pass
        ServerProcess.Result over = ServerProcess.run(
                "check",
                "--domain",
                "oauth-token",
                "--descriptor",
                "client_id=" + client + ",username=bob",
                "--hits",
                "20",
                "--target",
                "127.0.0.1:" + server.grpcPort());
        assertEquals(1, over.status(), over.err());
        assertTrue(over.out().contains("\"overallCode\": \"OVER_LIMIT\""), over.out());

        ServerProcess.Result bad = ServerProcess.run("check", "--domain", "oauth-token", "--descriptor", "client_id");
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("--descriptor 'client_id' is not valid"), bad.err());
    }
}
