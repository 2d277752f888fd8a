package dev.sluice.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.TestClock;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Edge cases of the log shared by {@code SLIDING_LOG} and {@code SLIDING_WINDOW_COUNTER}. */
class ExpiringLogStateTest {

    private final TestClock clock = new TestClock();

    /**
     * Limit {@code Long.MAX_VALUE}, rejected requests counted: the total of the entries saturates. When the first
     * entry expires the live entries still hold at least the limit; subtracting the expired weight from the
     * saturated total used to leave 0, and the next request passed.
     */
    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"SLIDING_LOG", "SLIDING_WINDOW_COUNTER"})
    void aSaturatedTotalIsRecountedWhenEntriesExpire(Algorithm algorithm) {
        RateLimiter limiter = RateLimiter.builder(algorithm)
                .limit(Long.MAX_VALUE, Duration.ofSeconds(60))
                .clock(clock)
                .countRejected(true)
                .build();
        clock.at("12:00:00");
        assertTrue(limiter.tryAcquire("k", Long.MAX_VALUE).allowed());
        clock.at("12:00:30");
        assertFalse(limiter.tryAcquire("k", Long.MAX_VALUE).allowed());
        clock.at("12:01:10");
        Decision d = limiter.tryAcquire("k", 1);
        assertFalse(d.allowed(), "the rejected request of 12:00:30 still counts Long.MAX_VALUE: " + d);
        assertEquals(Duration.ofSeconds(20), d.retryAfter(), d.toString());
        clock.at("12:01:30");
        assertEquals(Long.MAX_VALUE - 1, limiter.peek("k", 1).remaining(), "only the rejection of 12:01:10 counts");
    }
}
