package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.server.RedisServers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * envoyproxy/ratelimit's scenarios on Redis in leased mode: decided in memory within slices claimed from Redis, a
 * round every 100 ms. One instance holds every slice, so its answers are exact. And a configuration with a limit leased
 * mode cannot keep does not start the service: the error names the rule where it is defined.
 */
class RedisLeasedServeIT extends ServeScenarios {
    @Override
    List<String> storeArgs() {
        // Patient, as RedisServeIT: a claim slowed by a loaded machine must not become a failure answer.
        return List.of("--store", RedisServers.shared().uri(), "--lease-interval", "100ms", "--store-timeout", "2s");
    }

    @Test
    void aLimitLeasedModeCannotKeepStopsTheStartNamingItsRule() throws IOException {
        Path bad = Files.writeString(
                Files.createTempDirectory("sluice-leased").resolve("bucket.yaml"),
                """
                domain: bucket
                descriptors:
                  - key: client_id
                    rate_limit: {unit: second, requests_per_unit: 5, algorithm: token_bucket}
                """);
        ServerProcess.Result r = ServerProcess.run(
                "serve",
                "--config",
                bad.toString(),
                "--store",
                RedisServers.shared().uri(),
                "--lease-interval",
                "100ms");
        assertEquals(1, r.status(), r.out() + r.err());
        assertTrue(
                r.err()
                        .contains(
                                bad + ":3:5: rule client_id, limit 5/second token_bucket: the store refuses it: leased"
                                        + " mode supports FIXED_WINDOW, SLIDING_WINDOW_COUNTER and SLIDING_TAIL, not TOKEN_BUCKET"),
                r.err());
        assertTrue(r.err().contains("the configuration has 1 error(s); not started"), r.err());
    }
}
