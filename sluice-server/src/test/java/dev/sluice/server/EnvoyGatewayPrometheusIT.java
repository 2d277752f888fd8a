package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Await;
import dev.sluice.testkit.server.Certificates;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The environment Envoy Gateway gives envoyproxy/ratelimit (its {@code internal/infrastructure/kubernetes/ratelimit/
 * resource.go}, Prometheus on), the image swapped for Sluice's: it starts, warns that the mapping file of the optional
 * ConfigMap is absent, and serves {@code GET :19001/metrics} with Sluice's meters and envoyproxy/ratelimit's stats
 * under the names its Prometheus sink gives them, each value exact. And a mapping file that asks for what Sluice does
 * not implement stops the jar at start, naming its line.
 *
 * <p>What is substituted, and why: the xDS server is one in this JVM ({@link XdsTestServer}) at 127.0.0.1 instead of
 * {@code envoy-gateway:18001}; the TLS variables ({@code GRPC_SERVER_USE_TLS}, {@code GRPC_SERVER_TLS_CERT},
 * {@code GRPC_SERVER_TLS_KEY}, {@code GRPC_SERVER_TLS_CA_CERT}, {@code CONFIG_GRPC_XDS_SERVER_USE_TLS},
 * {@code CONFIG_GRPC_XDS_CLIENT_TLS_CERT}, {@code CONFIG_GRPC_XDS_CLIENT_TLS_KEY},
 * {@code CONFIG_GRPC_XDS_SERVER_TLS_CACERT}) are left out, since GrpcTlsIT and the xDS tests cover them and the
 * certificates of {@code /certs} are not here; {@code REDIS_URL} names a Redis of the test's that asks every client for
 * a certificate, reached with the client certificate Envoy Gateway gives as {@code REDIS_TLS_CLIENT_CERT} and
 * {@code REDIS_TLS_CLIENT_KEY}, and {@code REDIS_TLS_CACERT} naming the test's CA; the flags
 * {@code --http-port 0 --grpc-port 0} free the ports Envoy Gateway leaves at 8080 and 8081, and
 * {@code --store-timeout 2s} keeps a loaded machine's slow Redis call from being answered as a store failure.
 * {@code PROMETHEUS_ADDR=:19001} is kept as it is: 19001 lies below the ephemeral range, so no other test's port-0
 * listener takes it.
 */
class EnvoyGatewayPrometheusIT {
    private static final String MAPPER = "/etc/statsd-exporter/conf.yaml";

