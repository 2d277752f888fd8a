package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.lease.LeasedStore;
import dev.sluice.memory.InMemoryCounterStore;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Locale;

/**
 * The leased request path against the in-memory store as thread CPU time, which a busy machine disturbs far less than
 * throughput. Time is virtual and moves 1/6 µs per decision (6 million decisions a second on one thread), so every run
 * makes the same claims: the {@link Load#ALLOWED} limit (10<sup>7</sup> per 100 ms) turns its window every 600,000
 * decisions, and each key of a leased limiter then claims a new slice on a request, on the request's thread, inside
 * the timing, unless the round claimed its slice ahead. The leased store's round (every 100 ms of virtual time) runs
 * between rounds of decisions, outside the timing, as its background thread would on another core; its claims ahead
 * and give-backs are its store calls. One key or 10,000 walked with a prime stride; rounds of
 * 600,000 decisions; best of 20 rounds after 10 warm-up rounds.
 *
 * <pre>java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.LeaseCost [ALGORITHM [KEYS [LAG_MS]]]</pre>
 *
 * With no argument, the three algorithms on 1 and 10,000 keys; an algorithm, or an algorithm and a key count, runs
 * only that row (to profile one). {@code LAG_MS} makes the rounds come that many milliseconds of virtual time more
 * than an interval apart, as background rounds do, which run an interval after the last one ended: rounds of
 * {@code 100 + LAG_MS} ms of decisions (default 0: every round at a window's turn).
 */
public final class LeaseCost {

    private static final int STRIDE = 7_919;
    private static final int PER_ROUND = 600_000;
    private static final long NANOS_PER_DECISION = 1_000_000_000L / 6_000_000L;
    private static final int WARM_ROUNDS = 10;
    private static final int ROUNDS = 20;

    private static volatile Object sink;

    private LeaseCost() {}

    public static void main(String[] args) {
        System.out.println("| algorithm | keys | in-memory ns/decision | leased ns/decision | leased / in-memory |"
                + " claims on requests per 1,000 decisions | keys claimed ahead per 1,000 decisions |"
                + " store calls per round | round ms |");
        System.out.println("|---|--:|--:|--:|--:|--:|--:|--:|--:|");
        Algorithm[] algorithms = args.length > 0
                ? new Algorithm[] {Algorithm.valueOf(args[0])}
                : new Algorithm[] {Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER, Algorithm.SLIDING_TAIL};
        int[] keyCounts = args.length > 1 ? new int[] {Integer.parseInt(args[1])} : new int[] {1, 10_000};
        int lagMs = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        if (lagMs < 0 || lagMs > 100) {
            throw new IllegalArgumentException("LAG_MS must be 0 to 100 (at most an interval late), was " + lagMs);
        }
        int perRound = PER_ROUND + lagMs * PER_ROUND / 100;
        for (Algorithm algorithm : algorithms) {
            for (int keys : keyCounts) {
                double memory = measure(algorithm, keys, null, perRound)[0];
                try (LeasedStore store = LeasedStore.builder(InMemoryCounterStore.create())
                        .manualRounds()
                        .build()) {
                    double[] leased = measure(algorithm, keys, store, perRound);
                    System.out.printf(
                            Locale.ROOT,
                            "| %s | %,d | %.1f | %.1f | %.2f× | %.2f | %.2f | %.1f | %.1f |%n",
                            algorithm,
                            keys,
                            memory,
                            leased[0],
                            leased[0] / memory,
                            leased[2],
                            leased[3],
                            leased[4],
                            leased[1]);
                }
            }
        }
    }

    /**
     * Best ns per decision; with a store also the best ms per round, the claims made on requests and the keys claimed
     * ahead by rounds per 1,000 decisions, and the store calls per round; {@code perRound} decisions between rounds.
     */
    private static double[] measure(Algorithm algorithm, int keys, LeasedStore store, int perRound) {
        VirtualClock clock = new VirtualClock();
        RateLimiterBuilder builder = RateLimiter.builder(algorithm)
                .limit(Load.ALLOWED.limit, Load.ALLOWED.window)
                .clock(clock);
        if (store != null) {
            builder.store(store);
        }
        RateLimiter limiter = builder.build();
        String[] names = Keys.generate(keys);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double decision = Double.MAX_VALUE;
        double round = Double.MAX_VALUE;
        long claimsBefore = 0;
        long aheadBefore = 0;
        long callsBefore = 0;
        long roundCalls = 0;
        long claims = 0;
        long ahead = 0;
        int index = 0;
        for (int r = -WARM_ROUNDS; r < ROUNDS; r++) {
            if (r == 0 && store != null) {
                claimsBefore = store.stats().claims();
                aheadBefore = store.stats().claimsAhead();
            }
            long start = threads.getCurrentThreadCpuTime();
            Object last = null;
            for (int i = 0; i < perRound; i++) {
                index += STRIDE;
                if (index >= keys) {
                    index %= keys;
                }
                clock.nanos += NANOS_PER_DECISION;
                last = limiter.tryAcquire(names[index]);
            }
            long decided = threads.getCurrentThreadCpuTime();
            sink = last;
            if (store != null) {
                callsBefore = store.stats().storeCalls();
                store.refresh();
                if (r >= 0) {
                    roundCalls += store.stats().storeCalls() - callsBefore;
                }
                long refreshed = threads.getCurrentThreadCpuTime();
                if (r >= 0) {
                    round = Math.min(round, (refreshed - decided) / 1e6);
                }
            }
            if (r >= 0) {
                decision = Math.min(decision, (decided - start) / (double) perRound);
            }
        }
        if (store != null) {
            claims = store.stats().claims() - claimsBefore;
            ahead = store.stats().claimsAhead() - aheadBefore;
        }
        double decisions = (double) ROUNDS * perRound;
        return new double[] {
            decision, round, claims * 1000.0 / decisions, ahead * 1000.0 / decisions, roundCalls / (double) ROUNDS
        };
    }

    /** A clock the measuring thread moves; read by that thread only. {@link LeaseSparseCost} uses it too. */
    static final class VirtualClock extends Clock {
        long nanos = Instant.parse("2026-01-01T12:00:00Z").getEpochSecond() * 1_000_000_000L;

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException("a virtual clock has one zone");
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochSecond(0, nanos);
        }

        @Override
        public long millis() {
            return nanos / 1_000_000L;
        }
    }
}
