package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Await;
import dev.sluice.testkit.server.RedisServers;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
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

    /**
     * The leased store's own counts are in the metrics: a request on a key new to the instance claims once (one call to
     * read, one to write), the permits it was granted are counted, and the rounds run. The service's readiness probe
     * also claims, on a key of its own once a second: its claims are counted apart ({@code on="probe"}), so the
     * requests' count rises by exactly the request's one claim.
     */
    @Test
    void theLeasedStoresWorkIsInTheMetrics() {
        String page = server.get("/metrics").body();
        double claimsBefore = Metrics.value(page, "sluice_leased_claims_total{on=\"request\"}");
        double callsBefore = Metrics.value(page, "sluice_leased_store_calls_total");
        RateLimitRequest r = request("another", descriptor("key3", unique()));
        assertEquals(Code.OK, call(r).getOverallCode());
        String after = server.get("/metrics").body();
        assertEquals(
                claimsBefore + 1,
                Metrics.value(after, "sluice_leased_claims_total{on=\"request\"}"),
                "one claim, the request's: " + after);
        assertTrue(Metrics.value(after, "sluice_leased_store_calls_total") >= callsBefore + 2, after);
        assertTrue(Metrics.value(after, "sluice_leased_permits_total{direction=\"claimed\"}") >= 1, after);
        assertTrue(after.contains("\nsluice_leased_permits_unused "), "the gauge of permits held: " + after);
        double probeClaims = Metrics.value(after, "sluice_leased_claims_total{on=\"probe\"}");
        Await.until("rounds counted, and the probe's claims apart", Await.GENEROUS, () -> {
            String p = server.get("/metrics").body();
            return Metrics.value(p, "sluice_leased_rounds_total") > 0
                    && Metrics.value(p, "sluice_leased_claims_total{on=\"probe\"}") > probeClaims;
        });
    }
}
