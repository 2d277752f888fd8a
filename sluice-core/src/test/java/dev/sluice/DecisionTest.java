package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** {@link Decision}'s invariants: no decision can say something impossible. */
class DecisionTest {

    private static void assertRefused(String value, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(value), "the message should name " + value + ": " + e.getMessage());
    }

    @Test
    void anAllowedDecision() {
        Decision d = Decision.allowed(10, 4, 2_500_000_000L);
        assertTrue(d.allowed());
        assertEquals(10, d.limit());
        assertEquals(4, d.remaining());
        assertEquals(Duration.ofMillis(2_500), d.resetAfter());
        assertEquals(2_500_000_000L, d.resetAfterNanos());
        assertSame(Duration.ZERO, d.retryAfter());
        assertEquals(0, d.retryAfterNanos());
    }

    @Test
    void aDeniedDecision() {
        Decision d = Decision.denied(10, 0, 9, 1);
        assertFalse(d.allowed());
        assertEquals(0, d.remaining());
        assertEquals(Duration.ofNanos(9), d.resetAfter());
        assertEquals(Duration.ofNanos(1), d.retryAfter());
    }

    @Test
    void impossibleDecisionsAreRefused() {
        assertRefused("was 0", () -> Decision.allowed(0, 0, 0));
        assertRefused("was -1", () -> Decision.denied(-1, 0, 0, 1));
        assertRefused("was -1", () -> Decision.allowed(3, -1, 0));
        assertRefused("was 4", () -> Decision.allowed(3, 4, 0));
        assertRefused("was -5", () -> Decision.allowed(3, 1, -5));
        assertRefused("> 0 when denied, was 0", () -> Decision.denied(3, 1, 1, 0));
        assertRefused("> 0 when denied, was -2", () -> Decision.denied(3, 1, 1, -2));
    }

    @Test
    void extremesAreAllowed() {
        Decision d = Decision.denied(Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE);
        assertEquals(Duration.ofNanos(Long.MAX_VALUE), d.retryAfter());
        assertEquals(Long.MAX_VALUE, d.remaining());
        assertEquals(0, Decision.allowed(1, 0, 0).remaining());
    }

    @Test
    void equalityIsByValue() {
        Decision a = Decision.denied(3, 1, 5, 2);
        assertEquals(a, Decision.denied(3, 1, 5, 2));
        assertEquals(a.hashCode(), Decision.denied(3, 1, 5, 2).hashCode());
        assertNotEquals(a, Decision.denied(3, 1, 5, 3));
        assertNotEquals(a, Decision.denied(3, 1, 6, 2));
        assertNotEquals(a, Decision.denied(3, 2, 5, 2));
        assertNotEquals(a, Decision.denied(4, 1, 5, 2));
        assertNotEquals(Decision.allowed(3, 1, 5), a);
        assertNotEquals(a, "Decision");
        assertEquals(
                "Decision[allowed=false, limit=3, remaining=1, resetAfter=PT0.000000005S, "
                        + "retryAfter=PT0.000000002S]",
                a.toString());
    }

    @Test
    void anAnswerOfTheFailurePolicySaysSoAndIsNotEqualToTheLimits() {
        Decision limit = Decision.allowed(100, 99, 0);
        Decision open = Decision.fromFailurePolicy(limit);
        assertTrue(open.failed(), open.toString());
        assertFalse(limit.failed(), limit.toString());
        assertTrue(open.allowed());
        assertEquals(100, open.limit());
        assertEquals(99, open.remaining());
        assertNotEquals(limit, open, "a failed answer is not the limit's");
        assertEquals(open, Decision.fromFailurePolicy(Decision.allowed(100, 99, 0)));
        assertEquals(
                open.hashCode(),
                Decision.fromFailurePolicy(Decision.allowed(100, 99, 0)).hashCode());
        assertSame(open, Decision.fromFailurePolicy(open), "marking twice changes nothing");
        Decision closed = Decision.fromFailurePolicy(Decision.denied(3, 0, 1_000, 1_000));
        assertTrue(closed.failed() && !closed.allowed(), closed.toString());
        assertEquals(Duration.ofNanos(1_000), closed.retryAfter());
        assertTrue(closed.toString().contains("failed"), closed.toString());
        assertFalse(closed.timedOut(), "a failure, not said to be a timeout");
    }

    @Test
    void aFailurePolicysAnswerSaysWhetherTheStoreTimedOut() {
        Decision late = Decision.fromFailurePolicy(Decision.denied(3, 0, 1_000, 1_000), true);
        assertTrue(late.failed() && late.timedOut() && !late.allowed(), late.toString());
        assertTrue(late.toString().contains("timed out"), late.toString());
        Decision broken = Decision.fromFailurePolicy(Decision.denied(3, 0, 1_000, 1_000), false);
        assertNotEquals(broken, late, "a timeout is not the same answer as another failure");
        assertEquals(late, Decision.fromFailurePolicy(Decision.denied(3, 0, 1_000, 1_000), true));
        assertEquals(
                late.hashCode(),
                Decision.fromFailurePolicy(Decision.denied(3, 0, 1_000, 1_000), true)
                        .hashCode());
        assertSame(broken, Decision.fromFailurePolicy(broken, true), "marked once: as it is");
        assertFalse(Decision.allowed(3, 2, 0).timedOut(), "the limit's answer never timed out");
    }
}
