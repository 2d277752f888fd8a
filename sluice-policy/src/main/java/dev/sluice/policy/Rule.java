package dev.sluice.policy;

import java.util.List;
import java.util.Objects;

/**
 * A rule of a domain that a descriptor matched: a descriptor entry of the configuration (at any depth) with its
 * limits. Immutable.
 */
public final class Rule {

    private final String domain;
    private final String path;
    private final List<Limit> limits;
    private final Mode mode;
    private final boolean detailedMetric;
    private final String file;
    private final int line;
    private final int column;

    Rule(
            String domain,
            String path,
            List<Limit> limits,
            Mode mode,
            boolean detailedMetric,
            String file,
            int line,
            int column) {
        this.domain = Objects.requireNonNull(domain);
        this.path = Objects.requireNonNull(path);
        this.limits = List.copyOf(limits);
        this.mode = Objects.requireNonNull(mode);
        this.detailedMetric = detailedMetric;
        this.file = Objects.requireNonNull(file);
        this.line = line;
        this.column = column;
    }

    /** The domain of the rule. */
    public String domain() {
        return domain;
    }

    /**
     * The rule's place in its domain, as envoyproxy/ratelimit names it in its statistics: each level {@code key} or
     * {@code key_value}, joined by dots, e.g. {@code client_id.username} or {@code client_id_mobile-app}. Unique in
     * its domain; the {@code rule} tag of the metrics.
     */
    public String path() {
        return path;
    }

    /** The limits; all must pass. One for {@code rate_limit}, several for {@code rate_limits}. */
    public List<Limit> limits() {
        return limits;
    }

    /** Whether the rule is {@code unlimited: true}: answered at once, the store never asked. */
    public boolean unlimited() {
        return limits.size() == 1 && limits.get(0).unlimited();
    }

    /** What a refusal of this rule does. */
    public Mode mode() {
        return mode;
    }

    /** Whether metrics break this rule down per descriptor value ({@code detailed_metric: true}). */
    public boolean detailedMetric() {
        return detailedMetric;
    }

    /** Where the rule is defined: {@code file:line:column}. */
    public String source() {
        return file + ":" + line + ":" + column;
    }

    /**
     * An error at this rule's place in its file.
     *
     * @param message what is wrong and what is expected
     */
    PolicyError error(String message) {
        return new PolicyError(file, line, column, "", message);
    }

    @Override
    public String toString() {
        return "Rule[" + domain + "." + path + " " + limits + (mode == Mode.ENFORCE ? "" : " " + mode.configName())
                + "]";
    }
}
