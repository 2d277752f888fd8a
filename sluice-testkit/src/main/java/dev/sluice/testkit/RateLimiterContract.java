package dev.sluice.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.Reservation;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.spi.RateLimitStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The store contract: what every {@link RateLimitStore} must answer, request by request. A store's test
 * extends this class, implements {@link #store()} and passes unchanged; the in-memory store is the reference.
 *
 * <p>Time comes from {@link #clock}, moved by hand: a shared store must be configured to take time from the
 * limiter's clock ({@link dev.sluice.TimeSource#CLOCK}). Every test uses keys of its own ({@link #key}), so
 * a store that keeps state on a server between tests needs no cleanup.
 *
 * <p>A store that keeps time at a coarser {@link #resolution()} than the nanosecond is held to the same answers
 * with every duration rounded up to its resolution; the tests use request times and windows that are whole
 * multiples of it.
 */
public abstract class RateLimiterContract {

    /** 2026-01-01T12:00:00Z: minute- and hour-aligned, the start of the worked examples. */
    protected static final Instant NOON = Instant.parse("2026-01-01T12:00:00Z");

    /** The only clock of every limiter this suite builds. */
    protected final ManualClock clock = new ManualClock(NOON);

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicLong keys = new AtomicLong();

    /** For a store's test class to extend. */
    protected RateLimiterContract() {
    }

    /**
     * The store under test, configured to take time from the limiter's clock. Called once per limiter: a store
     * may return a new instance (a new connection) each time, as long as all instances share state.
     */
    protected abstract RateLimitStore store();

    /** The store's time resolution; durations it reports are rounded up to it. Default: one nanosecond. */
    protected Duration resolution() {
        return Duration.ofNanos(1);
    }

    /** A limiter on {@link #store()} with {@link #clock}. */
    protected final RateLimiter limiter(Algorithm algorithm, long limit, Duration window) {
        return limiter(algorithm, limit, window, b -> b);
    }

    /** A limiter on {@link #store()} with {@link #clock} and further options. */
    protected final RateLimiter limiter(Algorithm algorithm, long limit, Duration window,
                                        UnaryOperator<RateLimiterBuilder> options) {
        return options.apply(RateLimiter.builder(algorithm).limit(limit, window).clock(clock)).store(store()).build();
    }

    /** A key no other test (or earlier run against the same server) has used. */
    protected final String key(String name) {
        return "contract:" + run + ":" + keys.incrementAndGet() + ":" + name;
    }

    /** Sets the clock to {@code hh:mm:ss} on the day of {@link #NOON}. */
    protected final void at(String time) {
        clock.set(Instant.parse("2026-01-01T" + time + "Z"));
    }

    /** {@code exact} rounded up to the store's resolution: what the store must report for a duration. */
    protected final Duration atResolution(Duration exact) {
        long res = resolution().toNanos();
        long n = exact.toNanos();
        return Duration.ofNanos((n + res - 1) / res * res);
    }

    /** Asserts a duration the store reported against its exact (nanosecond) value. */
    protected final void assertDuration(String what, Duration exact, Duration actual) {
        assertEquals(atResolution(exact), actual, what);
    }

    // ---- the worked example: 3 requests per 60 s --------------------------------------------------------------

    private static final String[] TIMES = {"12:00:05", "12:00:15", "12:01:01", "12:01:10", "12:01:40", "12:01:50",
            "12:02:20"};

    /** One expected answer: allowed, remaining, retryAfter and resetAfter (exact; null where not checked). */
    private record Row(boolean allowed, long remaining, Duration retryAfter, Duration resetAfter) {
    }

    private static Row ok(long remaining, Duration reset) {
        return new Row(true, remaining, Duration.ZERO, reset);
    }

    private static Row no(long remaining, Duration retry, Duration reset) {
        return new Row(false, remaining, retry, reset);
    }

    private static Duration s(long seconds) {
        return Duration.ofSeconds(seconds);
    }

    /** {@code seconds} and one nanosecond: the sliding tail's estimate falls just after a whole second. */
    private static Duration s1(long seconds) {
        return Duration.ofSeconds(seconds, 1);
    }

    private static Arguments example(String name, Algorithm algorithm, boolean strict, boolean countRejected,
                                     Row... rows) {
        return Arguments.of(name, algorithm, strict, countRejected, List.of(rows));
    }

    /**
     * Requests at 12:00:05, 12:00:15, 12:01:01, 12:01:10, 12:01:40, 12:01:50, 12:02:20 against 3 per 60 s (the
     * sub-window counter with 4 sub-windows of 15 s). Every row is worked out by hand in docs/algorithms.md.
     */
    static Stream<Arguments> workedExamples() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (boolean counted : new boolean[] {false, true}) {
            b.add(example("fixed window", Algorithm.FIXED_WINDOW, false, counted,
                    ok(2, s(55)), ok(1, s(45)), ok(2, s(59)), ok(1, s(50)), ok(0, s(20)), no(0, s(10), s(10)),
                    ok(2, s(40))));
        }
        b.add(example("sliding log", Algorithm.SLIDING_LOG, false, false,
                ok(2, s(60)), ok(1, s(60)), ok(0, s(60)), ok(0, s(60)), ok(0, s(60)), no(0, s(11), s(50)),
                ok(1, s(60))));
        b.add(example("sliding log", Algorithm.SLIDING_LOG, false, true,
                ok(2, s(60)), ok(1, s(60)), ok(0, s(60)), ok(0, s(60)), ok(0, s(60)), no(0, s(20), s(60)),
                ok(0, s(60))));
        b.add(example("sub-window counter", Algorithm.SLIDING_WINDOW_COUNTER, false, false,
                ok(2, s(55)), ok(1, s(60)), ok(1, s(59)), ok(0, s(50)), ok(0, s(50)), no(0, s(10), s(40)),
                ok(1, s(55))));
        b.add(example("sub-window counter", Algorithm.SLIDING_WINDOW_COUNTER, false, true,
                ok(2, s(55)), ok(1, s(60)), ok(1, s(59)), ok(0, s(50)), ok(0, s(50)), no(0, s(10), s(55)),
                ok(0, s(55))));
        b.add(example("strict sub-window counter", Algorithm.SLIDING_WINDOW_COUNTER, true, false,
                ok(2, s(70)), ok(1, s(75)), ok(0, s(74)), no(0, s(5), s(65)), ok(1, s(65)), ok(0, s(70)),
                ok(0, s(70))));
        b.add(example("strict sub-window counter", Algorithm.SLIDING_WINDOW_COUNTER, true, true,
                ok(2, s(70)), ok(1, s(75)), ok(0, s(74)), no(0, s(20), s(65)), ok(0, s(65)), no(0, s(25), s(70)),
                ok(0, s(70))));
        b.add(example("sliding tail", Algorithm.SLIDING_TAIL, false, false,
                ok(2, s1(55)), ok(1, s1(75)), ok(1, s1(59)), ok(0, s1(80)), ok(0, s1(60)), no(0, s1(10), s1(50)),
                ok(0, s1(40))));
        b.add(example("sliding tail", Algorithm.SLIDING_TAIL, false, true,
                ok(2, s1(55)), ok(1, s1(75)), ok(1, s1(59)), ok(0, s1(80)), ok(0, s1(60)), no(0, s1(25), s1(55)),
                ok(0, s1(40))));
        for (Algorithm bucket : new Algorithm[] {Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET}) {
            for (boolean counted : new boolean[] {false, true}) {
                b.add(example(bucket == Algorithm.TOKEN_BUCKET ? "token bucket" : "leaky bucket", bucket, false,
                        counted, ok(2, s(20)), ok(1, s(30)), ok(2, s(20)), ok(1, s(31)), ok(1, s(21)), ok(1, s(31)),
                        ok(1, s(21))));
            }
        }
        return b.build();
    }

    @ParameterizedTest(name = "{0}, countRejected={3}")
    @MethodSource("workedExamples")
    void workedExample(String name, Algorithm algorithm, boolean strict, boolean countRejected, List<Row> rows) {
        RateLimiter limiter = limiter(algorithm, 3, Duration.ofSeconds(60), b -> {
            b.countRejected(countRejected);
            return algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? b.buckets(4).strict(strict) : b;
        });
        String key = key("worked");
        for (int i = 0; i < TIMES.length; i++) {
            at(TIMES[i]);
            Decision d = limiter.tryAcquire(key);
            Row row = rows.get(i);
            String at = name + " at " + TIMES[i] + ": " + d;
            assertEquals(row.allowed(), d.allowed(), at);
            assertEquals(3, d.limit(), at);
            assertEquals(row.remaining(), d.remaining(), at);
            assertDuration("retryAfter, " + at, row.retryAfter(), d.retryAfter());
            assertDuration("resetAfter, " + at, row.resetAfter(), d.resetAfter());
        }
    }

    // ---- agreement with the in-memory reference, request by request -------------------------------------------

    /** The configurations the randomized comparison runs: every algorithm, with its options. */
    static Stream<Arguments> variants() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (Algorithm algorithm : Algorithm.values()) {
            for (boolean counted : new boolean[] {false, true}) {
                if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
                    b.add(Arguments.of(algorithm, counted, false));
                    b.add(Arguments.of(algorithm, counted, true));
                } else {
                    b.add(Arguments.of(algorithm, counted, false));
                }
            }
        }
        return b.build();
    }

    /**
     * Random traffic (tryAcquire, peek, reserve, cancel, costs up to the limit, time moving by whole
     * milliseconds) on a few keys, decided by the store and by an in-memory limiter on the same clock: every
     * answer must be the same, durations rounded up to the store's resolution.
     */
    @ParameterizedTest(name = "{0}, countRejected={1}, strict={2}")
    @MethodSource("variants")
    void agreesWithTheInMemoryReference(Algorithm algorithm, boolean countRejected, boolean strict) {
        Random random = new Random(31L * algorithm.ordinal() + (countRejected ? 7 : 0) + (strict ? 3 : 0));
        long[] limits = {1, 3, 7, 100};
        Duration[] windows = {Duration.ofSeconds(1), Duration.ofSeconds(60), Duration.ofMillis(7_200)};
        for (int round = 0; round < 6; round++) {
            long limit = limits[random.nextInt(limits.length)];
            Duration window = windows[random.nextInt(windows.length)];
            UnaryOperator<RateLimiterBuilder> options = b -> {
                b.countRejected(countRejected);
                return algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? b.buckets(4).strict(strict) : b;
            };
            RateLimiter store = limiter(algorithm, limit, window, options);
            RateLimiter reference = options.apply(RateLimiter.builder(algorithm).limit(limit, window).clock(clock))
                    .store(InMemoryStore.create()).build();
            String[] names = {key("a"), key("b")};
            List<Reservation[]> reservations = new ArrayList<>();
            for (int step = 0; step < 60; step++) {
                clock.advance(Duration.ofMillis(random.nextInt((int) (window.toMillis() / 3) + 1)));
                String k = names[random.nextInt(names.length)];
                long cost = 1 + (random.nextInt(4) == 0 ? random.nextInt((int) limit) : 0);
                String at = algorithm + " " + limit + "/" + window + " round " + round + " step " + step + " key "
                        + k + " cost " + cost;
                int op = random.nextInt(10);
                if (op < 6) {
                    assertSame(at + " tryAcquire", reference.tryAcquire(k, cost), store.tryAcquire(k, cost));
                } else if (op < 7) {
                    assertSame(at + " peek", reference.peek(k, cost), store.peek(k, cost));
                } else if (op < 9 || reservations.isEmpty()) {
                    Reservation[] pair = {reference.reserve(k, cost), store.reserve(k, cost)};
                    assertSame(at + " reserve", pair[0].decision(), pair[1].decision());
                    reservations.add(pair);
                } else {
                    Reservation[] pair = reservations.remove(random.nextInt(reservations.size()));
                    assertEquals(pair[0].cancel(), pair[1].cancel(), at + " cancel of " + pair[0]);
                }
            }
        }
    }

    private void assertSame(String at, Decision expected, Decision actual) {
        String what = at + ": expected " + expected + ", was " + actual;
        assertEquals(expected.allowed(), actual.allowed(), what);
        assertEquals(expected.limit(), actual.limit(), what);
        assertEquals(expected.remaining(), actual.remaining(), what);
        assertDuration("retryAfter, " + what, expected.retryAfter(), actual.retryAfter());
        assertDuration("resetAfter, " + what, expected.resetAfter(), actual.resetAfter());
    }

    // ---- basics -------------------------------------------------------------------------------------------------

    @Test
    void peekConsumesNothing() {
        for (Algorithm algorithm : Algorithm.values()) {
            RateLimiter limiter = limiter(algorithm, 2, Duration.ofSeconds(10));
            String k = key("peek");
            for (int i = 0; i < 5; i++) {
                Decision d = limiter.peek(k, 2);
                assertEquals(true, d.allowed(), algorithm + " peek " + i);
                assertEquals(2, d.remaining(), algorithm + " peek " + i);
            }
            assertEquals(true, limiter.tryAcquire(k, 2).allowed(), algorithm.toString());
            assertEquals(false, limiter.peek(k, 1).allowed(), algorithm.toString());
            assertEquals(false, limiter.tryAcquire(k, 1).allowed(), algorithm.toString());
        }
    }
}
