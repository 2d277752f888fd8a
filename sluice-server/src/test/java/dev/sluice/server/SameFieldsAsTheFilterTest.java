package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.testkit.FieldsScenario;
import dev.sluice.testkit.ManualClock;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The service's rate-limit headers in the {@link FieldsScenario}, whose values the starter's
 * {@code SameFieldsAsTheServiceTest} asserts too: both front doors name, count and time a limit alike.
 */
class SameFieldsAsTheFilterTest {

    final RateLimitAdapter service = new RateLimitAdapter(
            PolicyLimiter.builder(Policies.parse("api.yaml", FieldsScenario.POLICY))
                    .clock(new ManualClock(FieldsScenario.NOW))
                    .build(),
            HeaderStyle.DRAFT10,
            new ServerMetrics(new SimpleMeterRegistry()),
            RequestCaps.DEFAULTS);

    Map<String, String> headers(String client) {
        RateLimitResponse r = service.shouldRateLimit(request("api", descriptor("client_id", client)));
        Map<String, String> headers = new HashMap<>();
        for (HeaderValue h : r.getResponseHeadersToAddList()) {
            headers.put(h.getKey(), h.getValue());
        }
        return headers;
    }

    @Test
    void aRuleNamedByItsPathCountedDownThenRefused() {
        for (Map<String, String> expected : FieldsScenario.COUNTED_FIELDS) {
            assertEquals(expected, headers(FieldsScenario.COUNTED));
        }
    }

    @Test
    void aNamedLimitIsPrintableAsciiAndQuoted() {
        assertEquals(FieldsScenario.NAMED_FIELDS, headers(FieldsScenario.NAMED));
    }
}
