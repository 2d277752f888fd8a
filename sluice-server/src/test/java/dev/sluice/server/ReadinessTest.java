package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.Await;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** The grace of {@link Readiness}, its probes counted by hand; and its background probes, which outlive any failure. */
class ReadinessTest {

    /**
     * A probe whose store call ends in an {@link Error} (a stack overflow, the VM out of memory) is a failed probe, and
     * the probes go on: a background probe that ended in one stopped them for good, and readiness then stayed what it
     * was, unready for good or ready with the store down.
     */
    @Test
    void aProbeThatEndsInAnErrorIsAFailedOneAndTheProbesGoOn() {
        AtomicBoolean broken = new AtomicBoolean();
        RateLimitStore store = config -> {
            RateLimiter real = InMemoryStore.create().bind(config);
            return (RateLimiter) Proxy.newProxyInstance(
                    RateLimiter.class.getClassLoader(), new Class<?>[] {RateLimiter.class}, (proxy, method, args) -> {
                        if (broken.get() && method.getName().equals("tryAcquire")) {
                            throw new StackOverflowError("the probe's");
                        }
                        try {
                            return method.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        };
        try (Readiness r = new Readiness(store, null, Duration.ofSeconds(1), "test:")) {
            assertTrue(r.warmUp(Duration.ofSeconds(30)), "the store answers");
            broken.set(true);
            Await.until("unready once the probes fail", Await.GENEROUS, () -> !r.serving());
            broken.set(false);
            Await.until("ready again once they answer", Await.GENEROUS, r::serving);
        }
    }

    @Test
    void unreadyAfterTheGraceReadyAtTheFirstAnswerUnreadyForGoodOnStop() {
        try (Readiness r = new Readiness(InMemoryStore.create(), null, Duration.ofMillis(17), "memory:")) {
            assertFalse(r.serving(), "not before the store has answered");
            r.recordProbe(true);
            assertTrue(r.serving());
            for (int i = 1; i < Readiness.GRACE_FAILURES; i++) {
                r.recordProbe(false);
                assertTrue(r.serving(), "within the grace after " + i + " failed probe(s)");
            }
            r.recordProbe(false);
            assertFalse(r.serving(), Readiness.GRACE_FAILURES + " failed probes in a row");
            r.recordProbe(false);
            assertFalse(r.serving());
            r.recordProbe(true);
            assertTrue(r.serving(), "the first answered probe");
            r.recordProbe(false);
            r.recordProbe(true);
            r.recordProbe(false);
            assertTrue(r.serving(), "failures not in a row");
            r.stop();
            assertFalse(r.serving());
            r.recordProbe(true);
            assertFalse(r.serving(), "unready for good from the stop");
        }
    }

    @Test
    void unreadyUntilTheConfigurationAllowsItReadyAsSoonAsItChanges() {
        java.util.concurrent.atomic.AtomicBoolean arrived = new java.util.concurrent.atomic.AtomicBoolean();
        try (Readiness r =
                new Readiness(InMemoryStore.create(), null, Duration.ofMillis(17), "memory:", arrived::get)) {
            r.recordProbe(true);
            assertFalse(r.serving(), "the store answers, but no configuration is in force yet");
            arrived.set(true);
            r.configChanged();
            assertTrue(r.serving(), "at the change, not at the next probe");
            for (int i = 0; i < Readiness.GRACE_FAILURES; i++) {
                r.recordProbe(false);
            }
            assertFalse(r.serving(), "the store still counts once a configuration is in force");
        }
    }
}
