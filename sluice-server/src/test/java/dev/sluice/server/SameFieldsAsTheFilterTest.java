package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.testkit.ManualClock;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The service's rate-limit headers for the requests, policy and time of the starter's {@code SameFieldsAsTheServiceTest}
 * (sluice-spring-boot-starter), which asserts the same values: both front doors name, count and time a limit alike.
 */
class SameFieldsAsTheFilterTest {

    /** The policy both tests use. */
    static final String POLICY =
            """
            domain: api
            descriptors:
              - key: client_id
                rate_limit: {unit: minute, requests_per_unit: 3}
              - key: client_id
                value: big
                rate_limit: {unit: minute, requests_per_unit: 2, name: 'größe "2"'}
            """;

    /** The time both tests decide at: a quarter of a second into a minute. */
    static final Instant NOW = Instant.parse("2026-01-01T10:00:00.250Z");

    final RateLimitAdapter service = new RateLimitAdapter(
            PolicyLimiter.builder(Policies.parse("api.yaml", POLICY))
                    .clock(new ManualClock(NOW))
                    .build(),
            HeaderStyle.DRAFT10,
            new ServerMetrics(new SimpleMeterRegistry()),
            RequestCaps.DEFAULTS);

    Map<String, String> headers(String client) {
        RateLimitResponse r = service.shouldRateLimit(request("api", descriptor("client_id", client)));
        Map<String, String> headers = new LinkedHashMap<>();
        for (HeaderValue h : r.getResponseHeadersToAddList()) {
            headers.put(h.getKey(), h.getValue());
        }
        return headers;
    }

    @Test
    void aRuleNamedByItsPathCountedDownThenRefused() {
        Map<String, String> policy = Map.of("RateLimit-Policy", "\"client_id\";q=3;w=60");
        assertEquals(with(policy, "RateLimit", "\"client_id\";r=2;t=60"), headers("abc"));
        assertEquals(with(policy, "RateLimit", "\"client_id\";r=1;t=60"), headers("abc"));
        assertEquals(with(policy, "RateLimit", "\"client_id\";r=0;t=60"), headers("abc"));
        assertEquals(with(policy, "RateLimit", "\"client_id\";r=0;t=60"), headers("abc"), "refused");
    }

    @Test
    void aNamedLimitIsPrintableAsciiAndQuoted() {
        assertEquals(
                Map.of(
                        "RateLimit-Policy", "\"gr%C3%B6%C3%9Fe \\\"2\\\"\";q=2;w=60",
                        "RateLimit", "\"gr%C3%B6%C3%9Fe \\\"2\\\"\";r=1;t=60"),
                headers("big"));
    }

    static Map<String, String> with(Map<String, String> fields, String key, String value) {
        Map<String, String> m = new LinkedHashMap<>(fields);
        m.put(key, value);
        return m;
    }
}
