package dev.sluice.policy;

import java.time.Duration;
import java.util.Objects;

/**
 * What one limit of a rule answered to a request.
 *
 * @param limit           the limit
 * @param outcome         what became of it
 * @param remaining       permits left under it after the request; {@link Long#MAX_VALUE} when {@link Outcome#UNLIMITED}
 *                        or {@link Outcome#REPLACED}; -1 when not known: the limit was not asked
 *                        ({@link Outcome#NOT_COUNTED} because an earlier refusal stopped the request), or it
 *                        {@link #failed()}
 * @param resetAfterNanos time until the limit is back to full if nothing else arrives; 0 when not known (it
 *                        {@link #failed()})
 * @param retryAfterNanos when refused, time until the same request could pass; 0 otherwise, and when not known (it
 *                        {@link #failed()})
 * @param failed          the store failed or did not answer in time, so the domain's {@code on_store_failure}
 *                        answered this limit ({@link Verdict#storeFailure()}): {@link Outcome#ALLOWED} for
 *                        {@code allow}, its mode's refusal for {@code deny}, with no counts, since the store gave
 *                        none (remaining -1, reset and retry 0)
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

    /**
     * What every front door reports as left under this limit (Envoy's {@code limit_remaining}, the {@code r} of the
     * {@code RateLimit} field, {@code X-RateLimit-Remaining}): 0 when it {@link #refused()} the request, even if a
     * smaller request would have fit (a refusal never invites a retry at once); -1 when not known (the limit was not
     * asked, or it {@link #failed()}); else {@link #remaining()}.
     */
    public long reportedRemaining() {
        if (failed || remaining < 0) {
            return -1;
        }
        return refused() ? 0 : remaining;
    }

    /** Whether this limit refused (or would have refused) the request. */
    public boolean refused() {
        return outcome == Outcome.DENIED
                || outcome == Outcome.SHADOW_BANNED
                || outcome == Outcome.OVER_QUOTA
                || outcome == Outcome.WOULD_DENY;
    }
}
