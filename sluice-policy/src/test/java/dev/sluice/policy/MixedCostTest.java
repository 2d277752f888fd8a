package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.ManualClock;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A cost per descriptor: a request of mixed costs is one decision, all or nothing. */
class MixedCostTest {

    final ManualClock clock = Clocks.atHourStart();

    static final String LIMITS =
            """
            domain: d
            descriptors:
              - key: client_id
                rate_limit: {unit: minute, requests_per_unit: 10}
              - key: route
                rate_limit: {unit: minute, requests_per_unit: 5}
            """;

    PolicyLimiter limiter() {
        return PolicyLimiter.builder(Policies.parse("d.yaml", LIMITS))
                .clock(clock)
                .build();
    }

    @Test
    void eachDescriptorTakesItsOwnCost() {
        try (PolicyLimiter l = limiter()) {
            Verdict v = l.check(
                    "d", List.of(Descriptor.of("client_id", "abc"), Descriptor.of("route", "/upload")), new long[] {1, 4
                    });
            assertTrue(v.allowed());
            assertEquals(9, v.descriptor(0).remaining());
            assertEquals(1, v.descriptor(1).remaining());
        }
    }

    /**
     * A cost per descriptor, all the same, is a check at that one cost: requests alternating between the two forms,
     * and between that cost and mixed ones, answer as one.
     */
    @Test
    void aCostPerDescriptorAllTheSameIsOneCost() {
        Policies policies = Policies.parse("d.yaml", LIMITS); // one model: the verdicts name the same rules
        try (PolicyLimiter perDescriptor =
                        PolicyLimiter.builder(policies).clock(clock).build();
                PolicyLimiter one = PolicyLimiter.builder(policies).clock(clock).build()) {
            List<Descriptor> request = List.of(Descriptor.of("client_id", "abc"), Descriptor.of("route", "/upload"));
            for (int i = 0; i < 6; i++) {
                long[] hits = i % 3 == 2 ? new long[] {1, 2} : new long[] {2, 2};
                Verdict a = perDescriptor.check("d", request, hits);
                Verdict b = i % 3 == 2 ? one.check("d", request, new long[] {1, 2}) : one.check("d", request, 2);
                OneOrManyDescriptorsTest.assertSameVerdict(b, a, "request " + i);
            }
            assertThrows(IllegalArgumentException.class, () -> perDescriptor.check("d", request, new long[] {0, 0}));
            assertThrows(IllegalArgumentException.class, () -> perDescriptor.check("d", request, new long[] {2}));
        }
    }

    @Test
    void aRequestOfMixedCostsRefusedByOneDescriptorConsumesFromNone() {
        try (PolicyLimiter l = limiter()) {
            List<Descriptor> request = List.of(Descriptor.of("client_id", "abc"), Descriptor.of("route", "/upload"));
            assertTrue(l.check("d", request, new long[] {2, 3}).allowed());
            Verdict refused = l.check("d", request, new long[] {2, 3});
            assertFalse(refused.allowed(), "the route has 2 left and the request asks 3");
            assertEquals(Outcome.NOT_COUNTED, refused.descriptor(0).outcome());
            assertEquals(Outcome.DENIED, refused.descriptor(1).outcome());
            assertEquals(8, refused.descriptor(0).remaining(), "the client's 2 were not taken");
            Verdict client = l.check("d", List.of(Descriptor.of("client_id", "abc")), 8);
            assertTrue(client.allowed(), "8 left for the client: the refusal took nothing");
            assertEquals(0, client.descriptor(0).remaining());
        }
    }

    @Test
    void twoDescriptorsOfOneCounterAddTheirCosts() {
        try (PolicyLimiter l = limiter()) {
            List<Descriptor> twice = List.of(Descriptor.of("route", "/a"), Descriptor.of("route", "/a"));
            Verdict over = l.check("d", twice, new long[] {3, 3});
            assertFalse(over.allowed(), "6 asked of one counter of 5");
            Verdict fits = l.check("d", twice, new long[] {2, 3});
            assertTrue(fits.allowed());
            assertEquals(0, fits.descriptor(1).remaining());
        }
    }

    @Test
    void costsAreChecked() {
        try (PolicyLimiter l = limiter()) {
            List<Descriptor> two = List.of(Descriptor.of("route", "/a"), Descriptor.of("route", "/b"));
            IllegalArgumentException length =
                    assertThrows(IllegalArgumentException.class, () -> l.check("d", two, new long[] {1}));
            assertEquals("one hits per descriptor: 2 descriptors, 1 hits", length.getMessage());
            IllegalArgumentException zero =
                    assertThrows(IllegalArgumentException.class, () -> l.check("d", two, new long[] {1, 0}));
            assertEquals("hits[1] must be >= 1, was 0", zero.getMessage());
        }
    }
}
