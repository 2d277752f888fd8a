package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.sync.SynchronizedStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A replaced configuration's limiters are closed once the checks holding it are done, and never under one: checks
 * on several threads while the configuration is replaced again and again never meet a closed limiter, and every
 * replaced engine ends closed. Run on the in-memory store, whose checks hold nothing and whose limiters are let go
 * instead of closed, and on a synchronized store, whose limiters have rounds to end and are closed under the hold.
 */
class RetireTest {

    static final String YAML =
            """
            domain: d
            descriptors:
              - key: k
                rate_limit: {unit: second, requests_per_unit: 4000000000}
            """;

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void checksNeverMeetAClosedLimiterWhileTheConfigurationIsReplaced(boolean synchronizedMode) throws Exception {
        Policies policies = Policies.parse("d.yaml", YAML);
        // another limit: each reload drops the limiter the last one made, so a check on the replaced configuration
        // would meet a closed one if it were closed under it
        Policies other = Policies.parse("d.yaml", YAML.replace("4000000000", "3999999999"));
        RateLimitStore store = synchronizedMode
                ? SynchronizedStore.builder(InMemoryCounterStore.create()).build()
                : InMemoryStore.create();
        PolicyLimiter limiter = PolicyLimiter.builder(policies).store(store).build();
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicLong checks = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            List<Descriptor> request = List.of(Descriptor.of("k", "v" + t));
            Thread thread = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        if (!limiter.check("d", request, 1).allowed()) {
                            failures.add(new AssertionError("refused"));
                        }
                        checks.incrementAndGet();
                    } catch (RuntimeException e) {
                        failures.add(e);
                    }
                }
            });
            threads.add(thread);
            thread.start();
        }
        List<Engine> replaced = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            Engine e = limiter.engineForTest();
            assertNotNull(e);
            replaced.add(e);
            limiter.update(i % 2 == 0 ? other : policies);
            Thread.yield();
        }
        stop.set(true);
        for (Thread thread : threads) {
            thread.join();
        }
        assertEquals(List.of(), List.copyOf(failures));
        assertTrue(checks.get() > 0);
        for (Engine e : replaced) {
            assertTrue(e.closed(), "a replaced engine with no check left holding it is closed");
        }
        Engine current = limiter.engineForTest();
        assertNotNull(current);
        assertFalse(current.closed());
        limiter.close();
        assertTrue(current.closed());
        if (store instanceof AutoCloseable c) {
            c.close();
        }
    }

    /**
     * On the in-memory store a limiter whose shape a reload drops is let go, not closed: a check that still runs on
     * the replaced configuration decides on it (as if it had run just before the reload) instead of failing.
     */
    @Test
    void anInMemoryLimiterDroppedByAReloadIsLetGoNotClosed() {
        PolicyLimiter limiter =
                PolicyLimiter.builder(Policies.parse("d.yaml", YAML)).build();
        Engine first = limiter.engineForTest();
        assertNotNull(first);
        RateLimiter dropped = first.limiters().values().iterator().next().limiter;
        limiter.update(Policies.parse("d.yaml", YAML.replace("4000000000", "5")));
        assertTrue(first.closed(), "the replaced engine let its limiters go");
        assertTrue(dropped.tryAcquire("a key").allowed(), "the limiter it dropped still decides");
        limiter.close();
    }
}
