package dev.sluice.server;

import dev.sluice.policy.DescriptorVerdict;
import dev.sluice.policy.LimitVerdict;
import dev.sluice.policy.Outcome;
import dev.sluice.policy.Rule;
import dev.sluice.policy.Verdict;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * envoyproxy/ratelimit's stats under its own names ({@code serve --envoy-stats}), beside Sluice's, so that a dashboard
 * or a statsd_exporter mapping built for it reads Sluice unchanged: per rule,
 * {@code ratelimit.service.rate_limit.<domain>.<key_value…>.{total_hits,over_limit,near_limit,within_limit,shadow_mode}},
 * and the service's {@code ratelimit_server.ShouldRateLimit.total_requests}, {@code .response_time} and
 * {@code ratelimit.service.call.should_rate_limit.redis_error}. Names only, no tags, as its StatsD lines have them.
 *
 * <p>Each counts hits (the descriptor's cost), as envoyproxy/ratelimit does: {@code total_hits} every hit of a
 * descriptor with a limit; {@code over_limit} the hits of a descriptor whose limit refused (or would have, in dry run
 * or quota mode); {@code shadow_mode} those of a dry-run limit that would have refused; {@code within_limit} the others;
 * {@code near_limit} the hits allowed past {@code near-limit-ratio} of the limit. The rule's path is its configured
 * keys and values, so the names are as many as the configuration's rules; at most {@value #MAX_COUNTERS} are made.
 */
final class EnvoyStats {
    static final String RULE_PREFIX = "ratelimit.service.rate_limit.";
    static final int MAX_COUNTERS = 10_000;

    private final MeterRegistry registry;
    private final double nearLimitRatio;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Counter totalRequests;
    private final Counter storeErrors;
    private final Timer responseTime;

    /** @param nearLimitRatio the share of a limit past which allowed hits count as {@code near_limit}, in (0, 1] */
    EnvoyStats(MeterRegistry registry, double nearLimitRatio) {
        this.registry = registry;
        this.nearLimitRatio = nearLimitRatio;
        this.totalRequests = registry.counter("ratelimit_server.ShouldRateLimit.total_requests");
        this.storeErrors = registry.counter("ratelimit.service.call.should_rate_limit.redis_error");
        this.responseTime = registry.timer("ratelimit_server.ShouldRateLimit.response_time");
    }

    /** Counts one answered request of {@code domain}, whose descriptor {@code i} cost {@code hits[i]}. */
    void record(String domain, Verdict v, long[] hits, long startNanos) {
        totalRequests.increment();
        if (v.storeFailed()) {
            storeErrors.increment();
        }
        for (int i = 0; i < hits.length; i++) {
            DescriptorVerdict dv = v.descriptor(i);
            Rule rule = dv.rule().orElse(null);
            LimitVerdict l = dv.limit().orElse(null);
            Outcome o = dv.outcome();
            if (rule == null || l == null || o == Outcome.UNLIMITED || o == Outcome.REPLACED || o == Outcome.NO_LIMIT) {
                continue;
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
        responseTime.record(Duration.ofNanos(System.nanoTime() - startNanos));
    }

    private void add(String name, long amount) {
        Counter c = counters.get(name);
        if (c == null) {
            if (counters.size() >= MAX_COUNTERS) {
                return;
            }
            c = counters.computeIfAbsent(name, registry::counter);
        }
        c.increment((double) amount);
    }
}
