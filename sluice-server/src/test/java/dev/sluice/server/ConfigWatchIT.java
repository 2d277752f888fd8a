package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Await;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serve --config} of a single file, mounted as Kubernetes mounts a ConfigMap: each swap of {@code ..data} is put
 * in force; a file nested too deeply is refused, the last good configuration stays, and {@code /healthcheck} says so
 * (still 200: the last good configuration decides) until a good file comes.
 */
class ConfigWatchIT {
    private static final String TOKEN = "watch-token";

    @TempDir
    Path dir;

    static String policy(int limit) {
        return "domain: watched\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: " + limit
                + "}\n";
    }

    /** A ConfigMap mount: {@code policy.yaml -> ..data/policy.yaml}, {@code ..data -> ..version}, swapped whole. */
    void publish(String version, String yaml) throws IOException {
        Path versionDir = Files.createDirectories(dir.resolve(".." + version));
        Files.writeString(versionDir.resolve("policy.yaml"), yaml);
        Path tmp = dir.resolve("..data_tmp");
        Files.deleteIfExists(tmp);
        Files.createSymbolicLink(tmp, versionDir.getFileName());
        Files.move(tmp, dir.resolve("..data"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        Path link = dir.resolve("policy.yaml");
        if (!Files.isSymbolicLink(link)) {
            Files.createSymbolicLink(link, Path.of("..data", "policy.yaml"));
        }
    }

    @Test
    void aSingleFileIsWatchedAndARefusalShowsInTheHealthCheck() throws IOException {
        publish("v1", policy(2));
        Path file = dir.resolve("policy.yaml");
        try (ServerProcess server = ServerProcess.serve(
                Map.of("SLUICE_ADMIN_TOKEN", TOKEN), "--config", file.toString(), "--watch-interval", "100ms")) {
            assertEquals("OK", server.get("/healthcheck").body());
            assertTrue(rlconfig(server).contains("watched.k: 2/hour"), rlconfig(server));

            publish("v2", policy(3));
            Await.until(
                    "the swap in force", Await.GENEROUS, () -> rlconfig(server).contains("watched.k: 3/hour"));

            publish("v3", "domain: watched\ndescriptors:\n  - key: " + "[".repeat(100_000) + "]".repeat(100_000));
            Await.until("the refusal in the health check", Await.GENEROUS, () -> !server.get("/healthcheck")
                    .body()
                    .equals("OK"));
            HttpResponse<String> health = server.get("/healthcheck");
            assertEquals(200, health.statusCode());
            assertTrue(
                    health.body().startsWith("OK\nbut the configuration in " + file + " cannot be loaded since "),
                    health.body());
            assertTrue(
                    health.body()
                            .contains("refused, version 2 stays in force: 1 error in rate limit policies:\n  " + file
                                    + ":3:57: nested too deeply"),
                    health.body());
            assertTrue(rlconfig(server).contains("watched.k: 3/hour"), "the last good configuration stays");
            HttpResponse<String> reload = server.post("/reload", "", "Authorization", "Bearer " + TOKEN);
            assertEquals(422, reload.statusCode());
            assertTrue(reload.body().contains(file + ":3:57: nested too deeply"), reload.body());

            publish("v4", policy(5));
            Await.until("the fixed file in force", Await.GENEROUS, () -> server.get("/healthcheck")
                    .body()
                    .equals("OK"));
            assertTrue(rlconfig(server).contains("watched.k: 5/hour"), rlconfig(server));
            HttpResponse<String> again = server.post("/reload", "", "Authorization", "Bearer " + TOKEN);
            assertEquals(200, again.statusCode(), again.body());
            assertEquals("reloaded " + file + ", version 4 in force", again.body());
            String log = String.join("\n", server.stderr());
            assertEquals(
                    2,
                    log.split("nested too deeply", -1).length - 1,
                    "logged once by the watcher, once by /reload: " + log);
            assertTrue(!log.contains("\tat "), "no stack trace: " + log);
        }
    }

    @Test
    void anEmptyDirectoryServesWithAWarning() {
        try (ServerProcess server = ServerProcess.serve("--config", dir.toString())) {
            Await.until("the warning", Await.GENEROUS, () -> server.stderr()
                    .contains("sluice: warning: " + dir + " defines no domain: every request is allowed until one is "
                            + "added"));
            assertEquals("OK", server.get("/healthcheck").body());
        }
    }

    static String rlconfig(ServerProcess server) {
        return server.get("/rlconfig", "Authorization", "Bearer " + TOKEN).body();
    }
}
