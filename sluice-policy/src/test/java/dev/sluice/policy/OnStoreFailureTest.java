package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.redis.RedisStore;
import io.lettuce.core.RedisClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code on_store_failure: allow | deny}, a domain's answer when its store fails, applied by the limiter; and
 * {@link Verdict#storeFailed()}, which tells that the store failed.
 */
class OnStoreFailureTest {

    static final String LIMITED = "descriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 5}\n";

    @Test
    void allowByDefaultDenyWhenSaid() {
        Policies p = Policies.parse(java.util.Map.of(
                "a.yaml", "domain: a\n" + LIMITED,
                "b.yaml", "domain: b\non_store_failure: deny\n" + LIMITED,
                "c.yaml", "domain: c\non_store_failure: allow\n" + LIMITED));
        assertEquals(OnStoreFailure.ALLOW, p.onStoreFailure("a"));
        assertEquals(OnStoreFailure.DENY, p.onStoreFailure("b"));
        assertEquals(OnStoreFailure.ALLOW, p.onStoreFailure("c"));
        assertEquals(OnStoreFailure.ALLOW, p.onStoreFailure("no-such-domain"));
    }

    @Test
    void anUnknownAnswerIsRefusedWithItsPlace() {
        PolicyError e = ConfigErrorsTest.only("domain: a\non_store_failure: refuse\n" + LIMITED);
        assertEquals(2, e.line());
        assertEquals(19, e.column());
        assertEquals("on_store_failure", e.field());
        assertEquals("unknown on_store_failure 'refuse': expected allow or deny", e.message());
        PolicyError list = ConfigErrorsTest.only("domain: a\non_store_failure: [deny]\n" + LIMITED);
        assertEquals("on_store_failure", list.field());
    }

    @Test
    void storeFailedTellsAFailurePolicyAnswerFromAStoreAnswer() throws IOException {
        Policies p = Policies.parse("a.yaml", "domain: a\non_store_failure: deny\n" + LIMITED);
        try (PolicyLimiter healthy = PolicyLimiter.builder(p).build()) {
            Verdict v = healthy.check("a", List.of(Descriptor.of("k", "v")), 1);
            assertTrue(v.allowed());
            assertFalse(v.storeFailed());
        }
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // nothing listens there once closed
        }
        RedisClient client = RedisClient.create("redis://127.0.0.1:" + port);
        try (RedisStore down = RedisStore.builder(client)
                        .startupTimeout(Duration.ZERO)
                        .timeout(Duration.ofSeconds(5))
                        .build();
                PolicyLimiter limiter = PolicyLimiter.builder(p).store(down).build()) {
            Verdict v = limiter.check("a", List.of(Descriptor.of("k", "v")), 1);
            assertFalse(v.allowed(), "the domain's on_store_failure (deny) answered, not the store's fail open: " + v);
            assertTrue(v.storeFailed(), v.toString());
        } finally {
            client.shutdown();
        }
    }
}
