package dev.sluice.spring.boot;

import dev.sluice.Algorithm;
import dev.sluice.policy.Limit;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.policy.Rule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code sluice} Actuator endpoint ({@code GET /actuator/sluice} once exposed): the policies in force, domain by
 * domain and rule by rule with their limits and modes, and what the last load or reload of the policies did. Read
 * only; a change of the policies goes through their file.
 *
 * <pre>{@code
 * management.endpoints.web.exposure.include: health,sluice
 * }</pre>
 */
@Endpoint(id = "sluice")
public class SluiceEndpoint {

    private final PolicyLimiter limiter;
    private final SluiceReloads reloads;

    /** The endpoint over {@code limiter}, whose policies {@code reloads} keeps current. */
    public SluiceEndpoint(PolicyLimiter limiter, SluiceReloads reloads) {
        this.limiter = Objects.requireNonNull(limiter, "limiter must not be null");
        this.reloads = Objects.requireNonNull(reloads, "reloads must not be null");
    }

    /** The report. */
    @ReadOperation
    public Report report() {
        var policies = limiter.policies();
        Map<String, List<RuleReport>> domains = new TreeMap<>();
        for (String domain : policies.domains()) {
            List<RuleReport> rules = new ArrayList<>();
            for (Rule r : policies.rules(domain)) {
                rules.add(RuleReport.of(r));
            }
            domains.put(domain, rules);
        }
        return new Report(
                reloads.source().description(),
                reloads.watching(),
                limiter.version(),
                limiter.dryRun(),
                reloads.lastReload(),
                domains);
    }

    /**
     * What the endpoint answers.
     *
     * @param source     the policies' file or directory, {@code sluice.policies.inline} or {@code none}
     * @param watched    whether the source is watched for changes
     * @param version    the version in force: 1 at start, +1 per reload
     * @param dryRun     whether the global dry run is on (every limit counts, none refuses)
     * @param lastReload the last load or reload
     * @param domains    domain name to its rules with limits, in file order
     */
    public record Report(
            String source,
            boolean watched,
            long version,
            boolean dryRun,
            SluiceReloads.Reload lastReload,
            Map<String, List<RuleReport>> domains) {}

    /**
     * A rule with limits.
     *
     * @param path   its path in the domain, as in the metrics' {@code rule} tag: {@code client_id.username}
     * @param mode   {@code enforce}, {@code dry_run} or {@code shadow_ban} (as the rule says; see {@code dryRun})
     * @param limits its limits, all of which must pass
     * @param source where it is defined: {@code file:line:column}
     */
    public record RuleReport(String path, String mode, List<LimitReport> limits, String source) {

        static RuleReport of(Rule r) {
            List<LimitReport> limits = new ArrayList<>();
            for (Limit l : r.limits()) {
                limits.add(LimitReport.of(l));
            }
            return new RuleReport(r.path(), r.mode().configName(), limits, r.source());
        }
    }

    /**
     * A limit.
     *
     * @param name            its name, or empty
     * @param unlimited       never limited
     * @param requestsPerUnit requests allowed per window (0 when unlimited)
     * @param unit            the unit it was given as ({@code second} … {@code year}), or null
     * @param window          the window, as an ISO-8601 duration ({@code PT1M}), or null when unlimited
     * @param algorithm       {@code fixed_window}, {@code sliding_tail} …, or null when unlimited
     */
    public record LimitReport(
            String name,
            boolean unlimited,
            long requestsPerUnit,
            @Nullable String unit,
            @Nullable String window,
            @Nullable String algorithm) {

        static LimitReport of(Limit l) {
            Duration w = l.window();
            Algorithm a = l.algorithm();
            return new LimitReport(
                    l.name(),
                    l.unlimited(),
                    l.requestsPerUnit(),
                    l.unit(),
                    w == null ? null : w.toString(),
                    a == null ? null : a.name().toLowerCase(Locale.ROOT));
        }
    }
}
