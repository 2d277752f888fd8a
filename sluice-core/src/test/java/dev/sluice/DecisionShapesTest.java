package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link Decision} keeps every value exactly, whichever compact shape holds it, and compares by value. */
class DecisionShapesTest {

    private static final long INT_MAX = Integer.MAX_VALUE;

    @Test
    void an_allowed_decision_keeps_its_values_and_has_no_retry() {
        Decision d = Decision.allowed(100, 99, 600_000_000L);
        assertTrue(d.allowed());
        assertEquals(100, d.limit());
        assertEquals(99, d.remaining());
        assertEquals(Duration.ofMillis(600), d.resetAfter());
        assertEquals(0, d.retryAfterNanos());
        assertEquals(Duration.ZERO, d.retryAfter());
    }

    @Test
    void a_denied_decision_keeps_its_values() {
        Decision d = Decision.denied(100, 3, 7_000_000_000L, 5_000_000_000L);
        assertFalse(d.allowed());
        assertEquals(100, d.limit());
        assertEquals(3, d.remaining());
        assertEquals(Duration.ofSeconds(7), d.resetAfter());
        assertEquals(Duration.ofSeconds(5), d.retryAfter());
    }

    @Test
    void limits_at_and_beyond_the_int_range_are_kept_exactly() {
        Decision atIntMax = Decision.allowed(INT_MAX, INT_MAX, Long.MAX_VALUE);
        assertEquals(INT_MAX, atIntMax.limit());
        assertEquals(INT_MAX, atIntMax.remaining());
        assertEquals(Long.MAX_VALUE, atIntMax.resetAfterNanos());

        Decision wide = Decision.allowed(INT_MAX + 1, INT_MAX + 1, 1);
        assertTrue(wide.allowed());
        assertEquals(INT_MAX + 1, wide.limit());
        assertEquals(INT_MAX + 1, wide.remaining());

        Decision wideDenied = Decision.denied(Long.MAX_VALUE, 1L << 40, 2, 1);
        assertFalse(wideDenied.allowed());
        assertEquals(Long.MAX_VALUE, wideDenied.limit());
        assertEquals(1L << 40, wideDenied.remaining());
        assertEquals(2, wideDenied.resetAfterNanos());
        assertEquals(1, wideDenied.retryAfterNanos());
    }

    @Test
    void decisions_compare_by_value() {
        assertEquals(Decision.allowed(10, 4, 9), Decision.allowed(10, 4, 9));
        assertEquals(
                Decision.allowed(10, 4, 9).hashCode(),
                Decision.allowed(10, 4, 9).hashCode());
        assertEquals(Decision.denied(10, 0, 9, 3), Decision.denied(10, 0, 9, 3));
        assertEquals(Decision.allowed(INT_MAX + 1, 4, 9), Decision.allowed(INT_MAX + 1, 4, 9));
        assertNotEquals(Decision.allowed(10, 4, 9), Decision.allowed(10, 5, 9));
        assertNotEquals(Decision.allowed(10, 4, 9), Decision.allowed(11, 4, 9));
        assertNotEquals(Decision.denied(10, 0, 9, 3), Decision.denied(10, 0, 9, 4));
        assertEquals(
                "Decision[allowed=false, limit=10, remaining=0, resetAfter=PT0.000000009S, retryAfter=PT0.000000003S]",
                Decision.denied(10, 0, 9, 3).toString());
    }

    @Test
    void inconsistent_values_are_rejected_with_the_bad_value_named() {
        assertEquals(
                "remaining must be in [0, 10], was 11",
                assertThrows(IllegalArgumentException.class, () -> Decision.allowed(10, 11, 0))
                        .getMessage());
        assertEquals(
                "limit must be > 0, was 0",
                assertThrows(IllegalArgumentException.class, () -> Decision.allowed(0, 0, 0))
                        .getMessage());
        assertEquals(
                "retryAfterNanos must be > 0 when denied, was 0",
                assertThrows(IllegalArgumentException.class, () -> Decision.denied(10, 0, 5, 0))
                        .getMessage());
        assertEquals(
                "resetAfterNanos must be >= 0, was -1",
                assertThrows(IllegalArgumentException.class, () -> Decision.allowed(10, 0, -1))
                        .getMessage());
    }
}
