package dev.sluice.policy;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** What the limits of one descriptor of a request answered. Immutable. */
public final class DescriptorVerdict {

    private final Descriptor descriptor;
    /** Null when no rule applied. */
    private final @Nullable Rule rule;

    private final List<LimitVerdict> limits;
    private final Outcome outcome;

    DescriptorVerdict(Descriptor descriptor, @Nullable Rule rule, List<LimitVerdict> limits) {
        this.descriptor = Objects.requireNonNull(descriptor);
        this.rule = rule;
        this.limits = List.copyOf(limits);
        Outcome o = Outcome.NO_LIMIT;
        for (LimitVerdict l : this.limits) {
            if (l.outcome().compareTo(o) < 0) { // declaration order: the most telling first
                o = l.outcome();
            }
        }
        this.outcome = o;
    }

    /** The descriptor, as the request gave it. */
    public Descriptor descriptor() {
        return descriptor;
    }

    /** The rule that applied; empty when none did ({@link Outcome#NO_LIMIT}). */
    public Optional<Rule> rule() {
        return Optional.ofNullable(rule);
    }

    @Nullable
    Rule ruleOrNull() {
        return rule;
    }

    /** One answer per limit of the rule, in the rule's order; empty when no rule applied. */
    public List<LimitVerdict> limits() {
        return limits;
    }

    /** The most telling outcome of its limits (see {@link Outcome}); {@link Outcome#NO_LIMIT} when there are none. */
    public Outcome outcome() {
        return outcome;
    }

    /**
     * The limit that decided: the first that refused, else the one with the fewest permits left (what a
     * {@code RateLimit} header reports); empty when no rule applied.
     */
    public Optional<LimitVerdict> limit() {
        LimitVerdict best = null;
        for (LimitVerdict l : limits) {
            if (l.refused()) {
                return Optional.of(l);
            }
            if (best == null || (l.remaining() >= 0 && l.remaining() < best.remaining())) {
                best = l;
            }
        }
        return Optional.ofNullable(best);
    }

    /** Permits left under the decisive limit; {@link Long#MAX_VALUE} when no limit applies. */
    public long remaining() {
        return limit().map(LimitVerdict::remaining).orElse(Long.MAX_VALUE);
    }

    @Override
    public String toString() {
        return "DescriptorVerdict[" + descriptor + " " + outcome + (rule == null ? "" : " " + rule.path()) + " "
                + limits + "]";
    }
}
