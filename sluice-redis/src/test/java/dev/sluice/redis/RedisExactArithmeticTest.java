package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.Reservation;
import dev.sluice.TimeSource;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.testkit.ManualClock;
import io.lettuce.core.ScriptOutputType;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Lua numbers are doubles: the scripts' products of a limit and a window go past 2^53 for ordinary limits such as
 * a million per day. These tests hold the scripts' exact multiply-divide to {@link BigInteger}, and whole limiters
 * with such limits to the in-memory reference, request by request.
 */
class RedisExactArithmeticTest {

    private static final long TWO53 = 1L << 53;
    private static RedisStore store;

    @BeforeAll
    static void connect() {
        store = RedisStore.builder(Servers.client())
                .timeSource(TimeSource.CLOCK)
                .failurePolicy(FailurePolicy.THROW)
                .timeout(Servers.PATIENCE)
                .expiryMargin(Duration.ofMinutes(1))
                .build();
    }

    @AfterAll
    static void close() {
        store.close();
    }

    /** Runs common.lua's {@code function}(a, b, c) or, given {@code d}, (a, b, d, c) on the server; answers {q, r}. */
    private static List<Object> lua(String function, long a, long b, long d, long c) {
        String args = function.equals("muldivmod")
                ? "tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[14])"
                : "tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13]), tonumber(ARGV[14])";
        String script = LuaScript.resource("common") + "\nlocal q, r = " + function + "(" + args + ")\n"
                + "return {string.format('%d', q), string.format('%d', r)}";
        return Servers.redis()
                .eval(
                        script,
                        ScriptOutputType.MULTI,
                        new String[] {"arith"},
                        "p",
                        "0",
                        "1",
                        "1",
                        "1",
                        "0",
                        "0",
                        "0",
                        "0",
                        "0",
                        Long.toString(a),
                        Long.toString(b),
                        Long.toString(d),
                        Long.toString(c));
    }

    @Test
    void multiplyDivideIsExactPastTwoToThe53() {
        Random random = new Random(53);
        List<long[]> cases = new ArrayList<>();
        cases.add(new long[] {TWO53 - 1, TWO53 - 1, TWO53 - 1});
        cases.add(new long[] {TWO53 - 1, TWO53 - 2, TWO53 - 1});
        cases.add(new long[] {94_906_267, 94_906_267, 3}); // just past 2^53
        cases.add(new long[] {43_200_000_000L, 1_000_000, 86_400_000_000L});
        cases.add(new long[] {1L << 40, 2_591_999_999_999L, 2_592_000_000_000L});
        cases.add(new long[] {(1L << 52) - 3, 86_399_999_999L, 86_400_000_000L});
        while (cases.size() < 300) {
            long c = 1 + (long) (random.nextDouble() * (TWO53 - 1));
            long a = (long) (random.nextDouble() * TWO53);
            long b = (long) (Math.pow(2, random.nextDouble() * 53));
            if (multiply(a, b).divide(BigInteger.valueOf(c)).compareTo(BigInteger.valueOf(TWO53)) < 0) {
                cases.add(new long[] {a, b, c});
            }
        }
        for (long[] k : cases) {
            BigInteger[] qr = multiply(k[0], k[1]).divideAndRemainder(BigInteger.valueOf(k[2]));
            assertEquals(
                    List.of(qr[0].toString(), qr[1].toString()),
                    lua("muldivmod", k[0], k[1], 0, k[2]),
                    "muldivmod(" + k[0] + ", " + k[1] + ", " + k[2] + ")");
        }
    }

    @Test
    void addAndSubtractVariantsAreExact() {
        Random random = new Random(7);
        for (int i = 0; i < 200; i++) {
            long c = 1 + (long) (random.nextDouble() * (1L << 40));
            long a = (long) (random.nextDouble() * (1L << 40));
            long b = (long) (random.nextDouble() * (1L << 40));
            long d = (long) (random.nextDouble() * (1L << 45));
            BigInteger product = multiply(a, b);
            BigInteger[] plus = product.add(BigInteger.valueOf(d)).divideAndRemainder(BigInteger.valueOf(c));
            if (plus[0].compareTo(BigInteger.valueOf(TWO53)) < 0) {
                assertEquals(
                        List.of(plus[0].toString(), plus[1].toString()),
                        lua("muladddivmod", a, b, d, c),
                        "muladddivmod(" + a + ", " + b + ", " + d + ", " + c + ")");
            }
            if (product.compareTo(BigInteger.valueOf(d)) >= 0) {
                BigInteger[] minus = product.subtract(BigInteger.valueOf(d)).divideAndRemainder(BigInteger.valueOf(c));
                if (minus[0].compareTo(BigInteger.valueOf(TWO53)) < 0) {
                    assertEquals(
                            List.of(minus[0].toString(), minus[1].toString()),
                            lua("mulsubdivmod", a, b, d, c),
                            "mulsubdivmod(" + a + ", " + b + ", " + d + ", " + c + ")");
                }
            }
        }
    }

