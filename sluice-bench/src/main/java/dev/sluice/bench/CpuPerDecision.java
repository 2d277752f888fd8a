package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * The CPU time one thread spends per token-bucket decision on one key, Sluice against Bucket4j, for each
 * {@link TimeSource} and {@link Load}: a companion to {@link TimeSourceBench} for a machine shared with other
 * work, where wall-clock throughput mostly measures the neighbours. Thread CPU time is not disturbed by being
 * descheduled, only by what the neighbours do to caches and clock speed; the best of 20 rounds is the least
 * disturbed. Each configuration runs in a JVM of its own, so that one clock class does not make another's
 * call sites megamorphic.
 *
 * <p>With the argument {@code hotkey} it runs instead the one-hot-key, one-thread cells of the peers' table
 * ({@code docs/benchmarks.md}, "Every peer, every cell, in one run") with each subject's default clock: Sluice's
 * token bucket, sliding tail and fixed window, Bucket4j's {@code tryConsume}, Resilience4j's
 * {@code acquirePermission} and Guava's {@code tryAcquire}, each peer looked up in a {@code ConcurrentHashMap} on
 * every call as the JMH benchmarks do, and as Sluice looks up its key.
 *
 * <pre>
 * java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.CpuPerDecision
 * java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.CpuPerDecision hotkey
 * </pre>
 */
public final class CpuPerDecision {

    private static final String KEY = "client:0000000";
    private static final List<String> HOT_KEY_SUBJECTS = List.of(
            "Sluice:TOKEN_BUCKET", "Sluice:SLIDING_TAIL", "Sluice:FIXED_WINDOW", "Bucket4j", "Resilience4j", "Guava");
    private static final int WARM_ROUNDS = 10;
    private static final int ROUNDS = 20;
    private static final int OPS_PER_ROUND = 2_000_000;

    private static volatile Object sink;

    private CpuPerDecision() {}

    public static void main(String[] args) throws IOException, InterruptedException {
        if (args.length == 4 && args[0].equals("--one")) {
            one(args[1], TimeSource.valueOf(args[2]), Load.valueOf(args[3]));
            return;
        }
        if (args.length == 3 && args[0].equals("--hot")) {
            hot(args[1], Load.valueOf(args[2]));
            return;
        }
        if (args.length == 1 && args[0].equals("hotkey")) {
            System.out.println("| subject | load | best ns/op | median ns/op |");
            System.out.println("|---|---|--:|--:|");
            for (Load load : Load.values()) {
                for (String subject : HOT_KEY_SUBJECTS) {
                    CpuRounds.inNewJvm(
                            CpuPerDecision.class, List.of("--hot", subject, load.name()), System.out::println);
                }
            }
            return;
        }
        System.out.println("| subject | time source | load | best ns/op | median ns/op |");
        System.out.println("|---|---|---|--:|--:|");
        for (TimeSource source : TimeSource.values()) {
            for (Load load : Load.values()) {
                for (String subject : List.of("Sluice", "Bucket4j")) {
                    CpuRounds.inNewJvm(
                            CpuPerDecision.class,
                            List.of("--one", subject, source.name(), load.name()),
                            System.out::println);
                }
            }
        }
    }

    private static void one(String subject, TimeSource source, Load load) {
        Runnable round;
        if (subject.equals("Sluice")) {
            round = sluiceRounds(
                    RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                            .limit(load.limit, load.window)
                            .clock(source.clock())
                            .build(),
                    load);
        } else {
            Bucket bucket = Bucket.builder()
                    .addLimit(l -> l.capacity(load.limit).refillGreedy(load.limit, load.window))
                    .withCustomTimePrecision(source.timeMeter())
                    .build();
            if (load.drained()) {
                bucket.tryConsume(load.limit);
            }
            var buckets = perKey(bucket);
            round = () -> sink = count(() -> at(buckets).tryConsume(1));
        }
        double[] ns = CpuRounds.nanosPerOperation(round, WARM_ROUNDS, ROUNDS, OPS_PER_ROUND);
        System.out.printf(
                Locale.ROOT, "| %s | %s | %s | %.1f | %.1f |%n", subject, source, load, ns[0], ns[ROUNDS / 2]);
    }

