package dev.sluice.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Durations printed as a configuration writes them. */
class DurationsTest {

    @Test
    void theLargestWholeUnit() {
        assertEquals("0s", Durations.format(Duration.ZERO));
        assertEquals("10s", Durations.format(Duration.ofSeconds(10)));
        assertEquals("90s", Durations.format(Duration.ofSeconds(90)));
        assertEquals("5m", Durations.format(Duration.ofMinutes(5)));
        assertEquals("6h", Durations.format(Duration.ofHours(6)));
        assertEquals("1d", Durations.format(Duration.ofDays(1)));
        assertEquals("400d", Durations.format(Duration.ofDays(400)));
        assertEquals("500ms", Durations.format(Duration.ofMillis(500)));
        assertEquals("1500ms", Durations.format(Duration.ofMillis(1500)));
        assertEquals("1500001ns", Durations.format(Duration.ofNanos(1_500_001)));
        assertEquals("-2s", Durations.format(Duration.ofSeconds(-2)));
        assertEquals(
                Duration.ofSeconds(Long.MAX_VALUE, 1).toString(),
                Durations.format(Duration.ofSeconds(Long.MAX_VALUE, 1)));
    }
}
