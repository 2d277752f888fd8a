package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** A limit prints its window as the configuration writes it. */
class LimitWindowTest {

    @Test
    void aLimitPrintsItsWindowSo() {
        Policies p = Policies.parse(
                "w.yaml", "domain: w\ndescriptors:\n  - {key: k, rate_limit: {window: 10s, requests_per_unit: 5}}\n");
        assertEquals("5/10s fixed_window", p.rules("w").get(0).limits().get(0).toString());
    }
}