    /** One subject of the hot-key table, with its default clock, on one key under {@code load}. */
    private static void hot(String subject, Load load) {
        Runnable round;
        if (subject.startsWith("Sluice:")) {
            round = sluiceRounds(
                    RateLimiter.builder(Algorithm.valueOf(subject.substring("Sluice:".length())))
                            .limit(load.limit, load.window)
                            .build(),
                    load);
        } else if (subject.equals("Bucket4j")) {
            Bucket bucket = Bucket.builder()
                    .addLimit(l -> l.capacity(load.limit).refillGreedy(load.limit, load.window))
                    .build();
            if (load.drained()) {
                bucket.tryConsume(load.limit);
            }
            var buckets = perKey(bucket);
            round = () -> sink = count(() -> at(buckets).tryConsume(1));
        } else if (subject.equals("Resilience4j")) {
            io.github.resilience4j.ratelimiter.RateLimiter limiter = io.github.resilience4j.ratelimiter.RateLimiter.of(
                    KEY,
                    RateLimiterConfig.custom()
                            .limitForPeriod(Math.toIntExact(load.limit))
                            .limitRefreshPeriod(load.window)
                            .timeoutDuration(Duration.ZERO)
                            .build());
            if (load.drained()) {
                limiter.acquirePermission(Math.toIntExact(load.limit));
            }
            var limiters = perKey(limiter);
            round = () -> sink = count(() -> at(limiters).acquirePermission());
        } else if (subject.equals("Guava")) {
            com.google.common.util.concurrent.RateLimiter limiter =
                    com.google.common.util.concurrent.RateLimiter.create(load.limit * 1e9 / load.window.toNanos());
            if (load.drained()) {
                limiter.tryAcquire(Math.toIntExact(load.limit));
            }
            var limiters = perKey(limiter);
            round = () -> sink = count(() -> at(limiters).tryAcquire());
        } else {
            throw new IllegalArgumentException("unknown subject " + subject);
        }
        double[] ns = CpuRounds.nanosPerOperation(round, WARM_ROUNDS, ROUNDS, OPS_PER_ROUND);
        System.out.printf(Locale.ROOT, "| %s | %s | %.1f | %.1f |%n", subject, load, ns[0], ns[ROUNDS / 2]);
    }

    /** A map holding {@code limiter} under {@link #KEY}: the per-key look-up a service makes, as Sluice makes one. */
    private static <L> ConcurrentHashMap<String, L> perKey(L limiter) {
        ConcurrentHashMap<String, L> map = new ConcurrentHashMap<>();
        map.put(KEY, limiter);
        return map;
    }

    /** The limiter of {@link #KEY}, looked up as the JMH benchmarks' per-key state does. */
    private static <L> L at(ConcurrentHashMap<String, L> limiters) {
        L l = limiters.get(KEY);
        if (l == null) {
            throw new IllegalStateException("no limiter for " + KEY);
        }
        return l;
    }

    /** A round of Sluice's {@code tryAcquire} on {@link #KEY}, after spending the limit if {@code load} refuses. */
    private static Runnable sluiceRounds(RateLimiter limiter, Load load) {
        if (load.drained()) {
            limiter.tryAcquire(KEY, load.limit);
        }
        return () -> {
            Decision d = null;
            for (int i = 0; i < OPS_PER_ROUND; i++) {
                d = limiter.tryAcquire(KEY);
            }
            sink = d;
        };
    }

    /** Calls {@code decide} for one round; how many it admitted. */
    private static int count(BooleanSupplier decide) {
        int allowed = 0;
        for (int i = 0; i < OPS_PER_ROUND; i++) {
            if (decide.getAsBoolean()) {
                allowed++;
            }
        }
        return allowed;
    }
}
