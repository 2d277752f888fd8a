package dev.sluice.server;

import dev.sluice.policy.DescriptorVerdict;
import dev.sluice.policy.LimitVerdict;
import dev.sluice.policy.Mode;
import dev.sluice.policy.Outcome;
import dev.sluice.policy.Rule;
import dev.sluice.policy.Verdict;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import org.jspecify.annotations.Nullable;

/**
 * envoyproxy/ratelimit's stats under its own names ({@code serve --envoy-stats}), beside Sluice's, so that a dashboard
 * or a statsd_exporter mapping built for it reads Sluice unchanged: per rule,
 * {@code ratelimit.service.rate_limit.<domain>.<key_value…>.{total_hits,over_limit,near_limit,within_limit,shadow_mode}},
 * and the service's {@code ratelimit_server.ShouldRateLimit.total_requests}, {@code .response_time},
 * {@code ratelimit.service.call.should_rate_limit.redis_error} and {@code ratelimit.service.global_shadow_mode} (the
 * answers that would have been OVER_LIMIT but for the global dry run, {@code serve --shadow-mode}: an enforced rule, or
 * every quota-mode rule of the request, that would have refused). Names only, no tags, as its StatsD lines have them.
 *
 * <p>Each counts hits (the descriptor's cost), as envoyproxy/ratelimit does: {@code total_hits} every hit of a
 * descriptor with a limit; {@code over_limit} the hits of a descriptor whose limit refused (or would have, in dry run
 * or quota mode); {@code shadow_mode} those of a dry-run limit that would have refused; {@code within_limit} the others;
 * {@code near_limit} the hits allowed past {@code near-limit-ratio} of the limit. The rule's path is its configured
 * keys and values, so the names are as many as the configuration's rules; at most {@value #MAX_COUNTERS} are made.
 * With {@link #configLoads}, also {@code ratelimit.service.config_load_success} and {@code .config_load_error}.
 *
 * <p>With a {@link MappedStats}, each is also counted there under the Prometheus name its mapping gives it
 * ({@code serve --prometheus-addr}), the response time in milliseconds as envoyproxy/ratelimit's timer sends it.
 */
final class EnvoyStats {
    static final String RULE_PREFIX = "ratelimit.service.rate_limit.";
    static final String TOTAL_REQUESTS = "ratelimit_server.ShouldRateLimit.total_requests";
    static final String STORE_ERRORS = "ratelimit.service.call.should_rate_limit.redis_error";
    static final String RESPONSE_TIME = "ratelimit_server.ShouldRateLimit.response_time";
    static final String CONFIG_LOAD_SUCCESS = "ratelimit.service.config_load_success";
    static final String CONFIG_LOAD_ERROR = "ratelimit.service.config_load_error";
    static final String GLOBAL_SHADOW_MODE = "ratelimit.service.global_shadow_mode";
    static final int MAX_COUNTERS = 10_000;

    private final MeterRegistry registry;
    private final double nearLimitRatio;
    private final @Nullable MappedStats mapped;
    private final Map<String, Stat> counters = new ConcurrentHashMap<>();
    private final Stat totalRequests;
    private final Stat storeErrors;
    private final Stat globalShadowMode;
    private final Timer responseTime;
    private final MappedStats.@Nullable Timer mappedResponseTime;

    /** One counter under its StatsD name, and where the same counts go in the Prometheus view, if there is one. */
    private record Stat(Counter counter, MappedStats.@Nullable Counter mapped) {
        void add(double amount) {
            counter.increment(amount);
            if (mapped != null) {
                mapped.add(amount);
            }
        }
    }

    /** @param nearLimitRatio the share of a limit past which allowed hits count as {@code near_limit}, in (0, 1] */
    EnvoyStats(MeterRegistry registry, double nearLimitRatio) {
        this(registry, nearLimitRatio, null);
    }

