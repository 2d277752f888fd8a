package dev.sluice;

import java.time.Duration;

/**
 * The answer to one rate-limit request: an immutable value.
 *
 * <p>Durations are kept as nanoseconds so that a decision is a single small object; {@link #resetAfter()}
 * and {@link #retryAfter()} wrap them in a {@link Duration} on demand.
 */
public final class Decision {

    private final boolean allowed;
    private final long limit;
    private final long remaining;
    private final long resetAfterNanos;
    private final long retryAfterNanos;

    private Decision(boolean allowed, long limit, long remaining, long resetAfterNanos, long retryAfterNanos) {
        if (limit <= 0) {
            throw new IllegalArgumentException("limit must be > 0, was " + limit);
        }
        if (remaining < 0 || remaining > limit) {
            throw new IllegalArgumentException("remaining must be in [0, " + limit + "], was " + remaining);
        }
        if (resetAfterNanos < 0) {
            throw new IllegalArgumentException("resetAfterNanos must be >= 0, was " + resetAfterNanos);
        }
        if (allowed ? retryAfterNanos != 0 : retryAfterNanos <= 0) {
            throw new IllegalArgumentException("retryAfterNanos must be " + (allowed ? "0 when allowed" : "> 0 when denied")
                    + ", was " + retryAfterNanos);
        }
        this.allowed = allowed;
        this.limit = limit;
        this.remaining = remaining;
        this.resetAfterNanos = resetAfterNanos;
        this.retryAfterNanos = retryAfterNanos;
    }

    /** An admitted request. */
    public static Decision allowed(long limit, long remaining, long resetAfterNanos) {
        return new Decision(true, limit, remaining, resetAfterNanos, 0);
    }

    /** A rejected request; {@code retryAfterNanos} is positive. */
    public static Decision denied(long limit, long remaining, long resetAfterNanos, long retryAfterNanos) {
        return new Decision(false, limit, remaining, resetAfterNanos, retryAfterNanos);
    }

    /** Whether the request may proceed. */
    public boolean allowed() {
        return allowed;
    }

    /** The limit of the window or bucket that decided ({@code L}). */
    public long limit() {
        return limit;
    }

    /** Whole permits left after this decision, in {@code [0, limit]}. A {@code peek} consumes nothing. */
    public long remaining() {
        return remaining;
    }

    /** Time until the key is back to its full limit if no further request arrives. */
    public Duration resetAfter() {
        return Duration.ofNanos(resetAfterNanos);
    }

    /** {@link #resetAfter()} in nanoseconds. */
    public long resetAfterNanos() {
        return resetAfterNanos;
    }

    /**
     * Time until a request of the same cost could pass if no other request arrives;
     * {@link Duration#ZERO} when allowed, positive when denied.
     */
    public Duration retryAfter() {
        return retryAfterNanos == 0 ? Duration.ZERO : Duration.ofNanos(retryAfterNanos);
    }

    /** {@link #retryAfter()} in nanoseconds. */
    public long retryAfterNanos() {
        return retryAfterNanos;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof Decision)) {
            return false;
        }
        Decision d = (Decision) o;
        return allowed == d.allowed && limit == d.limit && remaining == d.remaining
                && resetAfterNanos == d.resetAfterNanos && retryAfterNanos == d.retryAfterNanos;
    }

    @Override
    public int hashCode() {
        int h = Boolean.hashCode(allowed);
        h = 31 * h + Long.hashCode(limit);
        h = 31 * h + Long.hashCode(remaining);
        h = 31 * h + Long.hashCode(resetAfterNanos);
        return 31 * h + Long.hashCode(retryAfterNanos);
    }

    @Override
    public String toString() {
        return "Decision[allowed=" + allowed + ", limit=" + limit + ", remaining=" + remaining
                + ", resetAfter=" + resetAfter() + ", retryAfter=" + retryAfter() + "]";
    }
}
