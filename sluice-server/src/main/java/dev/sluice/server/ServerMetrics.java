package dev.sluice.server;

import dev.sluice.policy.Limit;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.policy.Rule;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * The service's own metrics, beside the policy limiter's ({@code sluice.policy.*}, see {@code docs/policies.md}):
 *
 * <ul>
 *   <li>{@code sluice.server.requests} (counter; {@code transport} = {@code grpc} or {@code http}, {@code result} =
 *       {@code ok}, {@code over_limit}, {@code invalid}, {@code unavailable}, or {@code exhausted}: a gRPC call
 *       answered {@code RESOURCE_EXHAUSTED} because the queue of calls waiting for a thread was full or every open
 *       call's place was taken): requests answered;
 *   <li>{@code sluice.server.answer} (timer; {@code transport}): time from a decision request's arrival to its
 *       answer, bad requests included, on the service's side;
 *   <li>{@code sluice.server.rule.limit} (gauge; {@code domain}, {@code rule}, {@code limit}, {@code window_seconds}):
 *       the limit of each limited rule of the configuration in force, so a chart can draw it beside the rule's
 *       allowed rate; rules of a replaced configuration disappear with it;
 *   <li>{@code sluice.server.bound.used} and {@code sluice.server.bound.limit} (gauges; {@code bound}): what each of the
 *       service's bounds holds now and the bound itself ({@link #bound}), so that an alert can fire before requests
 *       are refused at it;
 *   <li>{@code sluice.server.build.info} (gauge, always 1; {@code version}, {@code java}): which build runs, so that
 *       instances of different versions sharing a store can be told apart.
 * </ul>
 *
 * <p>Thread-safe.
 */
final class ServerMetrics {
    private final MeterRegistry registry;
    private final MultiGauge ruleLimits;
    /** By transport, then result: found per request without building a key (both are constants of the callers). */
    private final ConcurrentHashMap<String, ConcurrentHashMap<String, Counter>> requests = new ConcurrentHashMap<>();
    /** The limiter version whose rules the gauge shows; guarded by {@code this}. */
    private long limitsVersion = -1;

    ServerMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.ruleLimits = MultiGauge.builder("sluice.server.rule.limit")
                .description("The limit of each limited rule in force, in requests per window_seconds")
                .register(registry);
        Gauge.builder("sluice.server.build.info", () -> 1)
                .description("The build that runs: its version and the Java it runs on; always 1")
                .tag("version", Main.version())
                .tag("java", System.getProperty("java.version", "unknown"))
                .strongReference(true)
                .register(registry);
    }

    private final ConcurrentHashMap<String, Timer> answers = new ConcurrentHashMap<>();

    void answered(String transport, long startNanos) {
        Timer t = answers.get(transport); // a get first: the capturing function would otherwise be made per call
        if (t == null) {
            t = answers.computeIfAbsent(transport, k -> Timer.builder("sluice.server.answer")
                    .description("Time from a decision request's arrival to its answer")
                    .tag("transport", k)
                    .register(registry));
        }
        t.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
    }

    void request(String transport, String result) {
        ConcurrentHashMap<String, Counter> byResult = requests.get(transport);
        if (byResult == null) {
            byResult = requests.computeIfAbsent(transport, k -> new ConcurrentHashMap<>());
        }
        Counter c = byResult.get(result);
        if (c == null) {
            c = byResult.computeIfAbsent(result, k -> Counter.builder("sluice.server.requests")
                    .description("Rate limit requests answered, by transport and result")
                    .tag("transport", transport)
                    .tag("result", k)
                    .register(registry));
        }
        c.increment();
    }

    /**
     * Shows what the bound {@code name} holds now, read when the metrics are scraped, and its {@code limit}: past it
     * the service refuses what the bound counts.
     */
    void bound(String name, IntSupplier used, int limit) {
        Gauge.builder("sluice.server.bound.used", used, IntSupplier::getAsInt)
                .description("What each of the service's bounds holds now (see sluice.server.bound.limit)")
                .tag("bound", name)
                .strongReference(true) // the supplier is held by nothing else
                .register(registry);
        Gauge.builder("sluice.server.bound.limit", () -> limit)
                .description("Each of the service's bounds: past it, what the bound counts is refused")
                .tag("bound", name)
                .strongReference(true)
                .register(registry);
    }

    /** Shows the limits of the configuration in force, if it changed since the last call. */
    synchronized void refreshLimits(PolicyLimiter limiter) {
        long version = limiter.version();
        if (version == limitsVersion) {
            return;
        }
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        var policies = limiter.policies();
        for (String domain : policies.domains()) {
            for (Rule rule : policies.rules(domain)) {
                List<Limit> limits = rule.limits();
                for (int i = 0; i < limits.size(); i++) {
                    Limit l = limits.get(i);
                    java.time.Duration w = l.window();
                    if (l.unlimited() || w == null) {
                        continue;
                    }
                    double seconds = w.toNanos() / 1e9;
                    rows.add(MultiGauge.Row.of(
                            Tags.of(
                                    "domain",
                                    domain,
                                    "rule",
                                    rule.path(),
                                    "limit",
                                    l.name().isEmpty() ? Integer.toString(i) : l.name(),
                                    "window_seconds",
                                    trim(seconds)),
                            l.requestsPerUnit()));
                }
            }
        }
        ruleLimits.register(rows, true);
        limitsVersion = version;
    }

    private static String trim(double seconds) {
        return seconds == Math.rint(seconds) ? Long.toString((long) seconds) : Double.toString(seconds);
    }
}
