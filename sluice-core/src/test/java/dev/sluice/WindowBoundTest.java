package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.Durations;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class WindowBoundTest {

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aWindowTooLongForNanosecondArithmeticIsRejected(Algorithm algorithm) {
        Duration twoCenturies = Duration.ofDays(365L * 200);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RateLimiter.builder(algorithm)
                .limit(2, twoCenturies));
        assertTrue(e.getMessage().contains(Durations.format(twoCenturies)), e.getMessage());
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void theLongestWindowStillLimits(Algorithm algorithm) {
        TestClock clock = new TestClock();
        RateLimiter limiter = RateLimiter.builder(algorithm)
                .limit(2, LimiterConfig.MAX_WINDOW)
                .clock(clock)
                .build();
        assertTrue(limiter.tryAcquire("k", 2).allowed());
        clock.advance(Duration.ofSeconds(1));
        Decision d = limiter.tryAcquire("k");
        assertFalse(d.allowed(), d.toString());
        assertEquals(0, d.remaining());
    }
}
