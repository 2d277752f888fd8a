package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Await;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service configured as envoyproxy/ratelimit is, through its environment variables: ready only once a domain is
 * loaded ({@code HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED}), the debug port ({@code DEBUG_PORT}), the global shadow mode
 * ({@code SHADOW_MODE}: a rule over its limit answered OK over gRPC and /json, counted in its stats), and a SIGTERM under
 * load: health flips to NOT_SERVING first, requests keep being answered through the shutdown delay, the process
 * exits with the JVM's status after SIGTERM (143).
 */
class DropInIT {
    private static final String DOMAIN =
            """
            domain: edge
            descriptors:
              - key: remote_address
                rate_limit:
                  unit: second
                  requests_per_unit: 1000000
              - key: user
                rate_limit:
                  unit: hour
                  requests_per_unit: 1
            """;

    @Test
    void healthDebugPortShadowModeAndSigterm(@TempDir Path root) throws IOException {
        Path config = Files.createDirectories(root.resolve("ratelimit/config"));
        Map<String, String> env = Map.of(
                "PORT", "0",
                "GRPC_PORT", "0",
                "DEBUG_PORT", "0",
                "HOST", "127.0.0.1",
                "RUNTIME_ROOT", root.toString(),
                "RUNTIME_SUBDIRECTORY", "ratelimit",
                "RUNTIME_IGNOREDOTFILES", "true",
                "HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED", "true",
                "SHADOW_MODE", "true",
                "SLUICE_ADMIN_TOKEN", "debug-token");
        try (ServerProcess server = ServerProcess.launch(
                env,
                ServerProcess.javaJar(
                        "serve", "--shutdown-delay", "2s", "--watch-interval", "100ms", "--envoy-stats"))) {
            ManagedChannel channel = HealthIT.channel(server);
            try {
                var health = server.get("/healthcheck");
                assertEquals(500, health.statusCode(), health.body());
                assertEquals("not ready: no domain loaded (--healthy-with-config)", health.body());
                assertEquals(ServingStatus.NOT_SERVING, HealthIT.check(channel, Readiness.GRPC_SERVICE));
                Files.writeString(config.resolve("edge.yaml"), DOMAIN);
                Await.until("ready once a domain is loaded", Await.GENEROUS, () -> HealthIT.ready(server, channel));

                assertTrue(server.debugPort() > 0, server.stdout().toString());
                var stats = server.send(
                        HttpRequest.newBuilder(debug(server, "/stats")).build());
                assertEquals(200, stats.statusCode());
                assertTrue(stats.body().contains("sluice.server.rule.limit"), stats.body());
                var dump = server.send(HttpRequest.newBuilder(debug(server, "/rlconfig"))
                        .header("Authorization", "Bearer debug-token")
                        .build());
                assertEquals(200, dump.statusCode());
                assertTrue(dump.body().contains("edge.remote_address"), dump.body());

                shadowMode(server);

                sigtermUnderLoad(server, channel);
            } finally {
                channel.shutdownNow();
            }
        }
    }

    /**
     * A ConfigMap mounted as Kubernetes mounts it ({@code config/edge.yaml -> ..data/edge.yaml},
     * {@code ..data -> ..v1}, swapped whole), the service configured by the environment alone as envoyproxy/ratelimit's
     * README configures it: each swap is put in force, and the counts of a rule the swap did not change are kept.
     */
    @Test
    void aConfigMapSwapIsPutInForceWithNoFlags(@TempDir Path root) throws IOException {
        Path config = Files.createDirectories(root.resolve("ratelimit/config"));
        configMap(config, "v1", Map.of("edge.yaml", edge(2), "kept.yaml", KEPT));
        Map<String, String> env = Map.of(
                "PORT", "0",
                "GRPC_PORT", "0",
                "HOST", "127.0.0.1",
                "RUNTIME_ROOT", root.toString(),
                "RUNTIME_SUBDIRECTORY", "ratelimit",
                "RUNTIME_IGNOREDOTFILES", "true",
                "RUNTIME_WATCH_ROOT", "false");
        try (ServerProcess server = ServerProcess.launch(env, ServerProcess.javaJar("serve"))) {
            assertEquals(List.of(OK, OK, OVER), codes(server, "edge", "a", 3));
            assertEquals(List.of(OK), codes(server, "kept", "k", 1));

            configMap(config, "v2", Map.of("edge.yaml", edge(4), "kept.yaml", KEPT));
            AtomicLong probe = new AtomicLong();
            Await.until("the swap in force", Await.GENEROUS, () -> codes(
                            server, "edge", "probe-" + probe.incrementAndGet(), 3)
                    .equals(List.of(OK, OK, OK)));
            assertEquals(List.of(OK, OK, OK, OK, OVER), codes(server, "edge", "a", 5), "a changed limit starts anew");
            assertEquals(List.of(OK, OVER), codes(server, "kept", "k", 2), "the unchanged rule keeps its count");
        }
    }

