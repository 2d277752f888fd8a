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

    @Test
    void aMeasuredDurationRoundedBelowItsLargestUnit() {
        assertEquals("1h", Durations.approximately(Duration.ofMillis(3_600_002)));
        assertEquals("1h", Durations.approximately(Duration.ofMillis(3_599_998)));
        assertEquals("6m", Durations.approximately(Duration.ofMillis(359_998)));
        assertEquals("62m", Durations.approximately(Duration.ofSeconds(3_725)));
        assertEquals("1235s", Durations.approximately(Duration.ofMillis(1_234_567)));
        assertEquals("25h", Durations.approximately(Duration.ofMillis(90_000_000 + 1_799_999)));
        assertEquals("26h", Durations.approximately(Duration.ofMillis(90_000_000 + 1_800_000)));
        assertEquals("1d", Durations.approximately(Duration.ofMillis(86_400_002)));
        assertEquals("1501ms", Durations.approximately(Duration.ofMillis(1_501)));
        assertEquals("2s", Durations.approximately(Duration.ofNanos(1_999_999_999)));
        assertEquals("500ms", Durations.approximately(Duration.ofMillis(500)));
        assertEquals("1500001ns", Durations.approximately(Duration.ofNanos(1_500_001)));
        assertEquals("0s", Durations.approximately(Duration.ZERO));
        assertEquals("-1h", Durations.approximately(Duration.ofMillis(-3_600_002)));
    }
}
