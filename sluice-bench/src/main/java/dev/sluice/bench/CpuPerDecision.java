package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import io.github.bucket4j.Bucket;
import java.io.IOException;
import java.util.List;
import java.util.Locale;

/**
 * The CPU time one thread spends per token-bucket decision on one key, Sluice against Bucket4j, for each
 * {@link TimeSource} and {@link Load}: a companion to {@link TimeSourceBench} for a machine shared with other
 * work, where wall-clock throughput mostly measures the neighbours. Thread CPU time is not disturbed by being
 * descheduled, only by what the neighbours do to caches and clock speed; the best of 20 rounds is the least
 * disturbed. Each configuration runs in a JVM of its own, so that one clock class does not make another's
 * call sites megamorphic.
 *
 * <pre>java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.CpuPerDecision</pre>
 */
public final class CpuPerDecision {

    private static final String KEY = "client:0000000";
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
            RateLimiter limiter = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                    .limit(load.limit, load.window)
                    .clock(source.clock())
                    .build();
            if (load.drained()) {
                limiter.tryAcquire(KEY, load.limit);
            }
            round = () -> {
                Decision d = null;
                for (int i = 0; i < OPS_PER_ROUND; i++) {
                    d = limiter.tryAcquire(KEY);
                }
                sink = d;
            };
        } else {
            Bucket bucket = Bucket.builder()
                    .addLimit(l -> l.capacity(load.limit).refillGreedy(load.limit, load.window))
                    .withCustomTimePrecision(source.timeMeter())
                    .build();
            if (load.drained()) {
                bucket.tryConsume(load.limit);
            }
            round = () -> {
                int allowed = 0;
                for (int i = 0; i < OPS_PER_ROUND; i++) {
                    if (bucket.tryConsume(1)) {
                        allowed++;
                    }
                }
                sink = allowed;
            };
        }
        double[] ns = CpuRounds.nanosPerOperation(round, WARM_ROUNDS, ROUNDS, OPS_PER_ROUND);
        System.out.printf(
                Locale.ROOT, "| %s | %s | %s | %.1f | %.1f |%n", subject, source, load, ns[0], ns[ROUNDS / 2]);
    }
}
