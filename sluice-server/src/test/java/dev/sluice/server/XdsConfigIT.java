package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import dev.sluice.testkit.Await;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * {@code serve} with {@code CONFIG_TYPE=GRPC_XDS_SOTW} ({@code --xds-server}), configured through the environment
 * only: the configuration from a real ADS management server over gRPC, pushed, replaced, broken
 * and restarted while checks run: every update acknowledged and in force, a bad one NACKed with its errors and the last
 * good one kept, the stream opened again when the server comes back.
 */
class XdsConfigIT {

    static Any config(int limit) {
        return RlsConf.config("edge", "edge", RlsConf.descriptor("k", "", RlsConf.limit(RlsConf.HOUR, limit)));
    }

    /** How many of {@code n} checks of {@code key} in a row are allowed. */
    static int allowed(ServerProcess server, String key, int n) {
        int ok = 0;
        for (int i = 0; i < n; i++) {
            RateLimitResponse r =
                    server.shouldRateLimit(ServerProcess.request("edge", ServerProcess.descriptor("k", key)));
            ok += r.getOverallCode() == Code.OK ? 1 : 0;
        }
        return ok;
    }

    static boolean acked(XdsTestServer xds, String version) {
        return xds.receivedOne(r -> !r.getResponseNonce().isEmpty()
                && !r.hasErrorDetail()
                && r.getVersionInfo().equals(version));
    }

    @Test
    void updatesArePutInForceABadOneIsNackedAndTheStreamComesBack() throws Exception {
        XdsTestServer xds = XdsTestServer.start(0);
        int port = xds.port();
        try (xds;
                // as Envoy Gateway configures envoyproxy/ratelimit: the environment only
                ServerProcess server = ServerProcess.serve(Map.of(
                        "CONFIG_TYPE", "GRPC_XDS_SOTW",
                        "CONFIG_GRPC_XDS_SERVER_URL", "127.0.0.1:" + port,
                        "CONFIG_GRPC_XDS_NODE_ID", "sluice-test",
                        "CONFIG_GRPC_XDS_NODE_METADATA", "cluster=edge,zone=a=b",
                        "CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL", "100ms",
                        "XDS_CLIENT_BACKOFF_MAX_INTERVAL", "500ms",
                        "PORT", "0",
                        "GRPC_PORT", "0"))) {
            Await.until(
                    "the first request", Await.GENEROUS, () -> !xds.received().isEmpty());
            DiscoveryRequest first = xds.received().get(0);
            assertEquals(RlsConf.TYPE_URL, first.getTypeUrl());
            assertEquals("sluice-test", first.getNode().getId());
            assertEquals(
                    "edge",
                    first.getNode().getMetadata().getFieldsOrThrow("cluster").getStringValue());
            assertEquals(
                    "a=b",
                    first.getNode().getMetadata().getFieldsOrThrow("zone").getStringValue());
            assertEquals("", first.getVersionInfo());
            HttpResponse<String> waiting = server.get("/healthcheck");
            assertEquals(500, waiting.statusCode(), "not ready before the first configuration");
            assertTrue(
                    waiting.body().contains("no configuration yet from the xDS server 127.0.0.1:" + port),
                    waiting.body());

            xds.set("v1", config(3));
            Await.until("v1 acknowledged", Await.GENEROUS, () -> acked(xds, "v1"));
            Await.until(
                    "ready", Await.GENEROUS, () -> server.get("/healthcheck").statusCode() == 200);
            assertEquals(3, allowed(server, "a", 5));

            // checks run on another connection while the configuration changes under them: each is answered
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong answered = new AtomicLong();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread load = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        Code c = server.shouldRateLimit(
                                        ServerProcess.request("edge", ServerProcess.descriptor("k", "load")))
                                .getOverallCode();
                        assertTrue(c == Code.OK || c == Code.OVER_LIMIT, c.toString());
                        answered.incrementAndGet();
                    }
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            load.start();
            try {
                xds.set("v2", config(5));
                Await.until("v2 acknowledged", Await.GENEROUS, () -> acked(xds, "v2"));
                assertEquals(5, allowed(server, "b", 7));

                xds.set("v3", RlsConf.config("edge", "edge", RlsConf.descriptor("k", "", RlsConf.limit(0, 9))));
                Await.until("v3 refused", Await.GENEROUS, () -> xds.receivedOne(DiscoveryRequest::hasErrorDetail));
                DiscoveryRequest nack = xds.received().stream()
                        .filter(DiscoveryRequest::hasErrorDetail)
                        .findFirst()
                        .orElseThrow();
                assertEquals("v2", nack.getVersionInfo(), "a NACK names the version in force");
                String detail = nack.getErrorDetail().getMessage();
                assertEquals(3, nack.getErrorDetail().getCode(), "INVALID_ARGUMENT");
                assertTrue(detail.contains("xds:edge:") && detail.contains("unit"), detail);
                assertEquals(5, allowed(server, "c", 7), "the last good configuration stays");
                HttpResponse<String> health = server.get("/healthcheck");
                assertEquals(200, health.statusCode());
                assertTrue(
                        health.body().startsWith("OK\nbut xDS version 'v3' refused; xDS version 'v2' stays in force"),
                        health.body());

                xds.set("v4", config(2));
                Await.until("v4 acknowledged", Await.GENEROUS, () -> acked(xds, "v4"));
                assertEquals(2, allowed(server, "d", 4));
                assertEquals("OK", server.get("/healthcheck").body(), "a good update clears the refusal");
            } finally {
                stop.set(true);
                load.join();
            }
            assertEquals(null, failed.get(), "every check during the updates answered");
            assertTrue(answered.get() > 0);

            // the server goes away and comes back on the same port with a new snapshot
            xds.close();
            assertEquals(2, allowed(server, "e", 4), "without its server the configuration in force stays");
            try (XdsTestServer back = XdsTestServer.start(port)) {
                back.set("v5", config(4));
                Await.until("v5 acknowledged on a new stream", Await.GENEROUS, () -> acked(back, "v5"));
                assertEquals(
                        "v4", back.received().get(0).getVersionInfo(), "the new stream names the version in force");
                assertEquals(4, allowed(server, "f", 6));
            }
        }
    }
}
