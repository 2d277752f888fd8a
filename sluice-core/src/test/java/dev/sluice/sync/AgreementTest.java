package dev.sluice.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.Reservation;
import dev.sluice.TestClock;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.memory.InMemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One instance alone decides exactly as the in-memory store, request by request, however its flushes and refreshes
 * fall between requests: moving counts between {@code i}, {@code g} and the store, rebuilding the state from
 * {@code g + i}, evicting idle keys and cancelling across flushes change no answer.
 */
class AgreementTest {

    static Stream<Arguments> variants() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (boolean counted : new boolean[] {false, true}) {
            b.add(Arguments.of(Algorithm.FIXED_WINDOW, counted, false));
            b.add(Arguments.of(Algorithm.SLIDING_TAIL, counted, false));
            b.add(Arguments.of(Algorithm.SLIDING_WINDOW_COUNTER, counted, false));
            b.add(Arguments.of(Algorithm.SLIDING_WINDOW_COUNTER, counted, true));
        }
        return b.build();
    }

    @ParameterizedTest(name = "{0}, countRejected={1}, strict={2}")
    @MethodSource("variants")
    void aloneItDecidesAsTheInMemoryStore(Algorithm algorithm, boolean countRejected, boolean strict) {
        Random random = new Random(17L * algorithm.ordinal() + (countRejected ? 5 : 0) + (strict ? 2 : 0));
        TestClock clock = new TestClock("2026-01-01T12:00:00Z");
        long[] limits = {1, 3, 7, 100};
        Duration[] windows = {Duration.ofSeconds(1), Duration.ofSeconds(60), Duration.ofMillis(7_200)};
        int rounds = 0;
        for (int round = 0; round < 8; round++) {
            long limit = limits[random.nextInt(limits.length)];
            Duration window = windows[random.nextInt(windows.length)];
            UnaryOperator<RateLimiterBuilder> options = o -> {
                o.countRejected(countRejected);
                return algorithm == Algorithm.SLIDING_WINDOW_COUNTER
                        ? o.buckets(4).strict(strict)
                        : o;
            };
            SynchronizedStore sync = SynchronizedStore.builder(InMemoryCounterStore.create())
                    .manualRounds()
                    .batchSize(1 + random.nextInt(3))
                    .build();
            RateLimiter synced = options.apply(
                            RateLimiter.builder(algorithm).limit(limit, window).clock(clock))
                    .store(sync)
                    .build();
            RateLimiter reference = options.apply(
                            RateLimiter.builder(algorithm).limit(limit, window).clock(clock))
                    .store(InMemoryStore.create())
                    .build();
            String[] keys = {"a", "b", "c"};
            List<Reservation[]> reservations = new ArrayList<>();
            for (int step = 0; step < 120; step++) {
                clock.advance(Duration.ofMillis(random.nextInt((int) (window.toMillis() / 3) + 1)));
                String k = keys[random.nextInt(keys.length)];
                long cost = 1 + (random.nextInt(4) == 0 ? random.nextInt((int) limit) : 0);
                String at = algorithm + " " + limit + "/" + window + " round " + round + " step " + step + " key " + k
                        + " cost " + cost;
                int op = random.nextInt(12);
                if (op < 6) {
                    assertSame(at + " tryAcquire", reference.tryAcquire(k, cost), synced.tryAcquire(k, cost));
                } else if (op < 7) {
                    assertSame(at + " peek", reference.peek(k, cost), synced.peek(k, cost));
                } else if (op < 9 || reservations.isEmpty()) {
                    Reservation[] pair = {reference.reserve(k, cost), synced.reserve(k, cost)};
                    assertSame(at + " reserve", pair[0].decision(), pair[1].decision());
                    reservations.add(pair);
                } else if (op < 10) {
                    Reservation[] pair = reservations.remove(random.nextInt(reservations.size()));
                    assertEquals(pair[0].cancel(), pair[1].cancel(), at + " cancel of " + pair[0]);
                } else if (op < 11) {
                    assertTrue(sync.flush(), at + " flush");
                    rounds++;
                } else {
                    assertTrue(sync.refresh(), at + " refresh");
                    rounds++;
                }
            }
        }
        assertTrue(rounds > 100, "flushes and refreshes: " + rounds);
    }

    private static void assertSame(String at, Decision expected, Decision actual) {
        assertEquals(expected, actual, at);
    }
}
