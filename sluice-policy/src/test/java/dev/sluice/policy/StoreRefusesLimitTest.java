package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.lease.LeasedStore;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.sync.SynchronizedStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A limit the store cannot keep (synchronized and leased mode keep fixed windows, sliding window counters and sliding
 * tails only) is a configuration error at the rule that defines it, one per limit: the limiter is not built, and a
 * reload that brings one in is refused with the configuration in force kept.
 */
class StoreRefusesLimitTest {

    static final String GOOD =
            """
            domain: d
            descriptors:
              - key: client_id
                rate_limit: {unit: minute, requests_per_unit: 2}
            """;

    /** Two rules the stores refuse (a token bucket from the file, a sliding log of its own) and one they keep. */
    static final String BAD =
            """
            domain: d
            algorithm: token_bucket
            descriptors:
              - key: client_id
                rate_limit: {unit: minute, requests_per_unit: 2}
              - key: user
                rate_limit: {unit: second, requests_per_unit: 5, algorithm: sliding_log}
              - key: ip
                rate_limit: {unit: second, requests_per_unit: 5, algorithm: sliding_tail}
            """;

    @TempDir
    Path dir;

    static Stream<Arguments> stores() {
        Supplier<RateLimitStore> leased = () -> LeasedStore.builder(InMemoryCounterStore.create())
                .manualRounds()
                .build();
        Supplier<RateLimitStore> synchronize = () -> SynchronizedStore.builder(InMemoryCounterStore.create())
                .manualRounds()
                .build();
        return Stream.of(Arguments.of("leased", leased), Arguments.of("synchronized", synchronize));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void aLimitTheStoreCannotKeepIsAnErrorAtItsRule(String mode, Supplier<RateLimitStore> store) {
        PolicyException e =
                assertThrows(PolicyException.class, () -> PolicyLimiter.builder(Policies.parse("bad.yaml", BAD))
                        .store(store.get())
                        .build());
        List<PolicyError> errors = e.errors();
        assertEquals(2, errors.size(), e.getMessage());
        assertEquals("bad.yaml", errors.get(0).file());
        assertEquals(4, errors.get(0).line(), errors.get(0).toString());
        assertEquals(5, errors.get(0).column(), errors.get(0).toString());
        assertTrue(
                errors.get(0)
                        .message()
                        .startsWith("rule client_id, limit 2/minute token_bucket: the store refuses it: "
                                + mode + " mode supports FIXED_WINDOW, SLIDING_WINDOW_COUNTER and SLIDING_TAIL, not "
                                + "TOKEN_BUCKET"),
                errors.get(0).message());
        assertTrue(
                errors.get(1).toString().startsWith("bad.yaml:6:5: rule user, limit 5/second sliding_log: "),
                errors.get(1).toString());
        assertTrue(
                errors.get(1).message().contains("not SLIDING_LOG"),
                errors.get(1).message());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void aReloadBringingOneInIsRefusedAndTheConfigurationInForceStays(String mode, Supplier<RateLimitStore> store)
            throws IOException {
        Path file = Files.writeString(dir.resolve("policy.yaml"), GOOD);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (PolicyLimiter limiter = PolicyLimiter.builder(Policies.load(file))
                .store(store.get())
                .meterRegistry(registry)
                .build()) {
            List<Descriptor> request = List.of(Descriptor.of("client_id", "abc"));
            assertTrue(limiter.check("d", request, 1).allowed());

            PolicyException e =
                    assertThrows(PolicyException.class, () -> limiter.update(Policies.parse("bad.yaml", BAD)));
            assertEquals(2, e.errors().size(), e.getMessage());
            assertEquals(1, limiter.version(), "update refused");

            Files.writeString(file, BAD);
            assertFalse(limiter.reload(file), "reload refused");
            assertEquals(1, limiter.version());
            assertEquals(
                    1.0,
                    registry.get(PolicyMetrics.CONFIG_LOADS)
                            .tag("result", "failure")
                            .counter()
                            .count(),
                    "the refused reload is counted");

            assertTrue(limiter.check("d", request, 1).allowed(), "the limit in force: 2 a minute, 1 taken");
            assertFalse(limiter.check("d", request, 1).allowed(), "and no more: its count was kept");
        }
    }
}
