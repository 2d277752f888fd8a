package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.FailurePolicy;
import dev.sluice.RateLimitListener;
import dev.sluice.TimeSource;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.spi.AtomicDecider;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.spi.StoreDecision;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A store that is down: the filter answers as the domain's {@code on_store_failure} says (allow: pass; deny: refuse),
 * whatever the store's own failure policy, never with a 500, and with no count or wait the store never gave.
 */
class StoreFailureTest {

    /** A shared store whose every call fails, as one whose server is gone. */
    static RateLimitStore down(FailurePolicy policy) {
        AtomicDecider failing = new AtomicDecider() {
            @Override
            public StoreDecision decide(String key, long cost, boolean consume, long nowNanos) {
                throw new UncheckedIOException(new ConnectException("connection refused"));
            }

            @Override
            public boolean giveBack(String key, long cost, long place, long nowNanos) {
                throw new UncheckedIOException(new ConnectException("connection refused"));
            }
        };
        SharedStoreOptions options = new SharedStoreOptions(
                TimeSource.CLOCK,
                policy,
                Duration.ofSeconds(1),
                Duration.ofMillis(6_500),
                "test",
                RateLimitListener.NONE);
        return config -> SharedRateLimiter.create(config, failing, options);
    }

    @ParameterizedTest
    @EnumSource(FailurePolicy.class)
    void aStoreThatIsDownIsAnsweredByTheDomainsOnStoreFailure(FailurePolicy policy) throws Exception {
        for (String answer : List.of("allow", "deny")) {
            String yaml = SluiceFilterTest.POLICY.replace(
                    "domain: oauth-token\n", "domain: oauth-token\non_store_failure: " + answer + "\n");
            try (PolicyLimiter limiter = PolicyLimiter.builder(Policies.parse("oauth-token.yaml", yaml))
                            .store(down(policy))
                            .build();
                    TokenServer server = new TokenServer(Map.of(
                            "/token",
                            SluiceFilter.builder(limiter).domain("oauth-token").build()))) {
                HttpResponse<String> r = server.clientCredentials("/token", "app");
                String what = policy + ", on_store_failure: " + answer;
                assertTrue(r.headers().firstValue("RateLimit").isEmpty(), "no counts: the store gave none; " + what);
                SluiceFilterTest.assertPolicy(SluiceFilterTest.only(r, "RateLimit-Policy"), "client_id", 3, 60);
                if (answer.equals("allow")) {
                    assertEquals(200, r.statusCode(), what);
                    assertEquals(1, server.served.get(), what);
                } else {
                    assertEquals(429, r.statusCode(), what);
                    assertTrue(r.headers().firstValue("Retry-After").isEmpty(), "no wait invented; " + what);
                    assertEquals(
                            List.of("client_id"), Json.parseObject(r.body()).get("violated-policies"), what);
                    assertEquals(0, server.served.get(), what);
                }
            }
        }
    }
}