    /**
     * The image as Kubernetes runs it, as far as it can run here: its entrypoint ({@code deploy/ratelimit}, a shell
     * script that starts the jar's {@code serve}) with the image's environment ({@code ENV} of
     * {@code deploy/Containerfile}) and a domain in its runtime directory's layout, nothing on the command line: the
     * domain is served and the service is healthy. What differs from the image, and why: the ports are 0 (8080, 8081
     * and 6070 may be taken here); the runtime root is a temporary directory laid out as
     * {@code /srv/runtime_data/current}; {@code SLUICE_JAR} names the jar built here, as {@code /opt/sluice} does not
     * exist; the process runs as the test's user, not 65532; and {@code java} is the machine's, not the image's JRE.
     */
    @Test
    void theImagesEntrypointServesWithTheImagesEnvironment(@TempDir Path srv) throws IOException {
        Map<String, String> env = new LinkedHashMap<>(DeployFilesTest.imageEnvironment());
        Path root = srv.resolve("runtime_data/current");
        Path config = Files.createDirectories(root.resolve(env.get("RUNTIME_APPDIRECTORY")));
        Files.writeString(config.resolve("edge.yaml"), edge(2));
        env.put("PORT", "0");
        env.put("GRPC_PORT", "0");
        env.put("DEBUG_PORT", "0");
        env.put("RUNTIME_ROOT", root.toString());
        env.put("SLUICE_JAR", ServerProcess.JAR.toAbsolutePath().toString());
        List<String> entrypoint =
                List.of("sh", DeployFilesTest.DEPLOY.resolve("ratelimit").toString());
        try (ServerProcess server = ServerProcess.launch(env, entrypoint)) {
            assertEquals(List.of(OK, OK, OVER), codes(server, "edge", "a", 3));
            var health = server.get("/healthcheck");
            assertEquals(200, health.statusCode(), health.body());
        }
    }

    private static final String KEPT =
            """
            domain: kept
            descriptors:
              - key: user
                rate_limit: {unit: hour, requests_per_unit: 2}
            """;

    private static final RateLimitResponse.Code OK = RateLimitResponse.Code.OK;
    private static final RateLimitResponse.Code OVER = RateLimitResponse.Code.OVER_LIMIT;

    private static String edge(int limit) {
        return "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: hour, requests_per_unit: "
                + limit + "}\n";
    }

