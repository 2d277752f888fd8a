package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.memory.InMemoryStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The grace of {@link Readiness}: probes counted by hand, no background probe. */
class ReadinessTest {
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
