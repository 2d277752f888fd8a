package dev.sluice.example.oauth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The default profile: the global dry run, Allegro's first step. The traffic of {@link EnforceModeTest} is refused
 * nowhere and shows no rate-limit field, and the Prometheus page names each client, and each user of a client, that
 * the limits would have refused, with how many requests.
 */
@AutoConfigureObservability(tracing = false) // a test context exports no metrics unless asked: Prometheus is the point
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = {OAuthServerApplication.class, TokenEndpointHttp.FrozenClock.class})
class DryRunModeTest extends TokenEndpointHttp {

    @Test
    void nobodyIsRefusedAndTheMetricsNameWhoWouldHaveBeen() {
        List<HttpResponse<String>> partner = clientCredentials("partner", "partner-secret", 7);
        List<HttpResponse<String>> trusted = clientCredentials("trusted-backend", "trusted-secret", 70);
        HttpResponse<String> alice = authorizationCodeFlow("alice", "alice-password");
        assertEquals(200, alice.statusCode(), alice.body());
        String aliceRefresh = member(alice.body(), "refresh_token");
        List<HttpResponse<String>> aliceRefreshes =
                List.of(refresh(aliceRefresh), refresh(aliceRefresh), refresh(aliceRefresh));
        HttpResponse<String> bob = authorizationCodeFlow("bob", "bob-password");
        assertEquals(200, bob.statusCode(), bob.body());

        for (List<HttpResponse<String>> responses : List.of(partner, trusted, aliceRefreshes)) {
            for (HttpResponse<String> r : responses) {
                assertEquals(200, r.statusCode(), r.body());
                assertTrue(r.headers().firstValue("RateLimit").isEmpty(), "a dry run is not advertised");
                assertTrue(r.headers().firstValue("Retry-After").isEmpty());
            }
        }

        Map<String, Long> counts = detailedCounts();
        assertEquals(5, counts.get("partner allowed"), counts.toString());
        assertEquals(2, counts.get("partner would_deny"), counts.toString());
        assertEquals(3, counts.get("web-app/alice allowed"), counts.toString());
        assertEquals(1, counts.get("web-app/alice would_deny"), counts.toString());
        assertEquals(1, counts.get("web-app/bob allowed"), counts.toString());
        assertTrue(
                counts.keySet().stream().noneMatch(k -> k.startsWith("web-app/bob ") && !k.endsWith(" allowed")),
                counts.toString());
        assertTrue(counts.keySet().stream().noneMatch(k -> k.startsWith("trusted-backend")), counts.toString());
    }
}
