package dev.sluice;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The answer to a joint request ({@link RateLimiter#tryAcquireAll(List)}): allowed only if every limit allowed it.
 *
 * <p>{@link #decisions()} has one {@link Decision} per {@link Acquisition}, in the order of the request. When the
 * request was allowed each is what that limit answered as it took the permits. When it was refused nothing was taken
 * (see {@link RateLimiter#tryAcquireAll(List)} for {@code countRejected}), and each is what that limit answers on
 * its own at that instant, as a {@link RateLimiter#peek peek} would: a limit with room says allowed, with
 * {@code remaining} the permits it still has; the limits that refused say denied, with their {@code retryAfter}.
 *
 * <p>Immutable.
 */
public final class JointDecision {

    private final boolean allowed;
    private final List<Decision> decisions;

    private JointDecision(boolean allowed, List<Decision> decisions) {
        this.allowed = allowed;
        this.decisions = decisions;
    }

    /**
     * The joint answer of {@code decisions}: allowed if and only if every one is.
     *
     * @throws IllegalArgumentException if {@code decisions} is empty
     */
    public static JointDecision of(List<Decision> decisions) {
        List<Decision> copy = List.copyOf(Objects.requireNonNull(decisions, "decisions must not be null"));
        if (copy.isEmpty()) {
            throw new IllegalArgumentException("a joint decision has at least one decision, was none");
        }
        boolean allowed = true;
        for (Decision d : copy) {
            allowed &= d.allowed();
        }
        return new JointDecision(allowed, copy);
    }

    /** Whether the request may proceed: every limit allowed it. */
    public boolean allowed() {
        return allowed;
    }

    /** One decision per limit, in the order of the request. */
    public List<Decision> decisions() {
        return decisions;
    }

    /** The decision of the {@code i}-th limit of the request. */
    public Decision decision(int i) {
        return decisions.get(i);
    }

    /**
     * Time until the same request could pass if no other request arrives: the longest {@code retryAfter} of the
     * limits that refused it; {@link Duration#ZERO} when allowed.
     */
    public Duration retryAfter() {
        return Duration.ofNanos(retryAfterNanos());
    }

    /** {@link #retryAfter()} in nanoseconds. */
    public long retryAfterNanos() {
        long max = 0;
        for (Decision d : decisions) {
            max = Math.max(max, d.retryAfterNanos());
        }
        return allowed ? 0 : max;
    }

    /**
     * The fewest permits left under any of the limits, after this decision: what a single {@code RateLimit-Remaining}
     * header reports for the request.
     */
    public long remaining() {
        long min = Long.MAX_VALUE;
        for (Decision d : decisions) {
            min = Math.min(min, d.remaining());
        }
        return min;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof JointDecision && ((JointDecision) o).decisions.equals(decisions);
    }

    @Override
    public int hashCode() {
        return decisions.hashCode();
    }

    @Override
    public String toString() {
        return "JointDecision[allowed=" + allowed + ", " + decisions + "]";
    }
}
