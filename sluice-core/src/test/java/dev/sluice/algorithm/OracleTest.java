package dev.sluice.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.TestClock;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each state against an oracle written from the definitions of docs/algorithms.md, request by request: the oracles keep
 * every request (or every window's count) and compute with {@link BigInteger}, searching for {@code retryAfter}
 * and {@code resetAfter} instead of solving for them. {@code LEAKY_BUCKET} is checked against the token bucket's
 * oracle: it must admit, and answer, exactly alike.
 *
 * <p>Traffic is random but reproducible (seeded): tryAcquire, peek, reserve and cancel, costs from 1 to the limit,
 * time moving by 0, 1 ns, exactly a window, a window less 1 ns, or random amounts, on windows down to a few
 * nanoseconds (where every rounding shows) and limits up to {@code Long.MAX_VALUE}.
 */
class OracleTest {

    /** A model of one key: the definition, computed the slow way. */
    private interface Oracle {
        Decision decide(long now, long cost, boolean consume);

        /** Where the request just admitted took its permits (an opaque token for {@link #cancel}). */
        Object place(long now);

        boolean cancel(long now, long cost, Object place);

        /**
         * Whether a count the state keeps in one {@code long} (a window's count, the requests of one instant or
         * sub-window) has passed {@code Long.MAX_VALUE}: possible only with countRejected and limits near 2^62, and
         * outside what the states promise to keep exact.
         */
        boolean beyondLong();
    }

    private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);

    private static BigInteger big(long v) {
        return BigInteger.valueOf(v);
    }

    private static long remaining(long limit, long used) {
        return used >= limit ? 0 : limit - used;
    }

    private static Decision decision(long limit, boolean ok, long remaining, long reset, long retry) {
        return ok ? Decision.allowed(limit, remaining, reset) : Decision.denied(limit, remaining, reset, retry);
    }

    /**
     * The oracles that keep a count per epoch-aligned window, {@code floor(now / W)}: a request's place is its
     * window.
     */
    private abstract static class WindowCountOracle implements Oracle {
        final long limit;
        final long window;
        final boolean countRejected;
        final Map<Long, BigInteger> counts = new HashMap<>();

        WindowCountOracle(LimiterConfig c) {
            limit = c.limit();
            window = c.windowNanos();
            countRejected = c.countRejected();
        }

        @Override
        public Object place(long now) {
            return Math.floorDiv(now, window);
        }

        @Override
        public boolean beyondLong() {
            return counts.values().stream().anyMatch(c -> c.compareTo(LONG_MAX) > 0);
        }
    }

    /** {@code FIXED_WINDOW}: a count per epoch-aligned window. */
    private static final class FixedWindowOracle extends WindowCountOracle {
        FixedWindowOracle(LimiterConfig c) {
            super(c);
        }

        @Override
        public Decision decide(long now, long cost, boolean consume) {
            long k = Math.floorDiv(now, window);
            BigInteger count = counts.getOrDefault(k, BigInteger.ZERO);
            boolean ok = count.add(big(cost)).compareTo(big(limit)) <= 0;
            if (consume && (ok || countRejected)) {
                count = count.add(big(cost));
                counts.put(k, count);
            }
            long untilEnd = (k + 1) * window - now;
            return decision(
                    limit,
                    ok,
                    remaining(limit, count.min(LONG_MAX).longValueExact()),
                    count.signum() == 0 ? 0 : untilEnd,
                    untilEnd);
        }

        @Override
        public boolean cancel(long now, long cost, Object place) {
            long k = (Long) place;
            if (k != Math.floorDiv(now, window)) {
                return false; // that window is over
            }
            counts.put(k, counts.get(k).subtract(big(cost)).max(BigInteger.ZERO));
            return true;
        }
    }

    /** A request kept by the log oracles: when it came, what it cost. */
    private static final class Entry {
        final long time;
        long cost;

        Entry(long time, long cost) {
            this.time = time;
            this.cost = cost;
        }
    }

    /**
     * {@code SLIDING_LOG} and {@code SLIDING_WINDOW_COUNTER}: every request kept, and a rule for whether it counts
     * at a given time; {@code retryAfter} and {@code resetAfter} by trying the instants at which entries stop
     * counting.
     */
    private static final class LogOracle implements Oracle {
        final long limit;
        final long window;
        final boolean countRejected;
        final Algorithm algorithm;
        final long sub;
        final boolean strict;
        final List<Entry> entries = new ArrayList<>();

        LogOracle(LimiterConfig c) {
            limit = c.limit();
            window = c.windowNanos();
            countRejected = c.countRejected();
            algorithm = c.algorithm();
            sub = c.subWindowNanos();
            strict = c.strict();
        }

        /** Whether {@code e} counts at {@code now}: the definition in docs/algorithms.md, literally. */
        boolean counts(Entry e, long now) {
            if (algorithm == Algorithm.SLIDING_LOG) {
                return e.time > now - window; // in (now − W, now]
            }
            long start = Math.floorDiv(e.time, sub) * sub;
            return strict ? start + sub > now - window : start > now - window;
        }

        BigInteger total(long now) {
            BigInteger t = BigInteger.ZERO;
            for (Entry e : entries) {
                if (counts(e, now)) {
                    t = t.add(big(e.cost));
                }
            }
            return t;
        }

        /** The least instant {@code ≥ now} at which the total is at most {@code target}. */
        long firstTimeAtMost(long now, long target) {
            List<Long> candidates = new ArrayList<>();
            candidates.add(now);
            for (Entry e : entries) {
                // an entry stops counting at its time + W (log), its sub-window's start + W (+ S when strict)
                long start = algorithm == Algorithm.SLIDING_LOG ? e.time : Math.floorDiv(e.time, sub) * sub;
                long stop = start + window + (algorithm != Algorithm.SLIDING_LOG && strict ? sub : 0);
                if (stop > now) {
                    candidates.add(stop);
                }
            }
            candidates.sort(null);
            for (long t : candidates) {
                if (total(t).compareTo(big(target)) <= 0) {
                    return t;
                }
            }
            throw new AssertionError("never at most " + target);
        }

        @Override
        public Decision decide(long now, long cost, boolean consume) {
            entries.removeIf(e -> !counts(e, now));
            boolean ok = total(now).add(big(cost)).compareTo(big(limit)) <= 0;
            if (consume && (ok || countRejected)) {
                entries.add(new Entry(now, cost));
            }
            BigInteger total = total(now);
            long remaining = total.compareTo(big(limit)) >= 0 ? 0 : limit - total.longValueExact();
            long reset = firstTimeAtMost(now, 0) - now;
            long retry = ok ? 0 : firstTimeAtMost(now, limit - cost) - now;
            return decision(limit, ok, remaining, reset, retry);
        }

        @Override
        public Object place(long now) {
            return entries.get(entries.size() - 1);
        }

        @Override
        public boolean cancel(long now, long cost, Object place) {
            Entry e = (Entry) place;
            if (!counts(e, now) || !entries.contains(e)) {
                return false;
            }
            entries.remove(e);
            return true;
        }

        @Override
        public boolean beyondLong() {
            Map<Long, BigInteger> groups = new HashMap<>(); // the state keeps one weight per instant or sub-window
            for (Entry e : entries) {
                long group = algorithm == Algorithm.SLIDING_LOG ? e.time : Math.floorDiv(e.time, sub);
                groups.merge(group, big(e.cost), BigInteger::add);
            }
            return groups.values().stream().anyMatch(c -> c.compareTo(LONG_MAX) > 0);
        }
    }

    /** {@code SLIDING_TAIL}: a count per window; the estimate's decline searched by bisection. */
    private static final class TailOracle extends WindowCountOracle {
        TailOracle(LimiterConfig c) {
            super(c);
        }

        /** {@code floor(prev·(W−e)/W) + cur}. */
        BigInteger estimate(long now) {
            long k = Math.floorDiv(now, window);
            long e = now - k * window;
            BigInteger prev = counts.getOrDefault(k - 1, BigInteger.ZERO);
            BigInteger cur = counts.getOrDefault(k, BigInteger.ZERO);
            return prev.multiply(big(window - e)).divide(big(window)).add(cur);
        }

        /** The least {@code Δ ≥ 0} with {@code estimate(now + Δ) ≤ target}; the estimate never rises untouched. */
        long until(long now, long target) {
            long lo = 0;
            long hi = 2 * window;
            while (lo < hi) {
                long mid = (lo + hi) >>> 1;
                if (estimate(now + mid).compareTo(big(target)) <= 0) {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            return lo;
        }

        @Override
        public Decision decide(long now, long cost, boolean consume) {
            boolean ok = estimate(now).add(big(cost)).compareTo(big(limit)) <= 0;
            if (consume && (ok || countRejected)) {
                counts.merge(Math.floorDiv(now, window), big(cost), BigInteger::add);
            }
            BigInteger est = estimate(now);
            long remaining = est.compareTo(big(limit)) >= 0 ? 0 : limit - est.longValueExact();
            return decision(limit, ok, remaining, until(now, 0), ok ? 0 : until(now, limit - cost));
        }

        @Override
        public boolean cancel(long now, long cost, Object place) {
            long k = (Long) place;
            long current = Math.floorDiv(now, window);
            if (k != current && k != current - 1) {
                return false; // neither the current nor the previous window any more
            }
            BigInteger count = counts.getOrDefault(k, BigInteger.ZERO);
            if (count.signum() == 0) {
                return false;
            }
            counts.put(k, count.subtract(big(cost)).max(BigInteger.ZERO));
            return true;
        }
    }

    /**
     * {@code TOKEN_BUCKET} (and {@code LEAKY_BUCKET}): tokens times W as an exact integer, refilled at L per
     * nanosecond (L/W tokens). A reservation holds its tokens until the bucket is full at any instant after it
     * was taken: then no token is held by anyone.
     */
    private static final class BucketOracle implements Oracle {
        final long limit;
        final long window;
        final boolean countRejected;
        final BigInteger full;
        BigInteger scaled; // tokens · W
        long last = Long.MIN_VALUE;
        long lastFull = Long.MIN_VALUE; // the latest instant, up to last, at which the bucket was full

        BucketOracle(LimiterConfig c) {
            limit = c.limit();
            window = c.windowNanos();
            countRejected = c.countRejected();
            full = big(limit).multiply(big(window));
            scaled = full;
        }

        void advance(long now) {
            if (last != Long.MIN_VALUE && now > last) {
                scaled = scaled.add(big(now - last).multiply(big(limit))).min(full);
            }
            last = Math.max(last, now);
            if (scaled.equals(full)) {
                lastFull = last;
            }
        }

        long ceilDiv(BigInteger a, long b) {
            BigInteger[] qr = a.divideAndRemainder(big(b));
            return qr[0].longValueExact() + (qr[1].signum() > 0 ? 1 : 0);
        }

        @Override
        public Decision decide(long now, long cost, boolean consume) {
            advance(now);
            BigInteger need = big(cost).multiply(big(window));
            boolean ok = scaled.compareTo(need) >= 0;
            if (consume) {
                if (ok) {
                    scaled = scaled.subtract(need);
                } else if (countRejected) {
                    scaled = BigInteger.ZERO;
                }
            }
            long remaining = scaled.divide(big(window)).longValueExact();
            long reset = ceilDiv(full.subtract(scaled), limit);
            long retry = ok ? 0 : ceilDiv(need.subtract(scaled), limit);
            return decision(limit, ok, remaining, reset, retry);
        }

        @Override
        public Object place(long now) {
            return last;
        }

        @Override
        public boolean cancel(long now, long cost, Object place) {
            advance(now);
            if (scaled.equals(full)) {
                return false;
            }
            if (lastFull > (Long) place) {
                return false; // full after the reservation: its tokens have come back already
            }
            scaled = scaled.add(big(cost).multiply(big(window))).min(full);
            if (scaled.equals(full)) {
                lastFull = last;
            }
            return true;
        }

        @Override
        public boolean beyondLong() {
            return false;
        }
    }

    private static Oracle oracle(LimiterConfig c) {
        switch (c.algorithm()) {
            case FIXED_WINDOW:
                return new FixedWindowOracle(c);
            case SLIDING_LOG:
            case SLIDING_WINDOW_COUNTER:
                return new LogOracle(c);
            case SLIDING_TAIL:
                return new TailOracle(c);
            default:
                return new BucketOracle(c);
        }
    }

    static Stream<Arguments> configurations() {
        long[][] shapes = { // limit, window in ns, buckets
            {3, 60_000_000_000L, 4},
            {1, 10, 1},
            {3, 7, 3},
            {5, 12, 5},
            {7, 1_000, 6},
            {100, 997, 10},
            {2, 1, 1},
            {1_000_000_007L, 13, 4},
            {Long.MAX_VALUE, 1_000_000_000L, 7},
            {Long.MAX_VALUE / 3, 11, 2}
        };
        Stream.Builder<Arguments> b = Stream.builder();
        for (Algorithm algorithm : Algorithm.values()) {
            for (long[] shape : shapes) {
                for (boolean countRejected : new boolean[] {false, true}) {
                    for (boolean strict : new boolean[] {false, true}) {
                        if (strict && algorithm != Algorithm.SLIDING_WINDOW_COUNTER) {
                            continue;
                        }
                        b.add(Arguments.of(algorithm, shape[0], shape[1], (int) shape[2], countRejected, strict));
                    }
                }
            }
        }
        return b.build();
    }

    @ParameterizedTest(name = "{0} {1}/{2}ns buckets={3} countRejected={4} strict={5}")
    @MethodSource("configurations")
    void agreesWithTheDefinition(
            Algorithm algorithm, long limit, long windowNanos, int buckets, boolean countRejected, boolean strict) {
        LimiterConfig config = new LimiterConfig(
                algorithm,
                limit,
                Duration.ofNanos(windowNanos),
                new TestClock(),
                countRejected,
                algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? buckets : LimiterConfig.DEFAULT_BUCKETS,
                strict);
        Params p = new Params(config);
        Random random = new Random(limit * 31
                + windowNanos * 17
                + algorithm.ordinal() * 7L
                + buckets
                + (countRejected ? 1 : 0)
                + (strict ? 2 : 0));
        for (int run = 0; run < 20; run++) {
            AlgorithmState state = AlgorithmState.create(algorithm, p);
            Oracle oracle = oracle(config);
            List<Object[]> reservations = new ArrayList<>(); // {cost, state place, oracle place}
            long now = TestClock.NOON.getEpochSecond() * 1_000_000_000L + random.nextInt(1_000_000);
            List<String> trace = new ArrayList<>();
            for (int step = 0; step < 120; step++) {
                now += step(random, windowNanos);
                long cost = random.nextInt(3) > 0 ? 1 : 1 + (long) (random.nextDouble() * limit);
                cost = Math.max(1, Math.min(limit, cost));
                int op = random.nextInt(20);
                boolean cancel = op >= 17 && !reservations.isEmpty();
                String what = op < 10 ? "tryAcquire" : op < 13 ? "peek" : cancel ? "cancel" : "reserve";
                trace.add(what + "@" + now + (cancel ? "" : " cost " + cost));
                String at = "run " + run + " step " + step + " " + what + " at " + now + " cost " + cost + ", after "
                        + trace.subList(Math.max(0, trace.size() - 12), trace.size());
                if (cancel) {
                    Object[] r = reservations.remove(random.nextInt(reservations.size()));
                    long c = (Long) r[0];
                    boolean expected = oracle.cancel(now, c, r[2]);
                    assertEquals(expected, state.giveBack(p, now, c, (Long) r[1]), at + ": cancel of cost " + c);
                    continue;
                }
                Decision expected = oracle.decide(now, cost, op >= 13 || op < 10);
                Decision actual = state.decide(p, now, cost, op >= 13 || op < 10);
                if (oracle.beyondLong()) {
                    break; // outside the exact domain from here on
                }
                assertEquals(expected, actual, at);
                if (op >= 13 && actual.allowed()) {
                    reservations.add(new Object[] {cost, state.place(p, now), oracle.place(now)});
                }
            }
        }
    }

    private static long step(Random random, long window) {
        switch (random.nextInt(8)) {
            case 0:
                return 0;
            case 1:
                return 1;
            case 2:
                return window;
            case 3:
                return window - 1;
            case 4:
                return (long) (random.nextDouble() * 3 * window);
            default:
                return (long) (random.nextDouble() * window / 3);
        }
    }
}
