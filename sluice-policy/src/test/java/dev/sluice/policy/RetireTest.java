package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A replaced configuration's limiters are closed once the checks holding it are done, and never under one: checks
 * on several threads while the configuration is replaced again and again never meet a closed limiter, and every
 * replaced engine ends closed.
 */
class RetireTest {

    static final String YAML =
            """
            domain: d
            descriptors:
              - key: k
                rate_limit: {unit: second, requests_per_unit: 4000000000}
            """;

    @Test
    void checksNeverMeetAClosedLimiterWhileTheConfigurationIsReplaced() throws Exception {
        Policies policies = Policies.parse("d.yaml", YAML);
        PolicyLimiter limiter = PolicyLimiter.builder(policies).build();
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
            limiter.update(policies);
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
    }
}
