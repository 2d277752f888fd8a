package dev.sluice.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.RateLimitListener;
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
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
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
 * multiples of it, and step one resolution before a boundary where the nanosecond store steps one nanosecond.
 *
 * <p>What it checks, besides the worked example and the request-by-request comparison at the top:
 * <ul>
 *   <li>{@link Boundaries}: each algorithm at the instants its answer changes (a log entry exactly W old has
 *       expired; a fixed-window rejection 10 s before the window ends retries after 10 s; the sliding tail's
 *       previous window weighed and rounded down, its current window counted whole; sub-windows, strict or not;
 *       bucket refill to the nanosecond).</li>
 *   <li>{@link Timing}: every {@code retryAfter} and {@code resetAfter} is exact: one resolution earlier the
 *       request still fails (the key is not yet full), at that instant it passes (the key is full).</li>
 *   <li>{@link Cost}, {@link CountRejected}, {@link Peek}: cost above one, rejected requests counted or not, peek
 *       consuming nothing and answering what tryAcquire would.</li>
 *   <li>{@link Reservations}: cancel returns the permits to the window, sub-window, log entry or bucket they came
 *       from, exactly once (also when eight threads cancel at once), nothing for a rejected reservation or once
 *       that place is gone, and never lets the key exceed its limit.</li>
 *   <li>{@link BadInput}: {@link IllegalArgumentException} naming the bad value, and nothing consumed.</li>
 *   <li>{@link Time}: a key idle for two windows decides exactly as a fresh key; a clock stepped back (which a
 *       store sees as requests from instances whose clocks lag) neither resets a window nor refills a bucket,
 *       nor takes anything more. Durations answered at a stepped-back time are not pinned.</li>
 *   <li>{@link Concurrency}: eight threads on one key with the clock frozen, released by one start gate: exactly
 *       the limit is admitted, for every algorithm and option. These are the only tests making a few hundred
 *       calls; every other test makes a few dozen at most.</li>
 *   <li>{@link Accuracy}: how many requests each algorithm lets through within one window under two adversarial
 *       bursts (the fixed window's 2L across a boundary, measured).</li>
 * </ul>
 */
public abstract class RateLimiterContract {

    /** 2026-01-01T12:00:00Z: minute- and hour-aligned, the start of the worked examples. */
    protected static final Instant NOON = Instant.parse("2026-01-01T12:00:00Z");

    /** The only clock of every limiter this suite builds. */
    protected final ManualClock clock = new ManualClock(NOON);

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicLong keys = new AtomicLong();

    /** For a store's test class to extend. */
    protected RateLimiterContract() {}

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
    protected final RateLimiter limiter(
            Algorithm algorithm, long limit, Duration window, UnaryOperator<RateLimiterBuilder> options) {
        return options.apply(RateLimiter.builder(algorithm).limit(limit, window).clock(clock))
                .store(store())
                .build();
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

    private static final String[] TIMES = {
        "12:00:05", "12:00:15", "12:01:01", "12:01:10", "12:01:40", "12:01:50", "12:02:20"
    };

    /** One expected answer: allowed, remaining, retryAfter and resetAfter (exact; null where not checked). */
    private record Row(boolean allowed, long remaining, Duration retryAfter, Duration resetAfter) {}

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

    private static Arguments example(
            String name, Algorithm algorithm, boolean strict, boolean countRejected, Row... rows) {
        return Arguments.of(name, algorithm, strict, countRejected, List.of(rows));
    }

    /**
     * Requests at 12:00:05, 12:00:15, 12:01:01, 12:01:10, 12:01:40, 12:01:50, 12:02:20 against 3 per 60 s (the
     * sub-window counter with 4 sub-windows of 15 s). Every row is worked out by hand in docs/algorithms.md.
     */
    static Stream<Arguments> workedExamples() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (boolean counted : new boolean[] {false, true}) {
            b.add(example(
                    "fixed window",
                    Algorithm.FIXED_WINDOW,
                    false,
                    counted,
                    ok(2, s(55)),
                    ok(1, s(45)),
                    ok(2, s(59)),
                    ok(1, s(50)),
                    ok(0, s(20)),
                    no(0, s(10), s(10)),
                    ok(2, s(40))));
        }
        b.add(example(
                "sliding log",
                Algorithm.SLIDING_LOG,
                false,
                false,
                ok(2, s(60)),
                ok(1, s(60)),
                ok(0, s(60)),
                ok(0, s(60)),
                ok(0, s(60)),
                no(0, s(11), s(50)),
                ok(1, s(60))));
        b.add(example(
                "sliding log",
                Algorithm.SLIDING_LOG,
                false,
                true,
                ok(2, s(60)),
                ok(1, s(60)),
                ok(0, s(60)),
                ok(0, s(60)),
                ok(0, s(60)),
                no(0, s(20), s(60)),
                ok(0, s(60))));
        b.add(example(
                "sub-window counter",
                Algorithm.SLIDING_WINDOW_COUNTER,
                false,
                false,
                ok(2, s(55)),
                ok(1, s(60)),
                ok(1, s(59)),
                ok(0, s(50)),
                ok(0, s(50)),
                no(0, s(10), s(40)),
                ok(1, s(55))));
        b.add(example(
                "sub-window counter",
                Algorithm.SLIDING_WINDOW_COUNTER,
                false,
                true,
                ok(2, s(55)),
                ok(1, s(60)),
                ok(1, s(59)),
                ok(0, s(50)),
                ok(0, s(50)),
                no(0, s(10), s(55)),
                ok(0, s(55))));
        b.add(example(
                "strict sub-window counter",
                Algorithm.SLIDING_WINDOW_COUNTER,
                true,
                false,
                ok(2, s(70)),
                ok(1, s(75)),
                ok(0, s(74)),
                no(0, s(5), s(65)),
                ok(1, s(65)),
                ok(0, s(70)),
                ok(0, s(70))));
        b.add(example(
                "strict sub-window counter",
                Algorithm.SLIDING_WINDOW_COUNTER,
                true,
                true,
                ok(2, s(70)),
                ok(1, s(75)),
                ok(0, s(74)),
                no(0, s(20), s(65)),
                ok(0, s(65)),
                no(0, s(25), s(70)),
                ok(0, s(70))));
        b.add(example(
                "sliding tail",
                Algorithm.SLIDING_TAIL,
                false,
                false,
                ok(2, s1(55)),
                ok(1, s1(75)),
                ok(1, s1(59)),
                ok(0, s1(80)),
                ok(0, s1(60)),
                no(0, s1(10), s1(50)),
                ok(0, s1(40))));
        b.add(example(
                "sliding tail",
                Algorithm.SLIDING_TAIL,
                false,
                true,
                ok(2, s1(55)),
                ok(1, s1(75)),
                ok(1, s1(59)),
                ok(0, s1(80)),
                ok(0, s1(60)),
                no(0, s1(25), s1(55)),
                ok(0, s1(40))));
        for (Algorithm bucket : new Algorithm[] {Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET}) {
            for (boolean counted : new boolean[] {false, true}) {
                b.add(example(
                        bucket == Algorithm.TOKEN_BUCKET ? "token bucket" : "leaky bucket",
                        bucket,
                        false,
                        counted,
                        ok(2, s(20)),
                        ok(1, s(30)),
                        ok(2, s(20)),
                        ok(1, s(31)),
                        ok(1, s(21)),
                        ok(1, s(31)),
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
        @SuppressWarnings("EnumOrdinal") // only a seed: any distinct number per algorithm would do; kept for replays
        long seed = 31L * algorithm.ordinal() + (countRejected ? 7 : 0) + (strict ? 3 : 0);
        Random random = new Random(seed);
        long[] limits = {1, 3, 7, 100};
        Duration[] windows = {Duration.ofSeconds(1), Duration.ofSeconds(60), Duration.ofMillis(7_200)};
        for (int round = 0; round < 6; round++) {
            long limit = limits[random.nextInt(limits.length)];
            Duration window = windows[random.nextInt(windows.length)];
            UnaryOperator<RateLimiterBuilder> options = b -> {
                b.countRejected(countRejected);
                return algorithm == Algorithm.SLIDING_WINDOW_COUNTER
                        ? b.buckets(4).strict(strict)
                        : b;
            };
            RateLimiter store = limiter(algorithm, limit, window, options);
            RateLimiter reference = options.apply(
                            RateLimiter.builder(algorithm).limit(limit, window).clock(clock))
                    .store(InMemoryStore.create())
                    .build();
            String[] names = {key("a"), key("b")};
            List<Reservation[]> reservations = new ArrayList<>();
            for (int step = 0; step < 60; step++) {
                clock.advance(Duration.ofMillis(random.nextInt((int) (window.toMillis() / 3) + 1)));
                String k = names[random.nextInt(names.length)];
                long cost = 1L + (random.nextInt(4) == 0 ? random.nextInt((int) limit) : 0);
                String at = algorithm + " " + limit + "/" + window + " round " + round + " step " + step + " key " + k
                        + " cost " + cost;
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

    // ---- helpers of the groups below ---------------------------------------------------------------------------

    /** Sets the clock to {@code hh:mm:ss} on the day of {@link #NOON}, plus {@code plus} (which may be negative). */
    protected final void at(String time, Duration plus) {
        clock.set(Instant.parse("2026-01-01T" + time + "Z").plus(plus));
    }

    /** The store's resolution: the smallest step the tests take at a boundary. */
    private Duration r() {
        return resolution();
    }

    /** {@code n} resolutions. */
    private Duration r(long n) {
        return resolution().multipliedBy(n);
    }

    /** {@code limit} per 60 s; the sub-window counter with 4 sub-windows of 15 s. */
    private RateLimiter perMinute(Algorithm algorithm, long limit, boolean countRejected, boolean strict) {
        return limiter(algorithm, limit, Duration.ofSeconds(60), b -> {
            b.countRejected(countRejected);
            return algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? b.buckets(4).strict(strict) : b;
        });
    }

    private RateLimiter perMinute(Algorithm algorithm, long limit) {
        return perMinute(algorithm, limit, false, false);
    }

    private static String name(Algorithm algorithm, boolean countRejected, boolean strict) {
        return algorithm + (strict ? " strict" : "") + (countRejected ? " countRejected" : "");
    }

    /** Asserts every field of a decision; durations exact, compared at the store's resolution. */
    private void assertDecision(
            String what, boolean allowed, long remaining, Duration retryAfter, Duration resetAfter, Decision d) {
        String at = what + " at " + clock.instant() + ": " + d;
        assertEquals(allowed, d.allowed(), at);
        assertEquals(remaining, d.remaining(), at);
        assertDuration("retryAfter, " + at, retryAfter, d.retryAfter());
        assertDuration("resetAfter, " + at, resetAfter, d.resetAfter());
    }

    private void assertAllowed(String what, long remaining, Duration resetAfter, Decision d) {
        assertDecision(what, true, remaining, Duration.ZERO, resetAfter, d);
    }

    private void assertDenied(String what, long remaining, Duration retryAfter, Duration resetAfter, Decision d) {
        assertDecision(what, false, remaining, retryAfter, resetAfter, d);
    }

    private static Duration ns(long nanos) {
        return Duration.ofNanos(nanos);
    }

    /**
     * Runs {@code task} {@code perThread} times on each of {@code threads} threads, all released at once by a start
     * gate, and returns every result.
     */
    private static <T> List<T> onThreads(int threads, int perThread, Callable<T> task) {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch ready = new CountDownLatch(threads);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<List<T>>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(pool.submit(() -> {
                    ready.countDown();
                    start.await();
                    List<T> results = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        results.add(task.call());
                    }
                    return results;
                }));
            }
            ready.await();
            start.countDown();
            List<T> all = new ArrayList<>();
            for (Future<List<T>> f : futures) {
                all.addAll(f.get(60, TimeUnit.SECONDS));
            }
            return all;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError("a thread failed: " + e.getCause(), e);
        } finally {
            pool.shutdownNow();
        }
    }

    // ---- boundaries -------------------------------------------------------------------------------------------

    /**
     * Each algorithm at the exact instants where its answer changes, one resolution before and at the boundary;
     * 3 per 60 s throughout.
     */
    @Nested
    class Boundaries {

        @Test
        void fixedWindowsAreEpochAlignedAndEndExactlyAtTheirEnd() {
            RateLimiter limiter = perMinute(Algorithm.FIXED_WINDOW, 3);
            String k = key("fw-boundary");
            at("12:00:30");
            assertAllowed("first request, mid-window", 2, s(30), limiter.tryAcquire(k));
            at("12:01:00", r().negated());
            assertAllowed("cost 2, one resolution before the window ends", 0, r(), limiter.tryAcquire(k, 2));
            assertDenied("full", 0, r(), r(), limiter.tryAcquire(k));
            at("12:01:00");
            assertAllowed("a new window", 2, s(60), limiter.tryAcquire(k));
        }

        @Test
        void aFixedWindowRejectionTenSecondsBeforeTheEndSaysRetryAfterTenSeconds() {
            RateLimiter limiter = perMinute(Algorithm.FIXED_WINDOW, 3);
            String k = key("fw-retry");
            at("12:00:01");
            assertAllowed("cost 3", 0, s(59), limiter.tryAcquire(k, 3));
            at("12:00:50");
            assertDenied("cost 1", 0, s(10), s(10), limiter.tryAcquire(k));
            assertDenied("cost 3", 0, s(10), s(10), limiter.peek(k, 3));
        }

        @Test
        void aLogEntryExactlyOneWindowOldHasExpired() {
            RateLimiter limiter = perMinute(Algorithm.SLIDING_LOG, 3);
            String k = key("log-boundary");
            at("12:00:10");
            assertAllowed("cost 3", 0, s(60), limiter.tryAcquire(k, 3));
            at("12:01:10", r().negated());
            assertDenied("W less one resolution after", 0, r(), r(), limiter.tryAcquire(k));
            at("12:01:10");
            assertAllowed("exactly W after: (now−W, now] no longer holds 12:00:10", 0, s(60), limiter.tryAcquire(k, 3));
        }

        @Test
        void aSubWindowCountsWhileItsStartIsInsideTheWindow() {
            RateLimiter limiter = perMinute(Algorithm.SLIDING_WINDOW_COUNTER, 3);
            String k = key("swc-boundary");
            at("12:00:15", r().negated());
            assertAllowed("last instant of [12:00:00, 12:00:15)", 2, s(45).plus(r()), limiter.tryAcquire(k));
            at("12:00:15");
            assertAllowed("first instant of [12:00:15, 12:00:30)", 1, s(60), limiter.tryAcquire(k));
            at("12:01:00", r().negated());
            assertAllowed("both sub-windows count", 0, s(45).plus(r()), limiter.tryAcquire(k));
            assertDenied("full", 0, r(), s(45).plus(r()), limiter.peek(k, 1));
            at("12:01:00");
            Decision d = limiter.tryAcquire(k);
            assertAllowed(
                    "12:00:00 is not after 12:01:00 − 60 s: that sub-window no longer counts, its request only"
                            + " 45 s old",
                    0,
                    s(60),
                    d);
        }

        @Test
        void aStrictSubWindowCountsWhileAnyPartOfItIsInsideTheWindow() {
            RateLimiter limiter = perMinute(Algorithm.SLIDING_WINDOW_COUNTER, 3, false, true);
            String k = key("swc-strict-boundary");
            at("12:00:14");
            assertAllowed("cost 3 in [12:00:00, 12:00:15)", 0, s(61), limiter.tryAcquire(k, 3));
            at("12:01:00");
            assertDenied(
                    "[12:00:00, 12:00:15) still overlaps (12:00:00, 12:01:00]", 0, s(15), s(15), limiter.tryAcquire(k));
            at("12:01:15", r().negated());
            assertDenied("one resolution before its end leaves the window", 0, r(), r(), limiter.tryAcquire(k));
            at("12:01:15");
            assertAllowed("gone", 0, s(75), limiter.tryAcquire(k, 3));
        }

        /**
         * The previous window weighs {@code floor(prev·(W−e)/W)}: with 3 there, the weight is 3 at {@code e = 0},
         * 2 from one resolution in until 20 s, 1 until 40 s, 0 after.
         */
        @Test
        void theSlidingTailWeighsThePreviousWindowRoundedDown() {
            RateLimiter limiter = perMinute(Algorithm.SLIDING_TAIL, 3);
            String k = key("tail-boundary");
            at("12:00:00");
            assertAllowed(
                    "cost 3 in window 12:00; weighs 0 from 40 s into the next",
                    0,
                    s(100).plus(ns(1)),
                    limiter.tryAcquire(k, 3));
            at("12:01:00");
            assertDenied("e = 0: the previous window weighs all 3", 0, ns(1), s(40).plus(ns(1)), limiter.peek(k, 1));
            at("12:01:00", r());
            assertAllowed("floor(3·(60 s − r)/60 s) = 2", 0, s(60).plus(ns(1)).minus(r()), limiter.tryAcquire(k));
            assertDenied(
                    "2 + 1 = 3",
                    0,
                    s(20).plus(ns(1)).minus(r()),
                    s(60).plus(ns(1)).minus(r()),
                    limiter.tryAcquire(k));
            at("12:01:10");
            assertDenied(
                    "floor(3·50/60) = floor(2.5) = 2, plus 1",
                    0,
                    s(10).plus(ns(1)),
                    s(50).plus(ns(1)),
                    limiter.peek(k, 1));
            at("12:01:20");
            assertDenied("floor(3·40/60) = 2, plus 1", 0, ns(1), s(40).plus(ns(1)), limiter.peek(k, 1));
            at("12:01:20", r());
            assertAllowed(
                    "floor(3·(40 s − r)/60 s) = 1, plus 1, plus this one",
                    0,
                    s(70).plus(ns(1)).minus(r()),
                    limiter.tryAcquire(k));
        }

        @Test
        void theSlidingTailRoundsThePreviousWindowDown() {
            RateLimiter limiter = perMinute(Algorithm.SLIDING_TAIL, 3);
            String k = key("tail-round-down");
            at("12:00:30");
            limiter.tryAcquire(k, 3);
            at("12:01:10");
            Decision d = limiter.peek(k, 1);
            assertAllowed("3·50/60 = 2.5 counts as 2, leaving 1", 1, s(30).plus(ns(1)), d);
            assertDenied("2 more do not fit", 1, s(10).plus(ns(1)), s(30).plus(ns(1)), limiter.peek(k, 2));
        }

        @Test
        void theSlidingTailCountsTheCurrentWindowWhole() {
            RateLimiter limiter = perMinute(Algorithm.SLIDING_TAIL, 3);
            String k = key("tail-current");
            at("12:00:05");
            limiter.tryAcquire(k, 3);
            at("12:00:59");
            assertDenied(
                    "3 in the current window count 3, however little of it has passed",
                    0,
                    s(1).plus(ns(1)),
                    s(41).plus(ns(1)),
                    limiter.peek(k, 1));
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(
                value = Algorithm.class,
                names = {"TOKEN_BUCKET", "LEAKY_BUCKET"})
        void aBucketRefillsOnePermitEveryWindowOverLimit(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 3);
            String k = key("bucket-boundary");
            at("12:00:00");
            assertAllowed("cost 3: empty", 0, s(60), limiter.tryAcquire(k, 3));
            assertDenied("one permit every 20 s", 0, s(20), s(60), limiter.tryAcquire(k));
            assertDenied("cost 2", 0, s(40), s(60), limiter.peek(k, 2));
            at("12:00:20", r().negated());
            assertDenied("one resolution early", 0, r(), s(40).plus(r()), limiter.tryAcquire(k));
            at("12:00:20");
            assertAllowed("one permit back", 0, s(60), limiter.tryAcquire(k));
            at("12:01:20");
            assertAllowed("full again after a window", 2, s(20), limiter.tryAcquire(k));
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(
                value = Algorithm.class,
                names = {"TOKEN_BUCKET", "LEAKY_BUCKET"})
        void aBucketNeverRoundsARefillAway(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 7);
            String k = key("bucket-fraction");
            at("12:00:00");
            limiter.tryAcquire(k, 7);
            Duration oneSeventh = ns(8_571_428_572L); // 60 s / 7, rounded up
            assertDenied("a permit every 60/7 s", 0, oneSeventh, s(60), limiter.peek(k, 1));
            for (int i = 1; i <= 7; i++) { // 7 reads of one third of a permit's time add up to 7/3 permits
                at(
                        "12:00:00",
                        ns(8_571_428_571L * i / 3).dividedBy(r().toNanos()).multipliedBy(r().toNanos()));
                limiter.peek(k, 1);
            }
            at("12:00:20");
            assertAllowed("20 s refill 7/3 permits: 2 whole", 1, ns(48_571_428_572L), limiter.tryAcquire(k));
        }
    }

    // ---- retryAfter and resetAfter -----------------------------------------------------------------------------

    /** Every {@code retryAfter} and {@code resetAfter} is exact: the answer changes at that instant, not before. */
    @Nested
    class Timing {

        @ParameterizedTest(name = "{0}, countRejected={1}, strict={2}")
        @MethodSource("dev.sluice.testkit.RateLimiterContract#variants")
        void everyRetryAfterAndResetAfterIsExactToTheResolution(
                Algorithm algorithm, boolean countRejected, boolean strict) {
            long[] costs = {1, 1, 2, 1, 3, 1, 2};
            RateLimiter limiter = perMinute(algorithm, 3, countRejected, strict);
            for (int step = 0; step < TIMES.length; step++) {
                String k = key("exact-" + step);
                at(TIMES[0]);
                Decision d = limiter.tryAcquire(k, costs[0]);
                for (int i = 1; i <= step; i++) {
                    at(TIMES[i]);
                    d = limiter.tryAcquire(k, costs[i]);
                }
                Instant t = clock.instant();
                String what = name(algorithm, countRejected, strict) + ", request " + step + " at " + TIMES[step]
                        + " cost " + costs[step] + " -> " + d;
                List<Instant> probes = new ArrayList<>();
                if (!d.allowed()) {
                    probes.add(t.plus(d.retryAfter()).minus(r()));
                    probes.add(t.plus(d.retryAfter()));
                }
                if (!d.resetAfter().isZero()) {
                    probes.add(t.plus(d.resetAfter()).minus(r()));
                    probes.add(t.plus(d.resetAfter()));
                }
                probes.sort(null);
                for (Instant probe : probes) {
                    clock.set(probe);
                    if (!d.allowed() && probe.equals(t.plus(d.retryAfter()).minus(r()))) {
                        assertEquals(
                                false, limiter.peek(k, costs[step]).allowed(), what + ": passes before retryAfter");
                    }
                    if (!d.allowed() && probe.equals(t.plus(d.retryAfter()))) {
                        assertEquals(true, limiter.peek(k, costs[step]).allowed(), what + ": fails at retryAfter");
                    }
                    if (probe.equals(t.plus(d.resetAfter()).minus(r()))) {
                        assertNotEquals(3, limiter.peek(k, 1).remaining(), what + ": full before resetAfter");
                    }
                    if (probe.equals(t.plus(d.resetAfter()))) {
                        assertEquals(3, limiter.peek(k, 1).remaining(), what + ": not full at resetAfter");
                    }
                }
            }
        }
    }

    // ---- cost ---------------------------------------------------------------------------------------------------

    /** Requests that cost more than one permit. */
    @Nested
    class Cost {

        @ParameterizedTest(name = "{0}")
        @EnumSource(Algorithm.class)
        void aRequestTakesAllOfItsCostOrNothing(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 5);
            String k = key("cost");
            at("12:00:10");
            assertEquals(2, limiter.tryAcquire(k, 3).remaining(), algorithm.toString());
            Decision d = limiter.tryAcquire(k, 3);
            assertEquals(false, d.allowed(), algorithm + ": 3 more do not fit in 2: " + d);
            assertEquals(2, d.remaining(), algorithm + ": a rejected request takes nothing: " + d);
            d = limiter.tryAcquire(k, 2);
            assertEquals(true, d.allowed(), algorithm + ": the 2 left: " + d);
            assertEquals(0, d.remaining(), algorithm + ": " + d);
        }

        @Test
        void theLogFreesAsManyEntriesAsTheCostNeeds() {
            RateLimiter limiter = perMinute(Algorithm.SLIDING_LOG, 5);
            String k = key("log-cost");
            at("12:00:00");
            limiter.tryAcquire(k, 2);
            at("12:00:10");
            limiter.tryAcquire(k, 1);
            at("12:00:20");
            limiter.tryAcquire(k, 2);
            at("12:00:30");
            assertDenied("cost 1: the 2 of 12:00:00 expire at 12:01:00", 0, s(30), s(50), limiter.peek(k, 1));
            assertDenied("cost 3: and the 1 of 12:00:10", 0, s(40), s(50), limiter.peek(k, 3));
            assertDenied("cost 5: and the 2 of 12:00:20", 0, s(50), s(50), limiter.peek(k, 5));
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(
                value = Algorithm.class,
                names = {"TOKEN_BUCKET", "LEAKY_BUCKET"})
        void aBucketWaitsForAsManyPermitsAsTheCost(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 5);
            String k = key("bucket-cost");
            at("12:00:00");
            limiter.tryAcquire(k, 5);
            assertDenied("cost 1: 12 s", 0, s(12), s(60), limiter.peek(k, 1));
            assertDenied("cost 3: 36 s", 0, s(36), s(60), limiter.peek(k, 3));
            assertDenied("cost 5: 60 s", 0, s(60), s(60), limiter.peek(k, 5));
        }

        @Test
        void theSubWindowCounterAndTheTailCountCostNotRequests() {
            for (Algorithm algorithm : new Algorithm[] {Algorithm.SLIDING_WINDOW_COUNTER, Algorithm.SLIDING_TAIL}) {
                RateLimiter limiter = perMinute(algorithm, 5);
                String k = key("count-cost");
                at("12:00:20");
                limiter.tryAcquire(k, 4);
                at("12:00:40");
                assertEquals(1, limiter.peek(k, 1).remaining(), algorithm.toString());
                assertEquals(false, limiter.peek(k, 2).allowed(), algorithm.toString());
            }
        }
    }

    // ---- countRejected ------------------------------------------------------------------------------------------

    /** With {@code countRejected}, a rejected request consumes its cost too; without, it consumes nothing. */
    @Nested
    class CountRejected {

        @ParameterizedTest(name = "{0}, countRejected={1}")
        @CsvSource({
            "FIXED_WINDOW, false",
            "FIXED_WINDOW, true",
            "SLIDING_WINDOW_COUNTER, false",
            "SLIDING_WINDOW_COUNTER, true",
            "SLIDING_TAIL, false",
            "SLIDING_TAIL, true",
            "SLIDING_LOG, false",
            "SLIDING_LOG, true"
        })
        void aCountedRejectionOutlastsACancel(Algorithm algorithm, boolean countRejected) {
            RateLimiter limiter = perMinute(algorithm, 3, countRejected, false);
            String k = key("counted");
            at("12:00:00");
            Reservation r = limiter.reserve(k, 1);
            limiter.tryAcquire(k, 2);
            assertEquals(false, limiter.tryAcquire(k).allowed(), algorithm.toString());
            assertEquals(true, r.cancel(), algorithm.toString());
            Decision d = limiter.tryAcquire(k);
            assertEquals(
                    !countRejected,
                    d.allowed(),
                    algorithm + ": the rejected request "
                            + (countRejected ? "took the permit the cancel gave back" : "took nothing") + ": " + d);
        }

        @Test
        void aCountedRejectionStaysInTheLogForAWindow() {
            for (boolean countRejected : new boolean[] {false, true}) {
                RateLimiter limiter = perMinute(Algorithm.SLIDING_LOG, 3, countRejected, false);
                String k = key("log-counted");
                at("12:00:00");
                limiter.tryAcquire(k, 3);
                at("12:00:30");
                assertDenied(
                        "countRejected=" + countRejected,
                        0,
                        s(30),
                        countRejected ? s(60) : s(30),
                        limiter.tryAcquire(k));
                at("12:01:00");
                // Reset either way a window after this request: counted or not, the rejection leaves the log first.
                assertAllowed(
                        "countRejected=" + countRejected + ": the rejection of 12:00:30 counts until 12:01:30",
                        countRejected ? 1 : 2,
                        s(60),
                        limiter.tryAcquire(k));
            }
        }

        @Test
        void aCountedRejectionWeighsInTheTailsNextWindow() {
            for (boolean countRejected : new boolean[] {false, true}) {
                RateLimiter limiter = perMinute(Algorithm.SLIDING_TAIL, 3, countRejected, false);
                String k = key("tail-counted");
                at("12:00:10");
                limiter.tryAcquire(k, 3);
                at("12:00:20");
                limiter.tryAcquire(k);
                at("12:01:30");
                assertEquals(
                        countRejected ? 1 : 2,
                        limiter.peek(k, 1).remaining(),
                        "countRejected=" + countRejected + ": floor(" + (countRejected ? 4 : 3) + "·30/60)");
            }
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(
                value = Algorithm.class,
                names = {"TOKEN_BUCKET", "LEAKY_BUCKET"})
        void aCountedRejectionDrainsABucketToEmptyNeverBelow(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 3, true, false);
            String k = key("bucket-counted");
            at("12:00:00");
            assertAllowed("cost 2", 1, s(40), limiter.tryAcquire(k, 2));
            assertDenied("cost 2 of 1: drained", 0, s(40), s(60), limiter.tryAcquire(k, 2));
            assertDenied("again: still just empty", 0, s(40), s(60), limiter.tryAcquire(k, 2));
            at("12:00:40");
            assertAllowed("40 s refill 2", 0, s(60), limiter.tryAcquire(k, 2));
            at("12:01:40");
            assertEquals(3, limiter.peek(k, 1).remaining(), "full a window after the last drain");
        }

        @ParameterizedTest(name = "{0}, countRejected={1}, strict={2}")
        @MethodSource("dev.sluice.testkit.RateLimiterContract#variants")
        void remainingIsNeverNegative(Algorithm algorithm, boolean countRejected, boolean strict) {
            RateLimiter limiter = perMinute(algorithm, 3, countRejected, strict);
            String k = key("never-negative");
            at("12:00:00");
            for (int i = 0; i < 5; i++) {
                Decision d = limiter.tryAcquire(k, 3);
                assertEquals(i == 0, d.allowed(), name(algorithm, countRejected, strict) + ": " + d);
                assertEquals(0, d.remaining(), name(algorithm, countRejected, strict) + ": " + d);
            }
        }
    }

    // ---- reservations -------------------------------------------------------------------------------------------

    /** Reservations: cancel returns the permits to where they were taken from, at most once. */
    @Nested
    class Reservations {

        @ParameterizedTest(name = "{0}")
        @EnumSource(Algorithm.class)
        void cancelReturnsThePermitsExactlyOnce(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 3);
            String k = key("once");
            at("12:00:10");
            Reservation r = limiter.reserve(k, 2);
            assertAllowed(algorithm + " reserve", 1, r.decision().resetAfter(), r.decision());
            assertEquals(false, limiter.tryAcquire(k, 2).allowed(), algorithm.toString());
            assertEquals(true, r.cancel(), algorithm + " first cancel");
            assertEquals(false, r.cancel(), algorithm + " second cancel");
            assertEquals(3, limiter.peek(k, 1).remaining(), algorithm + ": back to full, not beyond");
            assertEquals(true, limiter.tryAcquire(k, 3).allowed(), algorithm.toString());
            assertEquals(false, limiter.tryAcquire(k, 1).allowed(), algorithm + ": never more than the limit");
        }

        @ParameterizedTest(name = "{0}, countRejected={1}")
        @CsvSource({
            "FIXED_WINDOW, false",
            "SLIDING_LOG, true",
            "SLIDING_WINDOW_COUNTER, false",
            "SLIDING_TAIL, true",
            "TOKEN_BUCKET, false",
            "LEAKY_BUCKET, true"
        })
        void aRejectedReservationReturnsNothing(Algorithm algorithm, boolean countRejected) {
            RateLimiter limiter = perMinute(algorithm, 3, countRejected, false);
            String k = key("rejected");
            at("12:00:10");
            limiter.tryAcquire(k, 2);
            Reservation r = limiter.reserve(k, 2);
            assertEquals(false, r.decision().allowed(), algorithm.toString());
            assertEquals(false, r.cancel(), algorithm + ": nothing was reserved");
            assertEquals(
                    countRejected ? 0 : 1,
                    limiter.peek(k, 1).remaining(),
                    algorithm + ": the cancel changed "
                            + "nothing (with countRejected the rejection's cost stays taken)");
        }

        @Test
        void aFixedWindowReservationIsGoneWithItsWindow() {
            RateLimiter limiter = perMinute(Algorithm.FIXED_WINDOW, 3);
            String k = key("fw-gone");
            at("12:00:50");
            Reservation r = limiter.reserve(k, 2);
            at("12:01:05");
            limiter.tryAcquire(k, 3);
            assertEquals(false, r.cancel(), "the window of 12:00 is over");
            assertEquals(false, limiter.tryAcquire(k).allowed(), "and the window of 12:01 got nothing from it");
        }

        @Test
        void aTailReservationReturnsToThePreviousWindowThenIsGone() {
            RateLimiter limiter = perMinute(Algorithm.SLIDING_TAIL, 3);
            String k = key("tail-place");
            at("12:00:30");
            Reservation r = limiter.reserve(k, 2);
            Reservation gone = limiter.reserve(k, 1);
            at("12:01:30");
            assertEquals(2, limiter.peek(k, 1).remaining(), "floor(3·30/60) = 1 taken");
            assertEquals(true, r.cancel(), "the previous window still weighs");
            assertEquals(3, limiter.peek(k, 1).remaining(), "floor(1·30/60) = 0: returned to the window of 12:00");
            limiter.tryAcquire(k, 3);
            at("12:02:00");
            assertEquals(false, gone.cancel(), "the window of 12:00 no longer weighs at all");
            assertEquals(false, limiter.tryAcquire(k).allowed(), "3 in the window of 12:01 weigh 3 at its end");
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(
                value = Algorithm.class,
                names = {"SLIDING_LOG", "SLIDING_WINDOW_COUNTER"})
        void aLogReservationReturnsToItsOwnEntry(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 3);
            String k = key("entry");
            at("12:00:05");
            Reservation r = limiter.reserve(k, 1);
            at("12:00:20");
            limiter.tryAcquire(k, 2);
            at("12:00:50");
            assertEquals(true, r.cancel(), algorithm.toString());
            at("12:01:06");
            assertEquals(
                    1,
                    limiter.peek(k, 1).remaining(),
                    algorithm + ": the 2 of 12:00:20 still count in full; "
                            + "returned to them instead, 2 would be left");
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(
                value = Algorithm.class,
                names = {"SLIDING_LOG", "SLIDING_WINDOW_COUNTER"})
        void aLogReservationIsGoneOnceItsEntryExpired(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 3);
            String k = key("entry-gone");
            at("12:00:00");
            Reservation r = limiter.reserve(k, 1);
            at("12:01:00");
            limiter.tryAcquire(k, 3);
            assertEquals(false, r.cancel(), algorithm + ": its entry expired at 12:01:00");
            assertEquals(false, limiter.tryAcquire(k).allowed(), algorithm.toString());
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(
                value = Algorithm.class,
                names = {"TOKEN_BUCKET", "LEAKY_BUCKET"})
        void aBucketReservationIsGoneOnceTheBucketHasRefilled(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 3);
            String k = key("bucket-gone");
            at("12:00:00");
            Reservation r = limiter.reserve(k, 3);
            at("12:01:00");
            limiter.tryAcquire(k, 3);
            assertEquals(false, r.cancel(), algorithm + ": full at 12:01:00, the reservation's permits came back then");
            assertEquals(false, limiter.tryAcquire(k).allowed(), algorithm + ": no 2L at one instant");
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(
                value = Algorithm.class,
                names = {"TOKEN_BUCKET", "LEAKY_BUCKET"})
        void aBucketCancelNeverFillsPastTheLimit(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 3);
            String k = key("bucket-cap");
            at("12:00:00");
            Reservation r = limiter.reserve(k, 2);
            limiter.tryAcquire(k, 1);
            at("12:00:30");
            assertEquals(true, r.cancel(), algorithm.toString());
            assertAllowed(algorithm + ": 1.5 refilled + 2 returned, capped at 3", 3, Duration.ZERO, limiter.peek(k, 1));
            assertEquals(true, limiter.tryAcquire(k, 3).allowed(), algorithm.toString());
            assertEquals(false, limiter.tryAcquire(k, 1).allowed(), algorithm.toString());
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(Algorithm.class)
        void eightThreadsCancellingOneReservationReturnItOnce(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 3);
            String k = key("cancel-race");
            at("12:00:10");
            limiter.tryAcquire(k, 1);
            Reservation r = limiter.reserve(k, 2);
            List<Boolean> results = onThreads(8, 1, r::cancel);
            assertEquals(1, results.stream().filter(b -> b).count(), algorithm + ": " + results);
            assertEquals(2, limiter.peek(k, 1).remaining(), algorithm + ": 2 returned once");
        }
    }

    // ---- peek ---------------------------------------------------------------------------------------------------

    /** {@code peek} answers what {@code tryAcquire} would, and consumes nothing. */
    @Nested
    class Peek {

        @ParameterizedTest(name = "{0}, countRejected={1}, strict={2}")
        @MethodSource("dev.sluice.testkit.RateLimiterContract#variants")
        void peekConsumesNothingAndAnswersWhatTryAcquireWould(
                Algorithm algorithm, boolean countRejected, boolean strict) {
            RateLimiter limiter = perMinute(algorithm, 3, countRejected, strict);
            String k = key("peek");
            String what = name(algorithm, countRejected, strict);
            at("12:00:10");
            for (int i = 0; i < 3; i++) {
                assertAllowed(what + " peek of a new key", 3, Duration.ZERO, limiter.peek(k, 3));
            }
            limiter.tryAcquire(k, 2);
            at("12:00:20");
            Decision peek = limiter.peek(k, 2);
            assertEquals(false, peek.allowed(), what + ": " + peek);
            for (int i = 0; i < 3; i++) {
                assertEquals(peek, limiter.peek(k, 2), what + ": a denied peek takes nothing, even counted");
            }
            Decision acquire = limiter.tryAcquire(k, 2);
            assertEquals(peek.allowed(), acquire.allowed(), what);
            if (!countRejected) { // counted, the rejection itself has to expire too
                assertEquals(peek.retryAfter(), acquire.retryAfter(), what + ": " + peek + " vs " + acquire);
            }
            peek = limiter.peek(k, 1);
            assertEquals(countRejected ? 0 : 1, peek.remaining(), what + ": " + peek);
            assertEquals(!countRejected, peek.allowed(), what + ": " + peek);
        }

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

    // ---- bad input ----------------------------------------------------------------------------------------------

    /** Bad arguments throw {@link IllegalArgumentException} naming the bad value, and change nothing. */
    @Nested
    class BadInput {

        private void assertRejects(String value, Executable call) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
            assertTrue(
                    e.getMessage() != null && e.getMessage().contains(value),
                    "the message should name " + value + ": " + e.getMessage());
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(Algorithm.class)
        @SuppressWarnings("NullAway") // passes a null key on purpose: the limiter must refuse it
        void badRequestsAreRefusedAndConsumeNothing(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 3);
            String k = key("bad");
            at("12:00:10");
            for (long cost : new long[] {0, -1, 4, Long.MIN_VALUE}) {
                String value = Long.toString(cost);
                assertRejects(value, () -> limiter.tryAcquire(k, cost));
                assertRejects(value, () -> limiter.peek(k, cost));
                assertRejects(value, () -> limiter.reserve(k, cost));
            }
            assertRejects("null", () -> limiter.tryAcquire(null));
            assertRejects("null", () -> limiter.peek(null, 1));
            assertRejects("null", () -> limiter.reserve(null, 1));
            assertRejects("empty", () -> limiter.tryAcquire(""));
            assertRejects("empty", () -> limiter.peek("", 1));
            assertRejects("empty", () -> limiter.reserve("", 1));
            assertEquals(3, limiter.peek(k, 1).remaining(), algorithm + ": nothing consumed");
        }

        @Test
        void badLimitsAndWindowsAreRefused() {
            assertRejects("0", () -> limiter(Algorithm.FIXED_WINDOW, 0, Duration.ofSeconds(1)));
            assertRejects("-5", () -> limiter(Algorithm.TOKEN_BUCKET, -5, Duration.ofSeconds(1)));
            assertRejects("was 0s", () -> limiter(Algorithm.SLIDING_LOG, 1, Duration.ZERO));
            assertRejects("was -1s", () -> limiter(Algorithm.SLIDING_TAIL, 1, Duration.ofSeconds(-1)));
            assertRejects(
                    "0", () -> limiter(Algorithm.SLIDING_WINDOW_COUNTER, 1, Duration.ofSeconds(1), b -> b.buckets(0)));
        }
    }

    // ---- expiry and time ----------------------------------------------------------------------------------------

    /** State that has gone idle decides as a fresh key's; a clock stepped back gives nothing back. */
    @Nested
    class Time {

        @ParameterizedTest(name = "{0}, countRejected={1}, strict={2}")
        @MethodSource("dev.sluice.testkit.RateLimiterContract#variants")
        void aKeyIdleForTwoWindowsDecidesAsAFreshKey(Algorithm algorithm, boolean countRejected, boolean strict) {
            RateLimiter limiter = perMinute(algorithm, 3, countRejected, strict);
            String used = key("used");
            String what = name(algorithm, countRejected, strict);
            at("12:00:00");
            Reservation r = limiter.reserve(used, 1);
            assertEquals(true, r.decision().allowed(), what);
            for (String time : TIMES) {
                at(time);
                limiter.tryAcquire(used, 2);
            }
            at("12:04:20"); // two windows after the last request: every state has expired
            String fresh = key("fresh");
            for (long cost : new long[] {1, 3, 1}) {
                Decision expected = limiter.tryAcquire(fresh, cost);
                assertSame(what + " cost " + cost, expected, limiter.tryAcquire(used, cost));
                clock.advance(Duration.ofSeconds(7));
            }
            assertEquals(false, r.cancel(), what + ": a reservation on a key gone idle returns nothing");
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(Algorithm.class)
        void aClockSteppedBackWithinTheWindowGivesNothingBack(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 3);
            String k = key("step-back");
            at("12:00:30");
            limiter.tryAcquire(k);
            at("12:00:00");
            Decision d = limiter.peek(k, 1);
            assertEquals(2, d.remaining(), algorithm + ": neither more (refilled, reset) nor less: " + d);
            assertEquals(true, limiter.tryAcquire(k, 2).allowed(), algorithm.toString());
            d = limiter.tryAcquire(k);
            assertEquals(false, d.allowed(), algorithm + ": " + d);
            assertEquals(0, d.remaining(), algorithm + ": " + d);
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(Algorithm.class)
        void aClockSteppedBackAcrossAWindowBoundaryResetsNothing(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 3);
            String k = key("step-back-boundary");
            at("12:01:10");
            limiter.tryAcquire(k, 3);
            at("12:00:50");
            Decision d = limiter.tryAcquire(k);
            assertEquals(false, d.allowed(), algorithm + ": the window of 12:01 holds 3 even seen from 12:00:50: " + d);
            assertEquals(0, d.remaining(), algorithm + ": " + d);
            at("12:03:10");
            assertEquals(3, limiter.peek(k, 1).remaining(), algorithm + ": and all is back once time has caught up");
        }
    }

    // ---- concurrency --------------------------------------------------------------------------------------------

    /** Eight threads on one key with the clock frozen: exactly the limit is admitted, whatever the interleaving. */
    @Nested
    class Concurrency {

        @ParameterizedTest(name = "{0}, countRejected={1}, strict={2}")
        @MethodSource("dev.sluice.testkit.RateLimiterContract#variants")
        void eightThreadsOnOneKeyAdmitExactlyTheLimit(Algorithm algorithm, boolean countRejected, boolean strict) {
            RateLimiter limiter = perMinute(algorithm, 40, countRejected, strict);
            String k = key("hammer");
            at("12:00:30");
            List<Decision> decisions = onThreads(8, 12, () -> limiter.tryAcquire(k));
            long admitted = decisions.stream().filter(Decision::allowed).count();
            String what = name(algorithm, countRejected, strict);
            assertEquals(40, admitted, what + ": 96 requests, limit 40");
            assertEquals(0, limiter.peek(k, 1).remaining(), what);
            List<Long> remaining = decisions.stream()
                    .filter(Decision::allowed)
                    .map(Decision::remaining)
                    .sorted()
                    .collect(Collectors.toList());
            for (int i = 0; i < remaining.size(); i++) {
                assertEquals(i, remaining.get(i), what + ": each admitted request saw its own remaining");
            }
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(Algorithm.class)
        void eightThreadsWithMixedCostsTakeWhatTheyAreAdmittedFor(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 40);
            String k = key("hammer-costs");
            at("12:00:30");
            AtomicLong next = new AtomicLong();
            List<Long> taken = onThreads(8, 10, () -> {
                long cost = 1 + next.getAndIncrement() % 3;
                return limiter.tryAcquire(k, cost).allowed() ? cost : 0L;
            });
            long sum = taken.stream().mapToLong(Long::longValue).sum();
            long left = limiter.peek(k, 1).remaining();
            assertEquals(40 - sum, left, algorithm + ": admitted " + sum);
            assertTrue(left <= 2, algorithm + ": with 3 or more left, every later request would have passed: " + left);
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(Algorithm.class)
        void eightThreadsReservingAndCancellingGiveEverythingBack(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 3);
            String k = key("reserve-race");
            at("12:00:30");
            AtomicLong held = new AtomicLong();
            AtomicLong mostHeld = new AtomicLong();
            List<Integer> outcomes = onThreads(8, 8, () -> {
                Reservation r = limiter.reserve(k, 1);
                if (!r.decision().allowed()) {
                    return r.cancel() ? 2 : 0;
                }
                mostHeld.accumulateAndGet(held.incrementAndGet(), Math::max);
                held.decrementAndGet();
                return r.cancel() ? 1 : 3;
            });
            assertEquals(
                    0,
                    outcomes.stream().filter(o -> o >= 2).count(),
                    algorithm + ": a cancel of an admitted "
                            + "reservation returned false (3) or one of a rejected one true (2): " + outcomes);
            assertTrue(outcomes.contains(1), algorithm + ": " + outcomes);
            assertTrue(mostHeld.get() <= 3, algorithm + ": " + mostHeld + " held at once");
            assertEquals(3, limiter.peek(k, 1).remaining(), algorithm + ": every permit given back");
        }
    }

    // ---- joint requests, listeners, close -----------------------------------------------------------------------

    /** A limiter on the store under test with a listener. */
    private RateLimiter listened(Algorithm algorithm, long limit, Duration window, RateLimitListener listener) {
        return limiter(algorithm, limit, window, b -> b.listener(listener));
    }

    /**
     * Joint requests ({@link RateLimiter#tryAcquireAll}): every limit passes or the request consumes from none; a
     * refused request's decisions are what each limit answers alone. Limiters of one algorithm and window on one key
     * share their state on a shared store (a limit changed keeps its counts), so the limits of a request here differ
     * in window or key. The in-memory store is the reference for the
     * concurrent case: with the clock frozen, how many of n identical joint requests pass does not depend on their
     * order, so a sequential run on the reference tells how many must pass.
     */
    @Nested
    class Joint {

        @ParameterizedTest(name = "{0} refuses")
        @EnumSource(Algorithm.class)
        void aRefusedRequestConsumesFromNone(Algorithm refusing) {
            RateLimiter bucket = limiter(Algorithm.TOKEN_BUCKET, 10, Duration.ofMinutes(2)); // another shape
            RateLimiter small = perMinute(refusing, 2);
            String k = key("joint-refused");
            at("12:00:30");
            assertTrue(small.tryAcquire(k, 2).allowed(), refusing + ": the small limit filled");
            for (List<Acquisition> parts : List.of(
                    List.of(Acquisition.of(bucket, k), Acquisition.of(small, k)),
                    List.of(Acquisition.of(small, k), Acquisition.of(bucket, k, 3)))) {
                JointDecision d = RateLimiter.tryAcquireAll(parts);
                assertFalse(d.allowed(), refusing + ": refused by the full limit: " + d);
                int smallAt = parts.get(0).limiter() == small ? 0 : 1;
                assertFalse(d.decision(smallAt).allowed(), refusing + ": the full limit refused: " + d);
                assertTrue(d.decision(1 - smallAt).allowed(), refusing + ": the bucket alone had room: " + d);
                assertEquals(10, d.decision(1 - smallAt).remaining(), refusing + ": the bucket as a peek: " + d);
                assertTrue(d.retryAfter().compareTo(Duration.ZERO) > 0, refusing + ": " + d);
                assertEquals(10, bucket.peek(k, 1).remaining(), refusing + ": nothing taken from the bucket");
                assertEquals(0, small.peek(k, 1).remaining(), refusing + ": nothing more in the full limit");
            }
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(Algorithm.class)
        void anAllowedRequestTakesFromEveryLimit(Algorithm algorithm) {
            RateLimiter a = perMinute(algorithm, 5);
            RateLimiter b = perMinute(Algorithm.FIXED_WINDOW, 3);
            String k = key("joint-allowed");
            String other = key("joint-other");
            at("12:00:30");
            JointDecision d = RateLimiter.tryAcquireAll(Acquisition.of(a, k, 2), Acquisition.of(b, other));
            assertTrue(d.allowed(), algorithm + ": " + d);
            assertEquals(3, d.decision(0).remaining(), algorithm + ": " + d);
            assertEquals(2, d.decision(1).remaining(), algorithm + ": " + d);
            assertEquals(2, d.remaining(), algorithm + ": the fewest left");
            assertEquals(Duration.ZERO, d.retryAfter(), algorithm.toString());
            assertEquals(3, a.peek(k, 1).remaining(), algorithm + ": taken from the first");
            assertEquals(2, b.peek(other, 1).remaining(), algorithm + ": taken from the second");
        }

        @Test
        void aRefusingLimitThatCountsRejectionsCountsIt() {
            RateLimiter counting =
                    limiter(Algorithm.FIXED_WINDOW, 2, Duration.ofMinutes(1), b -> b.countRejected(true));
            RateLimiter other = limiter(Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(2));
            String k = key("joint-counted");
            at("12:00:30");
            assertTrue(counting.tryAcquire(k, 2).allowed());
            JointDecision d = RateLimiter.tryAcquireAll(Acquisition.of(other, k), Acquisition.of(counting, k));
            assertFalse(d.allowed(), d.toString());
            assertEquals(5, other.peek(k, 1).remaining(), "the limit that passed took nothing");
            at("12:01:00");
            assertEquals(2, counting.peek(k, 1).remaining(), "a new window: the counted refusal is gone with the old");
        }

        @Test
        void badPartsAreRefusedAndConsumeNothing() {
            RateLimiter a = perMinute(Algorithm.FIXED_WINDOW, 5);
            String k = key("joint-bad");
            at("12:00:30");
            IllegalArgumentException twice = assertThrows(
                    IllegalArgumentException.class,
                    () -> RateLimiter.tryAcquireAll(Acquisition.of(a, k), Acquisition.of(a, k, 2)));
            String twiceWhy = String.valueOf(twice.getMessage());
            assertTrue(twiceWhy.contains(k), twiceWhy);
            assertThrows(IllegalArgumentException.class, () -> RateLimiter.tryAcquireAll(List.of()));
            IllegalArgumentException cost = assertThrows(IllegalArgumentException.class, () -> Acquisition.of(a, k, 0));
            String costWhy = String.valueOf(cost.getMessage());
            assertTrue(costWhy.contains("0"), costWhy);
            assertThrows(IllegalArgumentException.class, () -> Acquisition.of(a, "", 1));
            assertEquals(5, a.peek(k, 1).remaining(), "nothing taken");
        }

        @ParameterizedTest(name = "{0}")
        @EnumSource(Algorithm.class)
        void eightThreadsOnOneKeyWithTwoLimitsAdmitExactlyWhatBothAllow(Algorithm algorithm) {
            RateLimiter perSecond = limiter(algorithm, 10, Duration.ofSeconds(1));
            RateLimiter perMinute = limiter(algorithm, 100, Duration.ofMinutes(1));
            RateLimiter refSecond = RateLimiter.builder(algorithm)
                    .limit(10, Duration.ofSeconds(1))
                    .clock(clock)
                    .store(InMemoryStore.create())
                    .build();
            RateLimiter refMinute = RateLimiter.builder(algorithm)
                    .limit(100, Duration.ofMinutes(1))
                    .clock(clock)
                    .store(InMemoryStore.create())
                    .build();
            String k = key("joint-hammer");
            at("12:00:00");
            long total = 0;
            long expectedTotal = 0;
            for (int step = 0; step < 14; step++) { // 2 s apart: a sliding tail's previous second is empty again
                clock.set(NOON.plusSeconds(2L * step));
                List<Boolean> admitted = onThreads(8, 4, () -> RateLimiter.tryAcquireAll(
                                Acquisition.of(perSecond, k), Acquisition.of(perMinute, k))
                        .allowed());
                long passed = admitted.stream().filter(b -> b).count();
                long expected = 0;
                for (int i = 0; i < 32; i++) {
                    expected += RateLimiter.tryAcquireAll(
                                            Acquisition.of(refSecond, "ref"), Acquisition.of(refMinute, "ref"))
                                    .allowed()
                            ? 1
                            : 0;
                }
                total += passed;
                expectedTotal += expected;
                assertEquals(expected, passed, algorithm + ": 32 joint requests at +" + 2 * step + " s");
                assertTrue(passed <= 10, algorithm + ": at most 10 a second, was " + passed);
            }
            assertEquals(expectedTotal, total, algorithm + ": in all");
            if (algorithm == Algorithm.FIXED_WINDOW || algorithm == Algorithm.SLIDING_LOG) {
                assertEquals(100, total, algorithm + ": the minute's 100 exactly, then nothing");
            }
            assertEquals(
                    refMinute.peek("ref", 1).remaining(),
                    perMinute.peek(k, 1).remaining(),
                    algorithm + ": the minute's limit took exactly the admitted requests");
        }
    }

    /** The listener hook: told of every decision, and never able to change one. */
    @Nested
    class Listening {

        @ParameterizedTest(name = "{0}")
        @EnumSource(Algorithm.class)
        void aThrowingListenerChangesNoDecision(Algorithm algorithm) {
            RateLimitListener throwing = new RateLimitListener() {
                @Override
                public void onDecision(RateLimiter limiter, String key, long cost, Decision decision) {
                    throw new IllegalStateException("listener fails on decisions");
                }

                @Override
                public void onStoreFailure(@Nullable RateLimiter limiter, dev.sluice.SluiceException failure) {
                    throw new IllegalStateException("listener fails on failures");
                }

                @Override
                public void onStoreCall(@Nullable RateLimiter limiter, long nanos) {
                    throw new IllegalStateException("listener fails on calls");
                }
            };
            RateLimiter heard = listened(algorithm, 3, Duration.ofMinutes(1), throwing);
            RateLimiter plain = perMinute(algorithm, 3);
            RateLimiter other = limiter(Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(2));
            String a = key("throwing-listener");
            String b = key("quiet");
            at("12:00:30");
            for (int i = 0; i < 5; i++) {
                assertSame("tryAcquire " + i, plain.tryAcquire(b), heard.tryAcquire(a));
            }
            at("12:02:00");
            assertSame("peek", plain.peek(b, 1), heard.peek(a, 1));
            Reservation expected = plain.reserve(b, 1);
            Reservation actual = heard.reserve(a, 1);
            assertSame("reserve", expected.decision(), actual.decision());
            assertEquals(expected.cancel(), actual.cancel(), algorithm + ": cancel");
            JointDecision je = RateLimiter.tryAcquireAll(Acquisition.of(plain, b), Acquisition.of(other, b));
            JointDecision ja = RateLimiter.tryAcquireAll(Acquisition.of(heard, a), Acquisition.of(other, a));
            assertEquals(je, ja, algorithm + ": joint");
        }

        @Test
        void theListenerHearsEveryDecisionButPeeks() {
            List<String> heard = java.util.Collections.synchronizedList(new ArrayList<>());
            RateLimitListener recording = new RateLimitListener() {
                @Override
                public void onDecision(RateLimiter limiter, String key, long cost, Decision decision) {
                    heard.add(key + ":" + cost + ":" + decision.allowed());
                }
            };
            RateLimiter limiter = listened(Algorithm.FIXED_WINDOW, 2, Duration.ofMinutes(1), recording);
            RateLimiter other = limiter(Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(2));
            String k = key("heard");
            at("12:00:30");
            limiter.tryAcquire(k);
            limiter.peek(k, 1);
            limiter.reserve(k, 1);
            limiter.tryAcquire(k);
            RateLimiter.tryAcquireAll(Acquisition.of(other, k), Acquisition.of(limiter, k));
            assertEquals(List.of(k + ":1:true", k + ":1:true", k + ":1:false", k + ":1:false"), heard);
        }
    }

    /** {@link RateLimiter#close()}: a closed limiter takes no more requests; the store serves its other limiters. */
    @Nested
    class Closing {

        @ParameterizedTest(name = "{0}")
        @EnumSource(Algorithm.class)
        void aClosedLimiterRefusesEveryRequest(Algorithm algorithm) {
            RateLimiter limiter = perMinute(algorithm, 3);
            RateLimiter kept = limiter(algorithm, 3, Duration.ofMinutes(2));
            String k = key("closed");
            at("12:00:30");
            Reservation r = limiter.reserve(k, 1);
            assertTrue(r.decision().allowed());
            limiter.close();
            limiter.close();
            assertThrows(IllegalStateException.class, () -> limiter.tryAcquire(k), algorithm + ": tryAcquire");
            assertThrows(IllegalStateException.class, () -> limiter.peek(k, 1), algorithm + ": peek");
            assertThrows(IllegalStateException.class, () -> limiter.reserve(k, 1), algorithm + ": reserve");
            assertThrows(
                    IllegalStateException.class,
                    () -> RateLimiter.tryAcquireAll(Acquisition.of(kept, k), Acquisition.of(limiter, k)),
                    algorithm + ": a joint request with a closed limiter");
            assertEquals(3, kept.peek(k, 1).remaining(), algorithm + ": the joint request took nothing");
            assertTrue(kept.tryAcquire(k).allowed(), algorithm + ": the store still serves other limiters");
        }
    }

    // ---- accuracy -----------------------------------------------------------------------------------------------

    /**
     * How many requests each algorithm lets through within one window under two adversarial patterns, 3 per 60 s:
     * bursts of 3 at two instants one window apart less a resolution. The numbers docs/algorithms.md quotes.
     */
    @Nested
    class Accuracy {

        static Stream<Arguments> burstTotals() {
            return Stream.of( // algorithm, strict, admitted in A (12:00:00+r, 12:01:00), in B (12:01:00−r, 12:02:00−2r)
                    Arguments.of(Algorithm.FIXED_WINDOW, false, 6, 6),
                    Arguments.of(Algorithm.SLIDING_LOG, false, 3, 3),
                    Arguments.of(Algorithm.SLIDING_WINDOW_COUNTER, false, 6, 6),
                    Arguments.of(Algorithm.SLIDING_WINDOW_COUNTER, true, 3, 3),
                    Arguments.of(Algorithm.SLIDING_TAIL, false, 3, 6),
                    Arguments.of(Algorithm.TOKEN_BUCKET, false, 5, 5),
                    Arguments.of(Algorithm.LEAKY_BUCKET, false, 5, 5));
        }

        private long burst(RateLimiter limiter, String k) {
            long admitted = 0;
            for (int i = 0; i < 3; i++) {
                admitted += limiter.tryAcquire(k).allowed() ? 1 : 0;
            }
            return admitted;
        }

        @ParameterizedTest(name = "{0}, strict={1}: {2} and {3} in one window")
        @MethodSource("burstTotals")
        void admittedWithinOneWindow(Algorithm algorithm, boolean strict, long patternA, long patternB) {
            RateLimiter limiter = perMinute(algorithm, 3, false, strict);
            String a = key("burst-a");
            at("12:00:00", r());
            long first = burst(limiter, a);
            at("12:01:00");
            assertEquals(
                    patternA,
                    first + burst(limiter, a),
                    algorithm + (strict ? " strict" : "") + ": bursts at 12:00:00 + r and 12:01:00");
            String b = key("burst-b");
            at("12:01:00", r().negated());
            first = burst(limiter, b);
            at("12:02:00", r(2).negated());
            assertEquals(
                    patternB,
                    first + burst(limiter, b),
                    algorithm + (strict ? " strict" : "") + ": bursts at 12:01:00 − r and 12:02:00 − 2r");
        }
    }
}
