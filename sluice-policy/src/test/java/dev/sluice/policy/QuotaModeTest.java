package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.ManualClock;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code quota_mode: true} as envoyproxy/ratelimit answers it: a request is refused when an enforced limit is over, or
 * when every quota-mode limit of it is over; a quota limit over while another has room is reported over its limit
 * and does not refuse. The cases are those of envoyproxy/ratelimit's {@code test/service/ratelimit_test.go}
 * ({@code TestServicePerDescriptorQuotaMode}, {@code TestServiceMixedPerDescriptorModes},
 * {@code TestServiceMixedPerDescriptorModesUnderLimit}, {@code TestServiceQuotaModeOnlyAllOverTheLimit},
 * {@code TestServiceQuotaModeOnlySomeOverTheLimit}), each limit brought over it by real requests.
 */
class QuotaModeTest {
    final ManualClock clock = Clocks.atHourStart();

    /** {@code regular=limit} enforced and {@code quota=limit} in quota mode, each 2 a minute. */
    static final String MIXED =
            """
            domain: quota-domain
            descriptors:
              - key: regular
                value: limit
                rate_limit: {unit: minute, requests_per_unit: 2}
              - key: quota
                value: limit
                quota_mode: true
                rate_limit: {unit: minute, requests_per_unit: 2}
            """;

    /** {@code foo=bar} and {@code hello=world}, both in quota mode, each 2 a minute. */
    static final String QUOTAS =
            """
            domain: quota-domain
            descriptors:
              - key: foo
                value: bar
                quota_mode: true
                rate_limit: {unit: minute, requests_per_unit: 2}
              - key: hello
                value: world
                quota_mode: true
                rate_limit: {unit: minute, requests_per_unit: 2}
            """;

    static final Descriptor REGULAR = Descriptor.of("regular", "limit");
    static final Descriptor QUOTA = Descriptor.of("quota", "limit");
    static final Descriptor FOO = Descriptor.of("foo", "bar");
    static final Descriptor HELLO = Descriptor.of("hello", "world");

    PolicyLimiter limiter(String yaml) {
        return PolicyLimiter.builder(Policies.parse("quota.yaml", yaml))
                .clock(clock)
                .build();
    }

    /** Spends the whole minute's limit of {@code d}. */
    static void exhaust(PolicyLimiter l, Descriptor d) {
        for (int i = 0; i < 2; i++) {
            assertTrue(l.check("quota-domain", List.of(d), 1).allowed());
        }
    }

    @Test
    void quotaModeIsParsedAsItsOwnMode() {
        Policies p = Policies.parse("quota.yaml", MIXED);
        assertEquals(Mode.ENFORCE, p.rules("quota-domain").get(0).mode());
        assertEquals(Mode.QUOTA, p.rules("quota-domain").get(1).mode());
    }

    @Test
    void anEnforcedLimitOverRefusesWhateverTheQuota() { // TestServicePerDescriptorQuotaMode
        PolicyLimiter l = limiter(MIXED);
        exhaust(l, REGULAR);
        Verdict v = l.check("quota-domain", List.of(REGULAR, QUOTA), 1);
        assertFalse(v.allowed());
        assertEquals(Outcome.DENIED, v.descriptor(0).outcome());
        assertEquals(Outcome.NOT_COUNTED, v.descriptor(1).outcome(), "refused before the quota limits were asked");
    }

    @Test
    void theOnlyQuotaLimitOverRefuses() { // TestServiceMixedPerDescriptorModes
        PolicyLimiter l = limiter(MIXED);
        exhaust(l, QUOTA);
        Verdict v = l.check("quota-domain", List.of(REGULAR, QUOTA), 1);
        assertFalse(v.allowed(), "every quota limit of the request is over");
        assertEquals(Outcome.ALLOWED, v.descriptor(0).outcome());
        assertEquals(Outcome.DENIED, v.descriptor(1).outcome());
    }

    @Test
    void everythingUnderItsLimitIsAllowed() { // TestServiceMixedPerDescriptorModesUnderLimit
        Verdict v = limiter(MIXED).check("quota-domain", List.of(REGULAR, QUOTA), 1);
        assertTrue(v.allowed());
        assertEquals(Outcome.ALLOWED, v.descriptor(0).outcome());
        assertEquals(Outcome.ALLOWED, v.descriptor(1).outcome());
    }

    @Test
    void everyQuotaLimitOverRefuses() { // TestServiceQuotaModeOnlyAllOverTheLimit
        PolicyLimiter l = limiter(QUOTAS);
        exhaust(l, FOO);
        exhaust(l, HELLO);
        Verdict v = l.check("quota-domain", List.of(FOO, HELLO), 1);
        assertFalse(v.allowed());
        assertEquals(Outcome.DENIED, v.descriptor(0).outcome());
        assertEquals(Outcome.DENIED, v.descriptor(1).outcome());
    }

    @Test
    void someQuotaLimitsOverAreReportedNotEnforced() { // TestServiceQuotaModeOnlySomeOverTheLimit
        PolicyLimiter l = limiter(QUOTAS);
        exhaust(l, FOO);
        Verdict v = l.check("quota-domain", List.of(FOO, HELLO), 1);
        assertTrue(v.allowed(), "hello=world had room");
        assertEquals(Outcome.OVER_QUOTA, v.descriptor(0).outcome());
        assertTrue(v.descriptor(0).limit().orElseThrow().refused(), "reported over its limit");
        assertEquals(Outcome.ALLOWED, v.descriptor(1).outcome());
        assertEquals(
                0,
                l.check("quota-domain", List.of(HELLO), 1).descriptor(0).remaining(),
                "hello=world counted the allowed request: 2 - 1 - this one");
    }

    @Test
    void quotaModeContradictingAModeIsAnError() {
        PolicyException e = org.junit.jupiter.api.Assertions.assertThrows(
                PolicyException.class,
                () -> Policies.parse(
                        "quota.yaml",
                        """
                        domain: d
                        descriptors:
                          - key: k
                            quota_mode: true
                            mode: enforce
                            rate_limit: {unit: minute, requests_per_unit: 2}
                        """));
        assertTrue(
                e.getMessage().contains("quota_mode: true means quota, which contradicts mode: enforce"),
                e.getMessage());
    }
}
