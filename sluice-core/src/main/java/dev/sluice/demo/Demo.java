package dev.sluice.demo;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Locale;

/**
 * Runs Sluice on its in-memory store: the classic worked example (3 requests per 60 s) under every algorithm,
 * on a simulated clock, printing what each request is told.
 *
 * <pre>java -jar sluice-core/target/sluice-core-*.jar</pre>
 */
public final class Demo {

    private static final String[] TIMES = {
        "12:00:05", "12:00:15", "12:01:01", "12:01:10", "12:01:40", "12:01:50", "12:02:20"
    };

    private Demo() {}

    public static void main(String[] args) {
        System.out.println(
                "Sluice: 3 requests per 60 s for key \"client:abc\", requests at " + String.join(", ", TIMES));
        System.out.println("(sliding-window counter: 4 sub-windows of 15 s)");
        System.out.println();
        for (Algorithm algorithm : Algorithm.values()) {
            run(algorithm, false, false);
            if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
                run(algorithm, true, false);
            }
            if (algorithm == Algorithm.SLIDING_LOG) {
                run(algorithm, false, true);
            }
        }
    }

    private static void run(Algorithm algorithm, boolean strict, boolean countRejected) {
        SteppedClock clock = new SteppedClock();
        RateLimiterBuilder builder = RateLimiter.builder(algorithm)
                .limit(3, Duration.ofSeconds(60))
                .clock(clock)
                .countRejected(countRejected);
        if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
            builder.buckets(4).strict(strict);
        }
        RateLimiter limiter = builder.build();
        System.out.println(algorithm + (strict ? " (strict)" : "") + (countRejected ? " (countRejected)" : ""));
        for (String time : TIMES) {
            clock.set(time);
            Decision d = limiter.tryAcquire("client:abc");
            System.out.printf(
                    Locale.ROOT,
                    "  %s  %-7s remaining=%d  retryAfter=%-5s resetAfter=%s%n",
                    time,
                    d.allowed() ? "allowed" : "DENIED",
                    d.remaining(),
                    seconds(d.retryAfter()),
                    seconds(d.resetAfter()));
        }
        System.out.println();
    }

    private static String seconds(Duration d) {
        return d.toNanosPart() == 0
                ? d.toSeconds() + "s"
                : String.format(Locale.ROOT, "%d.%09ds", d.toSeconds(), d.toNanosPart());
    }

    /** A clock the demo moves to the time of each request. */
    private static final class SteppedClock extends Clock {
        private Instant now = Instant.EPOCH;

        void set(String time) {
            now = LocalTime.parse(time)
                    .atDate(java.time.LocalDate.of(2026, 1, 1))
                    .toInstant(ZoneOffset.UTC);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException("the demo clock is UTC only");
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
