package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.memory.InMemoryStore;
import dev.sluice.spi.Durations;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The builder and {@link LimiterConfig}: every bad value refused at once, named in the message. */
class RateLimiterBuilderTest {

    private static void assertRefused(String value, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(value), "the message should name " + value + ": " + e.getMessage());
    }

    @Test
    void badLimitsAreRefusedBySetter() {
        RateLimiterBuilder b = RateLimiter.builder(Algorithm.FIXED_WINDOW);
        assertRefused("was 0", () -> b.limit(0, Duration.ofSeconds(1)));
        assertRefused("was -7", () -> b.limit(-7, Duration.ofSeconds(1)));
        assertRefused("was " + Long.MIN_VALUE, () -> b.limit(Long.MIN_VALUE, Duration.ofSeconds(1)));
    }

    @Test
    void badWindowsAreRefusedBySetter() {
        RateLimiterBuilder b = RateLimiter.builder(Algorithm.TOKEN_BUCKET);
        assertRefused("was 0s", () -> b.limit(1, Duration.ZERO));
        assertRefused("was -1ns", () -> b.limit(1, Duration.ofNanos(-1)));
        Duration tooLong = LimiterConfig.MAX_WINDOW.plusNanos(1);
        assertRefused("was " + Durations.format(tooLong), () -> b.limit(1, tooLong));
        Duration beyondNanos = Duration.ofSeconds(Long.MAX_VALUE / 1000);
        assertRefused("was " + Durations.format(beyondNanos), () -> b.limit(1, beyondNanos));
        NullPointerException npe = assertThrows(NullPointerException.class, () -> b.limit(1, null));
        assertTrue(npe.getMessage().contains("window"), npe.getMessage());
    }

    @Test
    void theLongestAndShortestWindowsAreAccepted() {
        assertEquals(
                LimiterConfig.MAX_WINDOW,
                RateLimiter.builder(Algorithm.SLIDING_TAIL)
                        .limit(1, LimiterConfig.MAX_WINDOW)
                        .config()
                        .window());
        for (Algorithm algorithm : Algorithm.values()) {
            RateLimiterBuilder b = RateLimiter.builder(algorithm).limit(1, Duration.ofNanos(1));
            LimiterConfig c = (algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? b.buckets(1) : b).config();
            assertEquals(1, c.windowNanos(), algorithm.toString());
        }
    }

    @Test
    void bucketsAndStrictApplyToTheSubWindowCounterOnly() {
        for (Algorithm algorithm : Algorithm.values()) {
            RateLimiterBuilder b = RateLimiter.builder(algorithm);
            if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
                assertSame(b, b.buckets(4).strict(true));
                assertRefused("was 0", () -> b.buckets(0));
                assertRefused("was -1", () -> b.buckets(-1));
            } else {
                assertRefused("not " + algorithm, () -> b.buckets(4));
                assertRefused("not " + algorithm, () -> b.strict(true));
            }
        }
    }

    @Test
    void moreBucketsThanNanosecondsInTheWindowAreRefusedAtBuild() {
        RateLimiterBuilder b =
                RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER).limit(1, Duration.ofNanos(59));
        assertRefused("was 60", b::build);
        assertEquals(59, b.buckets(59).config().subWindowNanos() * 59);
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "SLIDING_WINDOW_COUNTER", mode = EnumSource.Mode.EXCLUDE)
    void theDefaultBucketsDoNotLimitOtherAlgorithmsShortWindows(Algorithm algorithm) {
        assertTrue(RateLimiter.builder(algorithm)
                .limit(1, Duration.ofNanos(10))
                .build()
                .tryAcquire("k")
                .allowed());
    }

    @Test
    void buildWithoutALimitIsAnError() {
        IllegalStateException e =
                assertThrows(IllegalStateException.class, () -> RateLimiter.builder(Algorithm.SLIDING_LOG)
                        .build());
        assertTrue(e.getMessage().contains("limit"), e.getMessage());
    }

    @Test
    void nullsAreRefusedWithTheirName() {
        assertTrue(assertThrows(NullPointerException.class, () -> RateLimiter.builder(null))
                .getMessage()
                .contains("algorithm"));
        RateLimiterBuilder b = RateLimiter.builder(Algorithm.FIXED_WINDOW);
        assertTrue(assertThrows(NullPointerException.class, () -> b.clock(null))
                .getMessage()
                .contains("clock"));
        assertTrue(assertThrows(NullPointerException.class, () -> b.store(null))
                .getMessage()
                .contains("store"));
        b.limit(1, Duration.ofSeconds(1)).store(config -> null);
        assertTrue(
                assertThrows(NullPointerException.class, b::build).getMessage().contains("no limiter"));
    }

    @Test
    void defaultsAreTheDocumentedOnes() {
        LimiterConfig c = RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER)
                .limit(5, Duration.ofMinutes(1))
                .config();
        assertEquals(Algorithm.SLIDING_WINDOW_COUNTER, c.algorithm());
        assertEquals(5, c.limit());
        assertEquals(Duration.ofMinutes(1), c.window());
        assertEquals(Clock.systemUTC(), c.clock());
        assertFalse(c.countRejected());
        assertEquals(60, c.buckets());
        assertFalse(c.strict());
        assertEquals(1_000_000_000L, c.subWindowNanos());
    }

    @Test
    void theConfigurationReachesTheStore() {
        TestClock clock = new TestClock();
        LimiterConfig[] bound = new LimiterConfig[1];
        RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER)
                .limit(7, Duration.ofSeconds(70))
                .clock(clock)
                .countRejected(true)
                .buckets(7)
                .strict(true)
                .store(config -> {
                    bound[0] = config;
                    return InMemoryStore.create().bind(config);
                })
                .build();
        assertNotNull(bound[0]);
        assertEquals(
                new LimiterConfig(Algorithm.SLIDING_WINDOW_COUNTER, 7, Duration.ofSeconds(70), clock, true, 7, true),
                bound[0]);
        assertSame(bound[0], limiter.config());
        assertEquals(10_000_000_000L, bound[0].subWindowNanos());
    }

    @Test
    void theConfigRecordValidatesLikeTheBuilder() {
        Clock clock = new TestClock();
        assertRefused(
                "was 0",
                () -> new LimiterConfig(Algorithm.FIXED_WINDOW, 0, Duration.ofSeconds(1), clock, false, 60, false));
        assertRefused(
                "was -1s",
                () -> new LimiterConfig(Algorithm.FIXED_WINDOW, 1, Duration.ofSeconds(-1), clock, false, 60, false));
        assertRefused(
                "was 0",
                () -> new LimiterConfig(Algorithm.FIXED_WINDOW, 1, Duration.ofSeconds(1), clock, false, 0, false));
        assertThrows(
                NullPointerException.class,
                () -> new LimiterConfig(null, 1, Duration.ofSeconds(1), clock, false, 60, false));
        assertThrows(
                NullPointerException.class,
                () -> new LimiterConfig(Algorithm.FIXED_WINDOW, 1, Duration.ofSeconds(1), null, false, 60, false));
    }

    @Test
    void requestsAreCheckedAgainstTheConfig() {
        LimiterConfig c = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(3, Duration.ofSeconds(1))
                .config();
        assertRefused("null", () -> c.checkRequest(null, 1));
        assertRefused("empty", () -> c.checkRequest("", 1));
        assertRefused("was 0", () -> c.checkRequest("k", 0));
        assertRefused("was -3", () -> c.checkRequest("k", -3));
        assertRefused("was 4", () -> c.checkRequest("k", 4));
        c.checkRequest("k", 3);
        c.checkRequest(" ", 1);
    }

    @Test
    void clockNanosReadsTheClockToTheNanosecond() {
        TestClock clock = new TestClock();
        clock.at("12:00:00.123456789");
        LimiterConfig c = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(3, Duration.ofSeconds(1))
                .clock(clock)
                .config();
        assertEquals(TestClock.NOON.getEpochSecond() * 1_000_000_000L + 123_456_789L, c.clockNanos());
    }

    @Test
    void clockNanosReadsAnEpochNanosClockAsItsCount() {
        // a clock whose instant() a limiter must not read: epochNanos() is its time
        final class CountingClock extends Clock implements EpochNanosClock {
            @Override
            public long epochNanos() {
                return 42;
            }

            @Override
            public java.time.Instant instant() {
                throw new AssertionError("read through epochNanos()");
            }

            @Override
            public java.time.ZoneId getZone() {
                return java.time.ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }
        }
        LimiterConfig c = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(3, Duration.ofSeconds(1))
                .clock(new CountingClock())
                .config();
        assertEquals(42, c.clockNanos());
    }

    @Test
    void toStringShowsWhatWasSet() {
        String s = RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER)
                .limit(5, Duration.ofSeconds(10))
                .buckets(5)
                .strict(true)
                .countRejected(true)
                .toString();
        assertEquals("RateLimiterBuilder[SLIDING_WINDOW_COUNTER, limit=5/10s, buckets=5, strict, countRejected]", s);
    }
}
