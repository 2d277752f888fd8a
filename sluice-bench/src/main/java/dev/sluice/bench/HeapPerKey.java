package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Measures the heap one idle key costs: fills a limiter with {@code N} keys (one request each, 1,000 per hour, so
 * no key is back to its full limit and none may be evicted), and compares the used heap after full collections
 * before and after. The keys are generated before the first measurement, so their strings are not counted; their
 * size is reported on its own line, since a store keeps the first key string it saw for as long as it holds the key.
 *
 * <p>Sluice runs on a fixed clock so that no state becomes idle while the store fills; the competitors keep the
 * clock they read by default, which cannot matter within the few seconds of a fill at one request per key.
 *
 * <pre>java -XX:+UseSerialGC -Xmx4g -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.HeapPerKey [N] [json-file]</pre>
 */
public final class HeapPerKey {

    private static final long LIMIT = 1_000;
    private static final Duration WINDOW = Duration.ofHours(1);
    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

    private HeapPerKey() {}

    public static void main(String[] args) throws IOException {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        Path json = args.length > 1 ? Path.of(args[1]) : null;
        PrintStream out = System.out;
        out.printf(
                Locale.ROOT,
                "Heap per idle key, %,d keys, %s %s, max heap %,d MB%n",
                n,
                System.getProperty("java.vm.name"),
                System.getProperty("java.version"),
                Runtime.getRuntime().maxMemory() >> 20);

        List<String> rows = new ArrayList<>();
        double keyBytes = measureKeys(n);
        out.printf(Locale.ROOT, "%-36s %8.1f B/key%n", "key strings (\"client:0000000\")", keyBytes);
        rows.add(row("key strings", keyBytes));

        Clock fixed = Clock.fixed(Instant.parse("2026-01-01T12:00:00Z"), ZoneOffset.UTC);
        for (Algorithm algorithm : Algorithm.values()) {
            double b = measure(n, keys -> {
                RateLimiter limiter = RateLimiter.builder(algorithm)
                        .limit(LIMIT, WINDOW)
                        .clock(fixed)
                        .build();
                for (String key : keys) {
                    require(limiter.tryAcquire(key).allowed(), key);
                }
                return limiter;
            });
            out.printf(Locale.ROOT, "%-36s %8.1f B/key%n", "Sluice " + algorithm, b);
            rows.add(row("Sluice " + algorithm, b));
        }

        double bucket4j = measure(n, keys -> {
            ConcurrentHashMap<String, Bucket> map = new ConcurrentHashMap<>();
            for (String key : keys) {
                Bucket b = map.computeIfAbsent(key, k -> Bucket.builder()
                        .addLimit(l -> l.capacity(LIMIT).refillGreedy(LIMIT, WINDOW))
                        .build());
                require(b.tryConsume(1), key);
            }
            return map;
        });
        out.printf(Locale.ROOT, "%-36s %8.1f B/key%n", "Bucket4j (ConcurrentHashMap)", bucket4j);
        rows.add(row("Bucket4j", bucket4j));

        RateLimiterConfig r4jConfig = RateLimiterConfig.custom()
                .limitForPeriod((int) LIMIT)
                .limitRefreshPeriod(WINDOW)
                .timeoutDuration(Duration.ZERO)
                .build();
        double r4j = measure(n, keys -> {
            ConcurrentHashMap<String, io.github.resilience4j.ratelimiter.RateLimiter> map = new ConcurrentHashMap<>();
            for (String key : keys) {
                require(
                        map.computeIfAbsent(key, k -> io.github.resilience4j.ratelimiter.RateLimiter.of(k, r4jConfig))
                                .acquirePermission(),
                        key);
            }
            return map;
        });
        out.printf(Locale.ROOT, "%-36s %8.1f B/key%n", "Resilience4j (ConcurrentHashMap)", r4j);
        rows.add(row("Resilience4j", r4j));

        double guava = measure(n, keys -> {
            ConcurrentHashMap<String, com.google.common.util.concurrent.RateLimiter> map = new ConcurrentHashMap<>();
            double perSecond = LIMIT / (double) WINDOW.toSeconds();
            for (String key : keys) {
                require(
                        map.computeIfAbsent(key, k -> com.google.common.util.concurrent.RateLimiter.create(perSecond))
                                .tryAcquire(),
                        key);
            }
            return map;
        });
        out.printf(Locale.ROOT, "%-36s %8.1f B/key%n", "Guava (ConcurrentHashMap)", guava);
        rows.add(row("Guava", guava));

        if (json != null) {
            Files.writeString(
                    json,
                    "{\"keys\": " + n + ", \"bytesPerKey\": {\n  " + String.join(",\n  ", rows) + "\n}}\n",
                    StandardCharsets.UTF_8);
        }
    }

    private static double measureKeys(int n) {
        long before = usedAfterGc();
        String[] keys = Keys.generate(n);
        long after = usedAfterGc();
        Reference.reachabilityFence(keys);
        return (after - before) / (double) n;
    }

    /** Bytes per key that {@code fill} keeps reachable, with the keys themselves generated beforehand. */
    private static double measure(int n, Function<String[], Object> fill) {
        String[] keys = Keys.generate(n);
        long before = usedAfterGc();
        Object filled = fill.apply(keys);
        long after = usedAfterGc();
        Reference.reachabilityFence(filled);
        Reference.reachabilityFence(keys);
        return (after - before) / (double) n;
    }

    /** Used heap after full collections, once two in a row agree within 64 KB (at most ten). */
    private static long usedAfterGc() {
        long previous = Long.MAX_VALUE;
        for (int i = 0; i < 10; i++) {
            System.gc();
            long used = MEMORY.getHeapMemoryUsage().getUsed();
            if (Math.abs(previous - used) < 64 * 1024) {
                return used;
            }
            previous = used;
        }
        return previous;
    }

    private static void require(boolean allowed, String key) {
        if (!allowed) {
            throw new IllegalStateException("a first request was denied for " + key);
        }
    }

    private static String row(String name, double bytes) {
        return String.format(Locale.ROOT, "\"%s\": %.1f", name, bytes);
    }
}
