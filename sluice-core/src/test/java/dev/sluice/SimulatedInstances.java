package dev.sluice;

import dev.sluice.memory.InMemoryStore;
import dev.sluice.spi.RateLimitStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The instances of a simulation of synchronized or leased mode: one limiter per store, one client's key, all on one
 * virtual clock, limited to {@code limit} per second ({@code SLIDING_WINDOW_COUNTER} with 10 sub-windows). Alongside,
 * an exact limiter with an unreachable limit (the oracle) is told every admitted request; its {@code remaining} gives
 * the algorithm's own measure {@code M} of the admitted traffic (the window's count, the sliding tail's estimate, the
 * live sub-windows' sum), which a single exact limiter keeps at most {@code L}.
 */
public final class SimulatedInstances {

    private static final long ORACLE_LIMIT = 1L << 40;
    private static final String KEY = "client:abc";

    private final TestClock clock = new TestClock("2026-01-01T12:00:00Z");
    private final long start = clock.nanos();
    private final List<RateLimiter> limiters = new ArrayList<>();
    private final RateLimiter oracle;

    /**
     * An instance per store; unless {@code cold}, each has peeked at the key, as an instance that served the client
     * before holds it.
     */
    public SimulatedInstances(Algorithm algorithm, long limit, List<? extends RateLimitStore> stores, boolean cold) {
        UnaryOperator<RateLimiterBuilder> options =
                b -> algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? b.buckets(10) : b;
        for (RateLimitStore store : stores) {
            limiters.add(options.apply(RateLimiter.builder(algorithm)
                            .limit(limit, Duration.ofSeconds(1))
                            .clock(clock))
                    .store(store)
                    .build());
        }
        oracle = options.apply(RateLimiter.builder(algorithm)
                        .limit(ORACLE_LIMIT, Duration.ofSeconds(1))
                        .clock(clock))
                .store(InMemoryStore.create())
                .build();
        if (!cold) {
            for (RateLimiter limiter : limiters) {
                limiter.peek(KEY, 1); // the steady state: every instance has served this client before
            }
        }
    }

    /** Moves the clock to {@code nanos} after the start. */
    public void at(long nanos) {
        clock.set(Instant.ofEpochSecond(0, start + nanos));
    }

    /** One request at instance {@code j}: the measure {@code M} after it if admitted, else -1. */
    public long request(int j) {
        if (!limiters.get(j).tryAcquire(KEY).allowed()) {
            return -1;
        }
        oracle.tryAcquire(KEY);
        return ORACLE_LIMIT - oracle.peek(KEY, 1).remaining();
    }

    /** A run's outcome, as requests admitted in each second {@code [s, s+1)} of the run. */
    public interface PerSecond {

        /** Admitted in each second of the run. */
        long[] perSecond();

        /** Admitted over the run. */
        default long admitted() {
            long sum = 0;
            for (long c : perSecond()) {
                sum += c;
            }
            return sum;
        }

        /** Admitted per second, on average. */
        default double meanPerSecond() {
            return (double) admitted() / perSecond().length;
        }

        /** The most admitted in one second. */
        default long maxPerSecond() {
            long max = 0;
            for (long c : perSecond()) {
                max = Math.max(max, c);
            }
            return max;
        }
    }
}
