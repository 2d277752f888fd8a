package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A store password is never printed: the real service on a real Redis that requires a password, given in the URI, in
 * {@code SLUICE_STORE_PASSWORD} or in a file, and wrong; every line the process writes, every error message and the
 * output of every endpoint ({@code /metrics}, {@code /rlconfig}, {@code /healthcheck}, {@code /dashboard/data}) is
 * scanned for it, raw and URL-encoded.
 */
class StoreSecretsIT {

    static final String PASSWORD = "pw-" + UUID.randomUUID();
    static final String WRONG = "wrong-" + UUID.randomUUID();
    static final String TOKEN = "admin-" + UUID.randomUUID();

    static final String POLICY =
            """
            domain: d
            descriptors:
              - key: k
                rate_limit: {unit: hour, requests_per_unit: 2}
            """;

    static RedisServer redis;
    static Path config;

    @BeforeAll
    static void redisWithAPassword() throws IOException {
        redis = RedisServers.start();
        redis.call("CONFIG", "SET", "requirepass", PASSWORD); // set once it answers: the start polls with PING
        config = Files.writeString(Files.createTempDirectory("sluice-secrets").resolve("d.yaml"), POLICY);
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    String uri(String password) {
        return "redis://:" + password + "@127.0.0.1:" + redis.port();
    }

    /** Serves, decides three requests on one key, reads every endpoint, stops; everything it printed or answered. */
    List<String> serveAndScan(Map<String, String> env, boolean storeReached, String... storeArgs) {
        List<String> args = new ArrayList<>(List.of("--config", config.toString(), "--store-timeout", "2s"));
        args.addAll(List.of(storeArgs));
        List<String> seen = new ArrayList<>();
        Map<String, String> withToken = new java.util.HashMap<>(env);
        withToken.put("SLUICE_ADMIN_TOKEN", TOKEN);
        try (ServerProcess server = ServerProcess.serve(withToken, args.toArray(new String[0]))) {
            RateLimitRequest r = request("d", descriptor("k", UUID.randomUUID().toString()));
            List<Code> codes = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                codes.add(server.shouldRateLimit(r).getOverallCode());
            }
            if (storeReached) {
                assertEquals(List.of(Code.OK, Code.OK, Code.OVER_LIMIT), codes, "decided on Redis");
            } else {
                assertEquals(List.of(Code.OK, Code.OK, Code.OK), codes, "the store failed: on_store_failure: allow");
            }
            for (String path : List.of("/metrics", "/healthcheck", "/dashboard/data", "/")) {
                seen.add(server.get(path).body());
            }
            // on a shared store, the bound on checks waiting for a store thread is shown too
            assertEquals(
                    SluiceServer.STORE_QUEUE,
                    Metrics.value(seen.get(0), "sluice_server_bound_limit{bound=\"store_queue\"}"),
                    0.0,
                    seen.get(0));
            var rlconfig = server.get("/rlconfig", "Authorization", "Bearer " + TOKEN);
            assertEquals(200, rlconfig.statusCode(), rlconfig.body());
            seen.add(rlconfig.body());
            seen.add(server.post("/json", ServerProcess.json(r)).body());
            server.stop(); // SIGTERM: the shutdown is logged too
            seen.addAll(server.stdout());
            seen.addAll(server.stderr());
            String store = storeArgs[1];
            String shown = store.contains("@") ? "redis://:***@127.0.0.1:" + redis.port() : store;
            assertTrue(
                    String.join("\n", server.stdout()).contains(" on " + shown + "\n"),
                    "the store is named, a password in its URI as ***: " + server.stdout());
        }
        return seen;
    }

    static void assertNowhere(String secret, List<String> outputs) {
        String encoded = URLEncoder.encode(secret, StandardCharsets.UTF_8);
        for (String o : outputs) {
            assertFalse(o.contains(secret) || o.contains(encoded), "the password is printed: " + o);
        }
    }

    @Test
    void aPasswordInTheUriIsPrintedNowhere() {
        assertNowhere(PASSWORD, serveAndScan(Map.of(), true, "--store", uri(PASSWORD)));
    }

    @Test
    void aPasswordInTheEnvironmentIsUsedAndPrintedNowhere() {
        List<String> seen = serveAndScan(
                Map.of(ServeCommand.STORE_PASSWORD_VARIABLE, PASSWORD),
                true,
                "--store",
                "redis://127.0.0.1:" + redis.port());
        assertNowhere(PASSWORD, seen);
    }

    @Test
    void aPasswordInAFileIsUsedAndPrintedNowhere() throws IOException {
        Path file = Files.writeString(Files.createTempDirectory("sluice-secret").resolve("password"), PASSWORD + "\n");
        List<String> seen = serveAndScan(
                Map.of(),
                true,
                "--store",
                "redis://127.0.0.1:" + redis.port(),
                "--store-password-file",
                file.toString());
        assertNowhere(PASSWORD, seen);
    }

    @Test
    void aWrongPasswordFailsTheStoreAndIsPrintedNowhere() {
        List<String> seen = serveAndScan(Map.of(), false, "--store", uri(WRONG), "--store-timeout", "100ms");
        assertNowhere(WRONG, seen);
        assertNowhere(PASSWORD, seen);
    }

    @Test
    void refusedStoreOptionsNameTheProblemButNotThePassword() {
        List<ServerProcess.Result> refused = List.of(
                ServerProcess.run("serve", "--store", "memcached://:" + PASSWORD + "@127.0.0.1:1"),
                ServerProcess.run("serve", "--store", "postgresql://app:" + PASSWORD + "@h"),
                ServerProcess.run("serve", "--store", "mongodb://app:" + PASSWORD + "@h:1"),
                ServerProcess.run("serve", "--store", "redis://:" + PASSWORD + "@h:1", "--store-password-file", "/"));
        for (ServerProcess.Result r : refused) {
            assertNotEquals(0, r.status(), r.out() + r.err());
            assertTrue(r.err().contains("--store"), r.err());
            assertNowhere(PASSWORD, List.of(r.out(), r.err()));
        }
        try {
            Path file = Files.writeString(Files.createTempFile("sluice-secret", ""), PASSWORD);
            ServerProcess.Result both =
                    ServerProcess.run("serve", "--store", uri(PASSWORD), "--store-password-file", file.toString());
            assertNotEquals(0, both.status());
            assertTrue(both.err().contains("give one"), both.err());
            assertNowhere(PASSWORD, List.of(both.out(), both.err()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
