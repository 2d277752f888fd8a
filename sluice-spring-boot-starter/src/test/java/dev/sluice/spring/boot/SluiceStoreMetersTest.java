package dev.sluice.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.lease.LeasedStore;
import dev.sluice.policy.Descriptor;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.policy.Verdict;
import dev.sluice.sync.SynchronizedStore;
import dev.sluice.testkit.server.RedisServers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * A starter application in synchronized or leased mode exports the mode's own meters ({@code sluice.sync.*},
 * {@code sluice.leased.*}) on its meter registry, as the service does: they are bound with the limiter's metrics. In
 * exact mode with {@code sluice.store.over-limit-cache}, the refusals its cache gives without a store call are counted
 * in {@code sluice.over.limit.cache.hits}.
 */
class SluiceStoreMetersTest {

    final ApplicationContextRunner withMeters =
            new SluiceStoreModesTest().onRedis.withBean(MeterRegistry.class, SimpleMeterRegistry::new);

    static double count(MeterRegistry registry, String name, String... tags) {
        FunctionCounter c = registry.find(name).tags(tags).functionCounter();
        assertNotNull(c, name + " " + String.join("=", tags) + " is exported: " + registry.getMeters());
        return c.count();
    }

    @Test
    void synchronizedModeExportsItsFlushesAndWrites() {
        withMeters
                .withPropertyValues("sluice.store.mode=synchronized", "sluice.store.interval=1h")
                .run(context -> {
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    SynchronizedStore store = context.getBean(SynchronizedStore.class);
                    assertEquals(
                            5,
                            SluiceStoreModesTest.allowed(
                                    context.getBean(PolicyLimiter.class), SluiceStoreModesTest.newClient(), 6));
                    for (String name : new String[] {
                        "sluice.sync.flushes", "sluice.sync.refreshes", "sluice.sync.store.calls",
                        "sluice.sync.writes", "sluice.sync.conflicts", "sluice.sync.store.failures",
                        "sluice.sync.doubtful.writes", "sluice.sync.evictions"
                    }) {
                        count(registry, name);
                    }
                    assertEquals(store.stats().storeCalls(), count(registry, "sluice.sync.store.calls"));
                    assertEquals(0, count(registry, "sluice.sync.store.failures"));
                    assertNull(registry.find("sluice.leased.rounds").meter(), "no meter of the other mode");
                });
    }

    @Test
    void leasedModeExportsItsClaimsAndUnusedPermits() {
        withMeters
                .withPropertyValues("sluice.store.mode=leased", "sluice.store.interval=1h")
                .run(context -> {
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    LeasedStore store = context.getBean(LeasedStore.class);
                    assertEquals(
                            5,
                            SluiceStoreModesTest.allowed(
                                    context.getBean(PolicyLimiter.class), SluiceStoreModesTest.newClient(), 6));
                    double claimed = count(registry, "sluice.leased.permits", "direction", "claimed");
                    assertEquals(store.stats().permitsClaimed(), claimed);
                    assertEquals(5, claimed, "the five a day, claimed by this one instance");
                    assertEquals(store.stats().claims(), count(registry, "sluice.leased.claims", "on", "request"));
                    count(registry, "sluice.leased.rounds");
                    assertEquals(0, count(registry, "sluice.leased.store.failures"));
                    assertEquals(
                            store.unusedPermits(),
                            registry.get("sluice.leased.permits.unused").gauge().value());
                    assertNull(registry.find("sluice.sync.flushes").meter(), "no meter of the other mode");
                });
    }

    @Test
    void exactModeWithAnOverLimitCacheRefusesAKeyOverItsLimitWithoutAStoreCall() {
        withMeters.withPropertyValues("sluice.store.over-limit-cache=100").run(context -> {
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            PolicyLimiter limiter = context.getBean(PolicyLimiter.class);
            List<Descriptor> client = SluiceStoreModesTest.newClient();
            String id = client.get(0).entries().get(0).value();
            List<String> fromRedis = RedisServers.shared()
                    .commandsDuring(() -> assertEquals(
                            5, SluiceStoreModesTest.allowed(limiter, client, 6), "the sixth refused by Redis"));
            assertTrue(fromRedis.stream().anyMatch(c -> c.contains(id)), "decided on Redis: " + fromRedis);
            // Other tests' stores may share this Redis: what the client caused is told by its key.
            List<String> fromCache = RedisServers.shared().commandsDuring(() -> {
                for (int i = 0; i < 3; i++) {
                    Verdict v = limiter.check("api", client, 1);
                    assertFalse(v.allowed(), "check " + (i + 7));
                }
            });
            assertEquals(
                    List.of(),
                    fromCache.stream().filter(c -> c.contains(id)).toList(),
                    "refused from the cache: no command on Redis for the client");
            Counter hits = registry.find("sluice.over.limit.cache.hits")
                    .tags("domain", "api")
                    .counter();
            assertNotNull(hits, "exported: " + registry.getMeters());
            assertEquals(3, hits.count());
        });
    }
}
