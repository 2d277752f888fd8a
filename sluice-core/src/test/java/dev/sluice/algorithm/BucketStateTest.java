package dev.sluice.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import dev.sluice.TestClock;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Edge cases of {@code TOKEN_BUCKET} and {@code LEAKY_BUCKET}, which must admit exactly alike. */
class BucketStateTest {

    private final TestClock clock = new TestClock();

    private RateLimiter bucket(Algorithm algorithm, long limit, boolean countRejected) {
        return RateLimiter.builder(algorithm)
                .limit(limit, Duration.ofSeconds(60))
                .clock(clock)
                .countRejected(countRejected)
                .build();
    }

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"TOKEN_BUCKET", "LEAKY_BUCKET"})
    void aClockSteppedBackNeitherRefillsNorDrains(Algorithm algorithm) {
        RateLimiter limiter = bucket(algorithm, 3, false);
        clock.at("12:00:30");
        assertTrue(limiter.tryAcquire("k").allowed());
        clock.at("12:00:00");
        Decision peek = limiter.peek("k", 1);
        assertEquals(2, peek.remaining(), "stepped back 30 s, the bucket is as it was at 12:00:30: " + peek);
        Decision d = limiter.tryAcquire("k", 2);
        assertTrue(d.allowed(), d.toString());
        assertEquals(0, d.remaining(), d.toString());
        assertEquals(Duration.ofSeconds(60), d.resetAfter(), "empty again 60 s after 12:00:30, the newest time seen");
    }

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"TOKEN_BUCKET", "LEAKY_BUCKET"})
    void aCountedRejectionAtAClockSteppedBackNeverEmptiesTheBucket(Algorithm algorithm) {
        RateLimiter limiter = bucket(algorithm, 3, true);
        clock.at("12:00:30");
        assertTrue(limiter.tryAcquire("k", 3).allowed());
        clock.at("12:00:00");
        assertFalse(limiter.tryAcquire("k").allowed());
        clock.at("12:01:00");
        Decision d = limiter.peek("k", 1);
        assertEquals(1, d.remaining(), "1.5 permits have come back in the 30 s since 12:00:30: " + d);
        assertEquals(Duration.ofSeconds(30), d.resetAfter(), d.toString());
    }

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"TOKEN_BUCKET", "LEAKY_BUCKET"})
    void aReservationIsGoneOnceTheBucketHasBeenFullSince(Algorithm algorithm) {
        RateLimiter limiter = bucket(algorithm, 3, false);
        clock.at("12:00:00");
        Reservation r = limiter.reserve("k", 3);
        assertTrue(r.decision().allowed());
        clock.at("12:01:00");
        assertTrue(limiter.tryAcquire("k", 3).allowed(), "full again after one window");
        assertFalse(
                r.cancel(),
                "the permits of 12:00:00 were refilled at 12:01:00; giving them back again would"
                        + " let 6 through at 12:01:00");
        assertFalse(limiter.tryAcquire("k").allowed());
    }

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"TOKEN_BUCKET", "LEAKY_BUCKET"})
    void aReservationCancelledBeforeTheBucketRefillsGivesBackWhatIsStillMissing(Algorithm algorithm) {
        RateLimiter limiter = bucket(algorithm, 3, false);
        clock.at("12:00:00");
        Reservation r = limiter.reserve("k", 2);
        assertTrue(limiter.tryAcquire("k").allowed());
        clock.at("12:00:30"); // 1.5 permits back
        assertTrue(r.cancel());
        assertFalse(r.cancel(), "exactly once");
        Decision d = limiter.peek("k", 3);
        assertEquals(3, d.remaining(), "capped at the limit, not 3.5: " + d);
        assertEquals(Duration.ZERO, d.resetAfter(), d.toString());
        assertTrue(limiter.tryAcquire("k", 3).allowed());
        assertFalse(limiter.tryAcquire("k").allowed(), "never more than the limit after a cancel");
    }
}
