package dev.sluice.policy;

import dev.sluice.Decision;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The answer to {@link PolicyLimiter#check}: whether the request may proceed, and what each descriptor's limits
 * answered. Immutable.
 */
public final class Verdict {

    private final boolean allowed;
    /** Null unless a shadow-ban limit refused the request. */
    private final @Nullable Rule shadowBan;

    /**
     * One verdict per descriptor; for a verdict of one limit, null until first read and then built from the
     * {@code one...} fields. Built without synchronization: the list and its verdicts are immutable, so a thread
     * that races another builds an equal list, and a thread reading the field sees null or a whole list.
     */
    private @Nullable List<DescriptorVerdict> descriptors;

    /** The fields of a verdict of one descriptor with one limit asked; null for the others. */
    private final @Nullable Descriptor oneDescriptor;

    private final @Nullable Rule oneRule;
    private final @Nullable Limit oneLimit;
    private final @Nullable Outcome oneOutcome;
    private final @Nullable Decision oneDecision;

    Verdict(boolean allowed, @Nullable Rule shadowBan, List<DescriptorVerdict> descriptors) {
        this.allowed = allowed;
        this.shadowBan = shadowBan;
        this.descriptors = List.copyOf(descriptors);
        this.oneDescriptor = null;
        this.oneRule = null;
        this.oneLimit = null;
        this.oneOutcome = null;
        this.oneDecision = null;
    }

    /**
     * The verdict of a request of one descriptor, whose rule has one limit, decided by {@code decision}: what most
     * checks are. Its {@link DescriptorVerdict} and {@link LimitVerdict} are built when first read, so a caller
     * that reads only {@link #allowed()} does not pay for them.
     */
    Verdict(
            boolean allowed,
            @Nullable Rule shadowBan,
            Descriptor descriptor,
            Rule rule,
            Limit limit,
            Outcome outcome,
            Decision decision) {
        this.allowed = allowed;
        this.shadowBan = shadowBan;
        this.oneDescriptor = descriptor;
        this.oneRule = rule;
        this.oneLimit = limit;
        this.oneOutcome = outcome;
        this.oneDecision = decision;
    }

    /**
     * Whether the request may proceed: no enforced limit refused it. Limits in {@link Mode#DRY_RUN} and
     * {@link Mode#SHADOW_BAN} never make this false.
     */
    public boolean allowed() {
        return allowed;
    }

    /**
     * Whether a {@link Mode#SHADOW_BAN} limit refused the request: answer the caller as if it passed, and drop the
     * work. Only when {@link #allowed()}.
     */
    public boolean shadowBanned() {
        return shadowBan != null;
    }

    /** The rule whose limit shadow-banned the request, for the {@code x-sluice-shadow-ban} header. */
    public Optional<Rule> shadowBanRule() {
        return Optional.ofNullable(shadowBan);
    }

    /**
     * Whether the store failed or timed out on any limit of the request, so that its failure policy answered
     * ({@link LimitVerdict#failed()}); see {@link Policies#onStoreFailure(String)}.
     */
    public boolean storeFailed() {
        if (oneDecision != null) {
            return oneDecision.failed();
        }
        for (DescriptorVerdict d : descriptors()) {
            for (LimitVerdict l : d.limits()) {
                if (l.failed()) {
                    return true;
                }
            }
        }
        return false;
    }

    /** One verdict per descriptor, in the order of the request. */
    public List<DescriptorVerdict> descriptors() {
        List<DescriptorVerdict> list = descriptors;
        if (list == null) {
            Decision d = Objects.requireNonNull(oneDecision, "a verdict has its list or the fields of one limit");
            LimitVerdict limit = new LimitVerdict(
                    Objects.requireNonNull(oneLimit),
                    Objects.requireNonNull(oneOutcome),
                    d.remaining(),
                    d.resetAfterNanos(),
                    d.retryAfterNanos(),
                    d.failed());
            list = List.of(new DescriptorVerdict(
                    Objects.requireNonNull(oneDescriptor), Objects.requireNonNull(oneRule), List.of(limit)));
            descriptors = list;
        }
        return list;
    }

    /** The verdict of the {@code i}-th descriptor. */
    public DescriptorVerdict descriptor(int i) {
        return descriptors().get(i);
    }

    /** When refused, the longest wait any refusing limit asks for; zero when allowed. */
    public Duration retryAfter() {
        if (oneDecision != null) {
            return Duration.ofNanos(oneOutcome == Outcome.DENIED ? oneDecision.retryAfterNanos() : 0);
        }
        long max = 0;
        if (!allowed) {
            for (DescriptorVerdict d : descriptors()) {
                for (LimitVerdict l : d.limits()) {
                    if (l.outcome() == Outcome.DENIED) {
                        max = Math.max(max, l.retryAfterNanos());
                    }
                }
            }
        }
        return Duration.ofNanos(max);
    }

    /** The fewest permits left under any descriptor; {@link Long#MAX_VALUE} when no limit applied. */
    public long remaining() {
        if (oneDecision != null) {
            long r = oneDecision.remaining();
            return r >= 0 ? r : Long.MAX_VALUE;
        }
        long min = Long.MAX_VALUE;
        for (DescriptorVerdict d : descriptors()) {
            long r = d.remaining();
            if (r >= 0) {
                min = Math.min(min, r);
            }
        }
        return min;
    }

    @Override
    public String toString() {
        return "Verdict[" + (allowed ? "allowed" : "denied")
                + (shadowBan == null ? "" : ", shadow-banned by " + shadowBan.path()) + ", " + descriptors() + "]";
    }
}
