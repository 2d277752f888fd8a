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
 * A store that is down: the filter answers as the store's failure policy says (open: pass; closed: refuse; throw:
 * the filter passes the request unlimited), never with a 500.
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
    void aStoreThatIsDownIsAnsweredByItsFailurePolicy(FailurePolicy policy) throws Exception {
        try (PolicyLimiter limiter = PolicyLimiter.builder(Policies.parse("oauth-token.yaml", SluiceFilterTest.POLICY))
                        .store(down(policy))
                        .build();
                TokenServer server = new TokenServer(Map.of(
                        "/token",
                        SluiceFilter.builder(limiter).domain("oauth-token").build()))) {
            HttpResponse<String> r = server.clientCredentials("/token", "app");
            assertTrue(r.headers().firstValue("RateLimit").isEmpty(), "no counts: the store gave none");
            if (policy == FailurePolicy.THROW) { // the limiter throws: the filter lets the request through, unlimited
                assertEquals(200, r.statusCode());
                assertTrue(r.headers().firstValue("RateLimit-Policy").isEmpty());
                assertEquals(1, server.served.get());
                return;
            }
            SluiceFilterTest.assertPolicy(SluiceFilterTest.only(r, "RateLimit-Policy"), "client_id", 3, 60);
            if (policy == FailurePolicy.FAIL_OPEN) {
                assertEquals(200, r.statusCode());
                assertEquals(1, server.served.get());
            } else {
                assertEquals(429, r.statusCode());
                assertEquals("7", r.headers().firstValue("Retry-After").orElseThrow(), "6.5 s rounded up");
                assertEquals(List.of("client_id"), Json.parseObject(r.body()).get("violated-policies"));
                assertEquals(0, server.served.get());
            }
        }
    }
}