    private static BigInteger multiply(long a, long b) {
        return BigInteger.valueOf(a).multiply(BigInteger.valueOf(b));
    }

    /**
     * Random traffic with limits whose products with the window (in µs) pass 2^53 by far: a million per day, 2^40
     * per 30 days, 10^9 per hour, 2^40 per ten years (the longest window), with costs up to the limit, against the
     * in-memory reference.
     */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void largeLimitsAgreeWithTheInMemoryReference(Algorithm algorithm) {
        long[] limits = {1_000_000, 1L << 40, 1_000_000_000, 1L << 40};
        Duration[] windows = {Duration.ofDays(1), Duration.ofDays(30), Duration.ofHours(1), LimiterConfig.MAX_WINDOW};
        Random random = new Random(algorithm.ordinal());
        for (int round = 0; round < 8; round++) {
            // at most 30 days a step: a ten-year window must not carry the clock past what microseconds in a
            // double hold (about the year 2235)
            Duration window = windows[round % 4];
            long maxStep = Math.min(window.toNanos() / 3, Duration.ofDays(30).toNanos());
            compare(
                    algorithm,
                    limits[round % 4],
                    window,
                    round >= 4,
                    Instant.parse("2026-01-01T12:00:00Z"),
                    maxStep,
                    random,
                    "round " + round);
        }
    }

    /** Windows, sub-windows and log entries before the epoch and across it: negative microseconds. */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void timesBeforeTheEpochAgreeWithTheInMemoryReference(Algorithm algorithm) {
        Random random = new Random(1969 + algorithm.ordinal());
        for (boolean countRejected : new boolean[] {false, true}) {
            compare(
                    algorithm,
                    7,
                    Duration.ofSeconds(60),
                    countRejected,
                    Instant.parse("1969-12-31T23:57:30Z"),
                    Duration.ofSeconds(12).toNanos(),
                    random,
                    "countRejected=" + countRejected);
        }
    }

    /**
     * 60 random requests (tryAcquire, peek, reserve, cancel) on two keys, the clock moving by whole microseconds up
     * to {@code maxStep} ns each time, decided by Redis and by the in-memory store: every answer must be the same.
     */
    private static void compare(
            Algorithm algorithm,
            long limit,
            Duration window,
            boolean countRejected,
            Instant start,
            long maxStep,
            Random random,
            String round) {
        ManualClock clock = new ManualClock(start);
        UnaryOperator<RateLimiterBuilder> options = b -> {
            b.countRejected(countRejected).clock(clock).limit(limit, window);
            return algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? b.buckets(60).strict(countRejected) : b;
        };
        RateLimiter redis =
                options.apply(RateLimiter.builder(algorithm)).store(store).build();
        RateLimiter reference = options.apply(RateLimiter.builder(algorithm))
                .store(InMemoryStore.create())
                .build();
        String[] keys = {"exact:" + UUID.randomUUID(), "exact:" + UUID.randomUUID()};
        List<Reservation[]> reservations = new ArrayList<>();
        for (int step = 0; step < 60; step++) {
            clock.advance(Duration.ofNanos(1000 * (long) (random.nextDouble() * maxStep / 1000)));
            String k = keys[random.nextInt(keys.length)];
            long cost = 1 + (long) (random.nextDouble() * (random.nextBoolean() ? limit / 3 : limit));
            String at = algorithm + " " + limit + "/" + window + " " + round + " step " + step + " at "
                    + clock.instant() + " cost " + cost;
            int op = random.nextInt(10);
            if (op < 6) {
                assertSame(at + " tryAcquire", reference.tryAcquire(k, cost), redis.tryAcquire(k, cost));
            } else if (op < 7) {
                assertSame(at + " peek", reference.peek(k, cost), redis.peek(k, cost));
            } else if (op < 9 || reservations.isEmpty()) {
                Reservation[] pair = {reference.reserve(k, cost), redis.reserve(k, cost)};
                assertSame(at + " reserve", pair[0].decision(), pair[1].decision());
                reservations.add(pair);
            } else {
                Reservation[] pair = reservations.remove(random.nextInt(reservations.size()));
                assertEquals(pair[0].cancel(), pair[1].cancel(), at + " cancel of " + pair[0]);
            }
        }
    }

    private static void assertSame(String at, Decision expected, Decision actual) {
        String what = at + ": expected " + expected + ", was " + actual;
        assertEquals(expected.allowed(), actual.allowed(), what);
        assertEquals(expected.remaining(), actual.remaining(), what);
        assertEquals(micros(expected.retryAfterNanos()), actual.retryAfterNanos(), what);
        assertEquals(micros(expected.resetAfterNanos()), actual.resetAfterNanos(), what);
    }

    /** {@code nanos} rounded up to the microsecond: what the Redis store reports. */
    static long micros(long nanos) {
        return (nanos + 999) / 1000 * 1000;
    }
}