    @Test
    void envoyGatewaysEnvironmentServesItsPrometheusNames(@TempDir Path tls) throws Exception {
        assertFalse(Files.exists(Path.of(MAPPER)), "the optional ConfigMap's file must be absent here");
        Certificates certs = new Certificates(tls);
        certs.ca("ca");
        certs.signed("redis", "ca", "subjectAltName=IP:127.0.0.1");
        certs.signed("client", "ca", "extendedKeyUsage=clientAuth");
        try (RedisServer redis = RedisServers.startTls(certs.crt("redis"), certs.key("redis"), certs.crt("ca"), "yes");
                XdsTestServer xds = XdsTestServer.start(0)) {
            Map<String, String> env = new LinkedHashMap<>();
            env.put("RUNTIME_ROOT", "/data");
            env.put("RUNTIME_SUBDIRECTORY", "ratelimit");
            env.put("RUNTIME_IGNOREDOTFILES", "true");
            env.put("RUNTIME_WATCH_ROOT", "false");
            env.put("LOG_LEVEL", "info");
            env.put("USE_STATSD", "false");
            env.put("CONFIG_TYPE", "GRPC_XDS_SOTW");
            env.put("CONFIG_GRPC_XDS_SERVER_URL", "127.0.0.1:" + xds.port());
            env.put("CONFIG_GRPC_XDS_NODE_ID", "envoy-ratelimit");
            env.put("FORCE_START_WITHOUT_INITIAL_CONFIG", "true");
            env.put("REDIS_SOCKET_TYPE", "tcp");
            env.put("REDIS_URL", redis.host() + ":" + redis.tlsPort());
            env.put("REDIS_TLS", "true");
            env.put("REDIS_TLS_CLIENT_CERT", certs.crt("client").toString());
            env.put("REDIS_TLS_CLIENT_KEY", certs.key("client").toString());
            env.put("REDIS_TLS_CACERT", certs.crt("ca").toString());
            env.put("USE_PROMETHEUS", "true");
            env.put("PROMETHEUS_ADDR", ":19001");
            env.put("PROMETHEUS_MAPPER_YAML", MAPPER);
            try (ServerProcess server = ServerProcess.serve(env, "--store-timeout", "2s")) {
                // printed after the ports ServerProcess waits for, and on standard error by another thread
                String listening = "sluice: prometheus listening on 127.0.0.1:19001/metrics"
                        + " (envoyproxy/ratelimit's default mapping)";
                String warning = "sluice: warning: the statsd_exporter mapping " + MAPPER
                        + " (--prometheus-mapper) does not exist: envoyproxy/ratelimit's default mapping is used"
                        + " instead";
                Await.until(
                        "the listener's line and the warning",
                        Await.GENEROUS,
                        () -> server.stdout().contains(listening)
                                && server.stderr().contains(warning));
                assertEquals(
                        1, server.stderr().stream().filter(warning::equals).count(), "one warning: " + server.stderr());
                String store = " on rediss://127.0.0.1:" + redis.tlsPort() + "?tlsCert=" + certs.crt("client")
                        + "&tlsKey=***&tlsCa=" + certs.crt("ca");
                Await.until(
                        "the store named at start, its key's path hidden as a key parameter's value",
                        Await.GENEROUS,
                        () -> server.stdout().stream().anyMatch(l -> l.contains(store)));

                // a domain as Envoy Gateway names them, one rule of one key and one of two levels
                xds.set(
                        "v1",
                        RlsConf.config(
                                "default/eg/http",
                                "default/eg/http",
                                RlsConf.descriptor("remote_address", "", RlsConf.limit(RlsConf.HOUR, 3)),
                                RlsConf.descriptor(
                                        "client",
                                        "",
                                        null,
                                        RlsConf.descriptor("user", "alice", RlsConf.limit(RlsConf.HOUR, 10)))));
                Await.until("v1 acknowledged", Await.GENEROUS, () -> XdsConfigIT.acked(xds, "v1"));
                String address = "10.1.2." + ProcessHandle.current().pid() % 250; // a key of this run only
                int ok = 0;
                for (int i = 0; i < 5; i++) {
                    ok += server.shouldRateLimit(ServerProcess.request(
                                                    "default/eg/http",
                                                    ServerProcess.descriptor("remote_address", address)))
                                            .getOverallCode()
                                    == Code.OK
                            ? 1
                            : 0;
                }
                assertEquals(3, ok);
                for (int i = 0; i < 2; i++) {
                    assertEquals(
                            Code.OK,
                            server.shouldRateLimit(ServerProcess.request(
                                            "default/eg/http",
                                            ServerProcess.descriptor("client", "c-" + address, "user", "alice")))
                                    .getOverallCode());
                }

                String domain = "domain=\"default/eg/http\"";
                List<String> expected = List.of(
                        "ratelimit_service_rate_limit_total_hits{" + domain + ",key1=\"remote_address\"} 5",
                        "ratelimit_service_rate_limit_within_limit{" + domain + ",key1=\"remote_address\"} 3",
                        "ratelimit_service_rate_limit_over_limit{" + domain + ",key1=\"remote_address\"} 2",
                        "ratelimit_service_rate_limit_near_limit{" + domain + ",key1=\"remote_address\"} 1",
                        "ratelimit_service_rate_limit_total_hits{" + domain + ",key1=\"client\",key2=\"user_alice\"} 2",
                        "ratelimit_service_rate_limit_within_limit{" + domain
                                + ",key1=\"client\",key2=\"user_alice\"} 2",
                        "ratelimit_service_total_requests{grpc_method=\"ShouldRateLimit\"} 7",
                        "ratelimit_service_response_time_seconds_count{grpc_method=\"ShouldRateLimit\"} 7",
                        "ratelimit_service_response_time_seconds_bucket{grpc_method=\"ShouldRateLimit\",le=\"+Inf\"} 7",
                        "ratelimit_service_config_load_success 1",
                        "# TYPE ratelimit_service_response_time_seconds histogram");
                String[] body = {""};
                Await.until("the mapped stats of the 7 answers", Await.GENEROUS, () -> {
                    body[0] = metrics(server).body();
                    return body[0].lines().toList().containsAll(expected);
                });
                String text = body[0];
                assertFalse(text.contains("ratelimit_service_rate_limit_shadow_mode"), text);
                assertFalse(text.contains("ratelimit_service_config_load_error"), text);
                assertFalse(text.contains("ratelimit_service_should_rate_limit_error"), "no store error: " + text);
                assertFalse(text.contains("near_limit{" + domain + ",key1=\"client\""), text);
                assertFalse(text.contains("ratelimit_service_rate_limit_default"), "nothing left unmapped: " + text);
                // Sluice's own meters: every family GET /metrics on the HTTP port has, and their values
                List<String> families = server.get("/metrics")
                        .body()
                        .lines()
                        .filter(l -> l.startsWith("# TYPE "))
                        .toList();
                assertTrue(families.size() > 10, families.toString());
                String again = metrics(server).body();
                assertTrue(again.lines().toList().containsAll(families), again);
                assertTrue(
                        java.util.regex.Pattern.compile(
                                        "(?m)^sluice_server_requests_total\\{result=\"ok\",transport=\"grpc\"} 5(\\.0)?$")
                                .matcher(again)
                                .find(),
                        again);
                assertFalse(server.get("/metrics").body().contains("ratelimit_service"), "not on the HTTP port");

                HttpResponse<String> other =
                        server.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:19001/stats"))
                                .build());
                assertEquals(404, other.statusCode(), other.body());
            }
        }
    }

    /** A mapping file that asks for what Sluice does not implement stops the start, naming the file and line. */
    @Test
    void aMappingFeatureNotImplementedStopsTheStart(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(
                dir.resolve("conf.yaml"),
                """
                mappings:
                  - match: "ratelimit.service.rate_limit.*.*.total_hits"
                    name: "hits"
                    ttl: 10m
                """);
        ServerProcess.Result r =
                ServerProcess.run("serve", "--prometheus-addr", "127.0.0.1:0", "--prometheus-mapper", file.toString());
        assertEquals(2, r.status(), r.err());
        assertTrue(
                r.err()
                        .lines()
                        .toList()
                        .contains("sluice-server serve: the statsd_exporter mapping of --prometheus-mapper cannot be"
                                + " used: " + file + ":4: 'ttl' is a statsd_exporter feature Sluice does not implement"
                                + " (docs/envoy-ratelimit.md lists what it does)"),
                r.err());
    }

    private static HttpResponse<String> metrics(ServerProcess server) {
        HttpResponse<String> r = server.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:19001/metrics"))
                .build());
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
        return r;
    }
}