    /**
     * @param nearLimitRatio the share of a limit past which allowed hits count as {@code near_limit}, in (0, 1]
     * @param mapped         the Prometheus view to count in as well, or null
     */
    EnvoyStats(MeterRegistry registry, double nearLimitRatio, @Nullable MappedStats mapped) {
        this.registry = registry;
        this.nearLimitRatio = nearLimitRatio;
        this.mapped = mapped;
        this.totalRequests = stat(TOTAL_REQUESTS);
        this.storeErrors = stat(STORE_ERRORS);
        this.globalShadowMode = stat(GLOBAL_SHADOW_MODE);
        this.responseTime = registry.timer(RESPONSE_TIME);
        this.mappedResponseTime = mapped == null ? null : mapped.timer(RESPONSE_TIME);
    }

    private Stat stat(String name) {
        return new Stat(registry.counter(name), mapped == null ? null : mapped.counter(name));
    }

    /**
     * Counts configurations put in force and refused as {@code config_load_success} and {@code config_load_error}:
     * totals kept elsewhere (the policy limiter's), read as they are exported.
     */
    void configLoads(DoubleSupplier success, DoubleSupplier error) {
        FunctionCounter.builder(CONFIG_LOAD_SUCCESS, success, DoubleSupplier::getAsDouble)
                .register(registry);
        FunctionCounter.builder(CONFIG_LOAD_ERROR, error, DoubleSupplier::getAsDouble)
                .register(registry);
        if (mapped != null) {
            mapped.counter(CONFIG_LOAD_SUCCESS, success);
            mapped.counter(CONFIG_LOAD_ERROR, error);
        }
    }

    /** Counts one answered request of {@code domain}, whose descriptor {@code i} cost {@code hits[i]}. */
    void record(String domain, Verdict v, long[] hits, long startNanos) {
        totalRequests.add(1);
        if (v.storeFailed()) {
            storeErrors.add(1);
        }
        boolean enforcedWouldDeny = false;
        int quota = 0;
        int quotaWouldDeny = 0;
        for (int i = 0; i < hits.length; i++) {
            DescriptorVerdict dv = v.descriptor(i);
            Rule rule = dv.rule().orElse(null);
            LimitVerdict l = dv.limit().orElse(null);
            Outcome o = dv.outcome();
            if (rule == null || l == null || o == Outcome.UNLIMITED || o == Outcome.REPLACED || o == Outcome.NO_LIMIT) {
                continue;
            }
            // a rule of another mode than dry_run that would deny: the global dry run (--shadow-mode) let it through
            if (rule.mode() == Mode.QUOTA) {
                quota++;
                quotaWouldDeny += o == Outcome.WOULD_DENY ? 1 : 0;
            } else if (rule.mode() == Mode.ENFORCE && o == Outcome.WOULD_DENY) {
                enforcedWouldDeny = true;
            }
            String key = RULE_PREFIX + domain + "." + rule.path() + ".";
            long cost = hits[i];
            add(key + "total_hits", cost);
            if (l.refused()) {
                add(key + "over_limit", cost);
                if (o == Outcome.WOULD_DENY) {
                    add(key + "shadow_mode", cost);
                }
            } else {
                add(key + "within_limit", cost);
                long limit = l.limit().requestsPerUnit();
                long threshold = (long) Math.floor(limit * nearLimitRatio);
                long used = limit - Math.max(0, l.remaining());
                if (!l.failed() && used > threshold) {
                    add(key + "near_limit", Math.min(cost, used - threshold));
                }
            }
        }
        if (enforcedWouldDeny || (quota > 0 && quotaWouldDeny == quota)) {
            globalShadowMode.add(1); // envoyproxy/ratelimit's: an OVER_LIMIT answered OK by the global shadow mode
        }
        long nanos = System.nanoTime() - startNanos;
        responseTime.record(nanos, TimeUnit.NANOSECONDS);
        if (mappedResponseTime != null) {
            mappedResponseTime.record(nanos / 1e6);
        }
    }

    private void add(String name, long amount) {
        Stat c = counters.get(name);
        if (c == null) {
            if (counters.size() >= MAX_COUNTERS) {
                return;
            }
            c = counters.computeIfAbsent(name, this::stat);
        }
        c.add((double) amount);
    }
}
