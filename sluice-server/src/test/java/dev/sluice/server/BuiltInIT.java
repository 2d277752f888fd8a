package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Await;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import java.net.http.HttpResponse;
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
        server = ServerProcess.serve(Map.of("SLUICE_ADMIN_TOKEN", TOKEN));
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
}
