package dev.sluice.bench;

import dev.sluice.policy.Descriptor;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Locale;

/**
 * The heap the metrics of a {@code detailed_metric: true} rule keep after {@code N} distinct client ids have gone
 * through a {@link PolicyLimiter}: the Micrometer registry (a {@link SimpleMeterRegistry}) and the limiter's own
 * bookkeeping of the values it tags, which the cap ({@link PolicyLimiter.Builder#maxDetailedValues}, default
 * {@value PolicyLimiter#DEFAULT_MAX_DETAILED_VALUES}) bounds.
 *
 * <p>Each run: a new registry and limiter (in memory, on a fixed clock, 100 per second per client, so every request
 * is allowed), the client ids generated beforehand (so their strings are not counted), the used heap after full
 * collections (run it with Serial GC) before the requests; then {@code N} checks of {@code [client_id=id]}, each id
 * once; then the limiter closed, which drops its counts (a million keys of the in-memory store) but not its metrics
 * bookkeeping, and the heap again: <em>registry and bookkeeping</em>; then the limiter dropped, and the heap again:
 * <em>registry alone</em>. Runs: capped at 1,000 ids, capped at {@code N}, and uncapped at {@code N / 10} to show
 * what one value costs without the cap.
 *
 * <pre>java -XX:+UseSerialGC -Xmx4g -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.PolicyMetricsHeap [N]</pre>
 */
public final class PolicyMetricsHeap {

    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();
    private static final String CONFIGURATION =
            """
            domain: oauth-token
            descriptors:
              - key: client_id
                detailed_metric: true
                rate_limit: {unit: second, requests_per_unit: 100}
            """;

    private PolicyMetricsHeap() {}

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        PrintStream out = System.out;
        out.printf(
                Locale.ROOT,
                "Heap of the detailed metrics, %s %s, max heap %,d MB%n",
                System.getProperty("java.vm.name"),
                System.getProperty("java.version"),
                Runtime.getRuntime().maxMemory() >> 20);
        out.println("| client ids | cap | meters | registry and bookkeeping | registry alone |");
        out.println("|--:|--:|--:|--:|--:|");
        run(out, 1_000, PolicyLimiter.DEFAULT_MAX_DETAILED_VALUES);
        run(out, n, PolicyLimiter.DEFAULT_MAX_DETAILED_VALUES);
        run(out, n / 10, Integer.MAX_VALUE);
    }

    private static void run(PrintStream out, int ids, int cap) {
        String[] clients = Keys.generate(ids);
        Policies policies = Policies.parse("oauth-token.yaml", CONFIGURATION);
        Clock clock = Clock.fixed(Instant.parse("2026-01-01T12:00:00Z"), ZoneOffset.UTC);
        MeterRegistry registry = new SimpleMeterRegistry();
        PolicyLimiter limiter = PolicyLimiter.builder(policies)
                .clock(clock)
                .meterRegistry(registry)
                .maxDetailedValues(cap)
                .build();
        long before = usedAfterGc();
        for (String client : clients) {
            if (!limiter.check("oauth-token", List.of(Descriptor.of("client_id", client)), 1)
                    .allowed()) {
                throw new IllegalStateException("refused: " + client);
            }
        }
        limiter.close();
        long withBookkeeping = usedAfterGc() - before;
        Reference.reachabilityFence(limiter);
        limiter = null;
        long registryAlone = usedAfterGc() - before;
        int meters = registry.getMeters().size();
        out.printf(
                Locale.ROOT,
                "| %,d | %s | %,d | %s | %s |%n",
                ids,
                cap == Integer.MAX_VALUE ? "none" : String.format(Locale.ROOT, "%,d", cap),
                meters,
                size(withBookkeeping),
                size(registryAlone));
        Reference.reachabilityFence(registry);
        Reference.reachabilityFence(clients);
    }

    private static String size(long bytes) {
        return bytes >= 10L << 20
                ? String.format(Locale.ROOT, "%.1f MB", bytes / 1048576.0)
                : String.format(Locale.ROOT, "%,d KB", bytes >> 10);
    }

    private static long usedAfterGc() {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            used = Math.min(used, MEMORY.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
