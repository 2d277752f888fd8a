package dev.sluice.server;

import dev.sluice.policy.Limit;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.policy.Rule;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the dashboard polls, {@code GET /dashboard/data}: the rules in force with their limits, and the request
 * counters of the policy limiter, as JSON. The page turns the counters into rates from one poll to the next, so the
 * answer carries the service's clock ({@code time}, epoch milliseconds) for it to divide by.
 *
 * <pre>{@code
 * {"time": 1764000000000, "version": 1,
 *  "rules": [{"domain": "oauth-token", "rule": "client_id", "mode": "enforce", "detailed": true,
 *             "limits": [{"name": "0", "requests": 50, "windowSeconds": 1}]}],
 *  "series": [{"domain": "oauth-token", "rule": "client_id", "value": "abc",
 *              "counts": {"allowed": 120, "denied": 7}}]}
 * }</pre>
 *
 * <p>A series is one value of a {@code detailed_metric: true} rule ({@code sluice.policy.requests.detailed}, capped
 * by the limiter: values past the cap are counted as {@code other}), or a rule as a whole, without {@code value}, when
 * it has no per-value counters ({@code sluice.policy.requests}): so a configuration without {@code detailed_metric}
 * still shows its traffic, per rule. {@code counts} holds the counters by {@code outcome} tag; counts are of
 * requests, not hits. Limits are those of the configuration in force; a rule's {@code limits} leaves out
 * {@code unlimited} ones.
 */
final class DashboardData {
    static final String REQUESTS = "sluice.policy.requests";
    static final String REQUESTS_DETAILED = "sluice.policy.requests.detailed";

    private DashboardData() {}

    static String json(PolicyLimiter limiter, MeterRegistry registry, long nowMillis) {
        StringBuilder b = new StringBuilder(4096);
        b.append("{\"time\":").append(nowMillis);
        b.append(",\"version\":").append(limiter.version());
        b.append(",\"rules\":[");
        Policies policies = limiter.policies();
        boolean first = true;
        for (String domain : policies.domains()) {
            for (Rule rule : policies.rules(domain)) {
                b.append(first ? "" : ",");
                first = false;
                rule(b, rule);
            }
        }
        b.append("],\"series\":[");
        // (domain, rule, value) -> outcome -> count; sorted, so the answer does not reorder from one poll to the next
        Map<List<String>, Map<String, Long>> series = new TreeMap<>(DashboardData::compare);
        Set<List<String>> detailedRules = new HashSet<>();
        for (Counter c : registry.find(REQUESTS_DETAILED).counters()) {
            String domain = c.getId().getTag("domain");
            String rule = c.getId().getTag("rule");
            String value = c.getId().getTag("value");
            String outcome = c.getId().getTag("outcome");
            if (domain != null && rule != null && value != null && outcome != null) {
                detailedRules.add(List.of(domain, rule));
                series.computeIfAbsent(List.of(domain, rule, value), k -> new TreeMap<>())
                        .merge(outcome, (long) c.count(), Long::sum);
            }
        }
        for (Counter c : registry.find(REQUESTS).counters()) {
            String domain = c.getId().getTag("domain");
            String rule = c.getId().getTag("rule");
            String outcome = c.getId().getTag("outcome");
            if (domain != null && rule != null && outcome != null && !detailedRules.contains(List.of(domain, rule))) {
                series.computeIfAbsent(List.of(domain, rule), k -> new TreeMap<>())
                        .merge(outcome, (long) c.count(), Long::sum);
            }
        }
        first = true;
        for (Map.Entry<List<String>, Map<String, Long>> e : series.entrySet()) {
            List<String> id = e.getKey();
            b.append(first ? "" : ",");
            first = false;
            b.append("{\"domain\":").append(JsonString.quote(id.get(0)));
            b.append(",\"rule\":").append(JsonString.quote(id.get(1)));
            if (id.size() > 2) {
                b.append(",\"value\":").append(JsonString.quote(id.get(2)));
            }
            b.append(",\"counts\":{");
            boolean firstCount = true;
            for (Map.Entry<String, Long> count : e.getValue().entrySet()) {
                b.append(firstCount ? "" : ",")
                        .append(JsonString.quote(count.getKey()))
                        .append(':');
                b.append(count.getValue());
                firstCount = false;
            }
            b.append("}}");
        }
        return b.append("]}").toString();
    }

    private static void rule(StringBuilder b, Rule rule) {
        b.append("{\"domain\":").append(JsonString.quote(rule.domain()));
        b.append(",\"rule\":").append(JsonString.quote(rule.path()));
        b.append(",\"mode\":").append(JsonString.quote(rule.mode().configName()));
        b.append(",\"detailed\":").append(rule.detailedMetric());
        b.append(",\"unlimited\":").append(rule.unlimited());
        b.append(",\"limits\":[");
        List<Limit> limits = rule.limits();
        boolean first = true;
        for (int i = 0; i < limits.size(); i++) {
            Limit l = limits.get(i);
            Duration w = l.window();
            if (l.unlimited() || w == null) {
                continue;
            }
            b.append(first ? "" : ",");
            first = false;
            // the same name as the limit tag of sluice_server_rule_limit
            b.append("{\"name\":").append(JsonString.quote(l.name().isEmpty() ? Integer.toString(i) : l.name()));
            b.append(",\"requests\":").append(l.requestsPerUnit());
            b.append(",\"windowSeconds\":").append(w.toNanos() / 1e9);
            b.append('}');
        }
        b.append("]}");
    }

    private static int compare(List<String> a, List<String> b) {
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            int c = a.get(i).compareTo(b.get(i));
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(a.size(), b.size());
    }
}