    /** Publishes {@code files} as version {@code version} of a ConfigMap mounted at {@code dir}, as the kubelet does. */
    private static void configMap(Path dir, String version, Map<String, String> files) throws IOException {
        Path versionDir = Files.createDirectories(dir.resolve(".." + version));
        for (Map.Entry<String, String> f : files.entrySet()) {
            Files.writeString(versionDir.resolve(f.getKey()), f.getValue());
        }
        Path tmp = dir.resolve("..data_tmp");
        Files.deleteIfExists(tmp);
        Files.createSymbolicLink(tmp, versionDir.getFileName());
        Files.move(tmp, dir.resolve("..data"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        for (String name : files.keySet()) {
            Path link = dir.resolve(name);
            if (!Files.isSymbolicLink(link)) {
                Files.createSymbolicLink(link, Path.of("..data", name));
            }
        }
    }

    /** The overall codes of {@code n} checks of one descriptor; the rules' key names differ, so the domain picks it. */
    private static List<RateLimitResponse.Code> codes(ServerProcess server, String domain, String value, int n) {
        String key = domain.equals("edge") ? "remote_address" : "user";
        List<RateLimitResponse.Code> codes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            codes.add(server.shouldRateLimit(ServerProcess.request(domain, ServerProcess.descriptor(key, value)))
                    .getOverallCode());
        }
        return codes;
    }

    /** Checks run on; SIGTERM: health turns NOT_SERVING while checks are still answered, then the process ends. */
    private static void sigtermUnderLoad(ServerProcess server, ManagedChannel channel) {
        RateLimitRequest request = ServerProcess.request("edge", ServerProcess.descriptor("remote_address", "a"));
        AtomicLong flipped = new AtomicLong(Long.MAX_VALUE);
        AtomicBoolean running = new AtomicBoolean(true);
        List<long[]> answered = Collections.synchronizedList(new ArrayList<>()); // {start, end}
        List<Long> failed = Collections.synchronizedList(new ArrayList<>());
        Thread load = new Thread(() -> {
            while (running.get()) {
                long start = System.nanoTime();
                try {
                    RateLimitResponse r = server.shouldRateLimit(request);
                    assertEquals(RateLimitResponse.Code.OK, r.getOverallCode());
                    answered.add(new long[] {start, System.nanoTime()});
                } catch (StatusRuntimeException e) {
                    failed.add(start);
                    if (!server.process().isAlive()) {
                        return;
                    }
                }
            }
        });
        load.start();
        Iterator<HealthCheckResponse> watch = HealthGrpc.newBlockingStub(channel)
                .withDeadlineAfter(60, TimeUnit.SECONDS)
                .watch(HealthCheckRequest.newBuilder()
                        .setService(Readiness.GRPC_SERVICE)
                        .build());
        assertEquals(ServingStatus.SERVING, watch.next().getStatus());
        Await.until("checks answered under load", Await.GENEROUS, () -> answered.size() >= 20);
        server.process().toHandle().destroy(); // SIGTERM
        assertEquals(ServingStatus.NOT_SERVING, watch.next().getStatus(), "health flips as the stop begins");
        flipped.set(System.nanoTime());
        try {
            Await.until(
                    "the process ends", Await.GENEROUS, () -> !server.process().isAlive());
            running.set(false);
            load.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        assertEquals(143, server.process().exitValue(), "the JVM's status after SIGTERM; " + server.stderr());
        long afterFlip;
        synchronized (answered) {
            afterFlip = answered.stream().filter(a -> a[0] > flipped.get()).count();
        }
        assertTrue(afterFlip > 0, "checks made after health turned NOT_SERVING are answered during the delay");
        synchronized (failed) {
            assertTrue(
                    failed.stream().allMatch(start -> start > flipped.get()),
                    "no check made before health turned NOT_SERVING fails");
        }
    }

    /**
     * {@code SHADOW_MODE=true}: a rule of one request an hour, checked three times (twice over gRPC, once over /json),
     * is answered OK every time, its descriptor too with nothing remaining, and its refusals are counted as a dry-run
     * rule's: {@code over_limit} and {@code shadow_mode} on the debug port's stats.
     */
    private static void shadowMode(ServerProcess server) {
        assertTrue(
                String.join("\n", server.stdout()).contains("sluice: shadow mode (--shadow-mode)"),
                server.stdout().toString());
        RateLimitRequest request = ServerProcess.request("edge", ServerProcess.descriptor("user", "u"));
        List<RateLimitResponse> answers = new ArrayList<>();
        answers.add(server.shouldRateLimit(request));
        answers.add(server.shouldRateLimit(request));
        var json = server.post("/json", ServerProcess.json(request));
        assertEquals(200, json.statusCode(), json.body());
        answers.add(ServerProcess.parse(json.body()));
        for (RateLimitResponse r : answers) {
            assertEquals(OK, r.getOverallCode(), r.toString());
            assertEquals(OK, r.getStatuses(0).getCode(), r.toString());
        }
        assertEquals(
                0,
                answers.get(2).getStatuses(0).getLimitRemaining(),
                answers.get(2).toString());
        var stats = server.send(HttpRequest.newBuilder(debug(server, "/stats")).build());
        String rule = "ratelimit.service.rate_limit.edge.user.";
        for (String line : List.of(
                rule + "total_hits: 3",
                rule + "within_limit: 1",
                rule + "over_limit: 2",
                rule + "shadow_mode: 2",
                "ratelimit.service.global_shadow_mode: 2")) {
            assertTrue(stats.body().lines().anyMatch(line::equals), line + " in\n" + stats.body());
        }
    }

    private static URI debug(ServerProcess server, String path) {
        return URI.create("http://127.0.0.1:" + server.debugPort() + path);
    }
}
