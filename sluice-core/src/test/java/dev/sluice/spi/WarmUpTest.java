package dev.sluice.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.sluice.Algorithm;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class WarmUpTest {

    @Test
    void theWarmUpsNamespaceIsOneNoStoreMayBeGiven() {
        assertEquals("$sluice", WarmUp.namespace("sluice"));
        assertThrows(IllegalArgumentException.class, () -> SharedStoreOptions.requireNamespace("$sluice"));
    }

    @Test
    void everyAlgorithmIsPeekedAndDecidedConsumingOnTheWarmUpKeyAtTheStoresTime() {
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        List<Runnable> calls = WarmUp.calls(config -> new AtomicDecider() {
            @Override
            public StoreDecision decide(String key, long cost, boolean consume, long nowNanos) {
                seen.add(config.algorithm() + " " + key + " " + cost + " " + consume + " "
                        + (nowNanos == AtomicDecider.STORE_TIME));
                return new StoreDecision(true, 0, 0, 0, 0);
            }

            @Override
            public boolean giveBack(String key, long cost, long place, long nowNanos) {
                throw new AssertionError("a warm-up gives nothing back");
            }
        });
        calls.forEach(Runnable::run);
        List<String> expected = new ArrayList<>();
        for (Algorithm a : Algorithm.values()) {
            expected.add(a + " sluice-warm-up 1 false true");
            expected.add(a + " sluice-warm-up 1 true true");
        }
        assertEquals(expected, seen);
    }
}
