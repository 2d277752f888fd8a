package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The default clock's fast path: the monotonic clock plus an offset to the wall clock measured every second. The wall
 * clock is a hand-moved one and the monotonic readings are given by hand, so every step is exact.
 */
class SystemNanosTest {

    private static final long SECOND = 1_000_000_000L;
    private static final long MONOTONIC_START = 7_000_000_000_123L; // any value: only differences count

    @Test
    void betweenMeasurementsTheTimeAdvancesWithTheMonotonicClock() {
        TestClock wall = new TestClock();
        SystemNanos nanos = new SystemNanos(wall, MONOTONIC_START);
        long start = wall.nanos();

        assertEquals(start, nanos.at(MONOTONIC_START));
        // the wall clock drifts 1 ms behind within the second: not seen until the next measurement
        wall.advance(Duration.ofMillis(499));
        assertEquals(start + 500_000_000L, nanos.at(MONOTONIC_START + 500_000_000L));
    }

    @Test
    void aSecondAfterTheLastMeasurementTheWallClockIsReadAgain() {
        TestClock wall = new TestClock();
        SystemNanos nanos = new SystemNanos(wall, MONOTONIC_START);

        wall.advance(Duration.ofMillis(999)); // the wall clock ran 1 ms slower than the monotonic one
        assertEquals(wall.nanos(), nanos.at(MONOTONIC_START + SECOND));
        // and the new offset holds from then on
        wall.advance(Duration.ofMillis(250));
        assertEquals(wall.nanos(), nanos.at(MONOTONIC_START + SECOND + 250_000_000L));
    }

    @Test
    void aStepOfTheWallClockIsFollowedWithinASecond() {
        TestClock wall = new TestClock();
        SystemNanos nanos = new SystemNanos(wall, MONOTONIC_START);
        long start = wall.nanos();

        wall.set(Instant.parse("2026-01-01T11:00:00Z")); // set back an hour
        assertEquals(start + SECOND - 1, nanos.at(MONOTONIC_START + SECOND - 1));
        assertEquals(wall.nanos(), nanos.at(MONOTONIC_START + SECOND));
        assertEquals(wall.nanos() + 1, nanos.at(MONOTONIC_START + SECOND + 1));
    }

    @Test
    void theDefaultClocksTimeIsTheSystemClocks() {
        LimiterConfig config = new LimiterConfig(
                Algorithm.FIXED_WINDOW, 10, Duration.ofSeconds(1), Clock.systemUTC(), false, 1, false);

        long before = instantNanos(Clock.systemUTC().instant());
        long now = config.clockNanos();
        long after = instantNanos(Clock.systemUTC().instant());

        // the two clocks drift apart by at most half a millisecond a second under NTP's slewing; 100 ms of slack on
        // either side also covers a VM's clock corrections, and still tells the wall clock from any other time. A
        // paused thread only widens [before, after].
        assertTrue(
                now >= before - 100_000_000L && now <= after + 100_000_000L,
                () -> now + " is not within 100 ms of [" + before + ", " + after + "]");
    }

    private static long instantNanos(Instant i) {
        return i.getEpochSecond() * SECOND + i.getNano();
    }
}
