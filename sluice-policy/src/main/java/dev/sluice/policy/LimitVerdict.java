package dev.sluice.policy;

import java.time.Duration;
import java.util.Objects;

/**
 * What one limit of a rule answered to a request.
 *
 * @param limit           the limit
 * @param outcome         what became of it
 * @param remaining       permits left under it after the request; {@link Long#MAX_VALUE} when {@link Outcome#UNLIMITED}
 *                        or {@link Outcome#REPLACED}; -1 when the limit was not asked ({@link Outcome#NOT_COUNTED}
 *                        because an earlier refusal stopped the request)
 * @param resetAfterNanos time until the limit is back to full if nothing else arrives; 0 when not known
 * @param retryAfterNanos when refused, time until the same request could pass; 0 otherwise
 * @param failed          the store failed and its failure policy answered ({@link dev.sluice.Decision#failed()})
 */
public record LimitVerdict(
        Limit limit, Outcome outcome, long remaining, long resetAfterNanos, long retryAfterNanos, boolean failed) {

    /** Requires the limit and outcome. */
    public LimitVerdict {
        Objects.requireNonNull(limit, "limit must not be null");
        Objects.requireNonNull(outcome, "outcome must not be null");
    }

    /** {@link #resetAfterNanos()} as a duration. */
    public Duration resetAfter() {
        return Duration.ofNanos(resetAfterNanos);
    }

    /** {@link #retryAfterNanos()} as a duration. */
    public Duration retryAfter() {
        return Duration.ofNanos(retryAfterNanos);
    }

    /** Whether this limit refused (or would have refused) the request. */
    public boolean refused() {
        return outcome == Outcome.DENIED || outcome == Outcome.SHADOW_BANNED || outcome == Outcome.WOULD_DENY;
    }
}
