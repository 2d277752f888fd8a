package dev.sluice;

import java.time.Duration;

/**
 * The answer to one rate-limit request: an immutable value. Two decisions are equal when all five properties
 * are, and they were given the same way (by the limit, the store's {@link FailurePolicy}, or an over-limit cache); {@link #allowed(long, long, long)} and {@link #denied(long, long, long, long)} are the only way to make one.
 *
 * <p>Durations are kept as nanoseconds; {@link #resetAfter()} and {@link #retryAfter()} wrap them in a
 * {@link Duration} on demand.
 */
public abstract sealed class Decision {

    /*
     * Why three private shapes behind one type: a decision is allocated on every request, so its size is the
     * allocation rate of a busy limiter. Five fields in one class take 48 bytes (a 12-byte header, four longs
     * and a flag, padded to 8). Almost every limit fits an int, and then so does the remaining count (it is at
     * most the limit), and an allowed request's retryAfter is zero by definition:
     *
     *   Allowed  int limit, int remaining, long resetAfter                    12 + 16 = 28 -> 32 bytes
     *   Denied   int limit, int remaining, long resetAfter, long retryAfter   12 + 24 = 36 -> 40 bytes
     *   Wide     long limit, remaining, resetAfter, retryAfter, boolean failed, cached, timedOut  12 + 35 -> 48 bytes
     *            (a limit over 2^31 - 1, an answer of the failure policy, or of an over-limit cache)
     *
     * Example: allowed(100, 99, 600_000_000) is an Allowed of 32 bytes; denied(100, 0, 5_000, 5_000) a Denied
     * of 40; allowed(1L << 40, 7, 1) and fromFailurePolicy(allowed(100, 99, 0)) are Wides. The factories pick the shape, so equal values always have the
     * same shape, and callers only ever see Decision.
     */

    Decision() {}

    /** An admitted request. */
    public static Decision allowed(long limit, long remaining, long resetAfterNanos) {
        check(true, limit, remaining, resetAfterNanos, 0);
        return limit <= Integer.MAX_VALUE
                ? new Allowed((int) limit, (int) remaining, resetAfterNanos)
                : new Wide(limit, remaining, resetAfterNanos, 0, false, false, false);
    }

    /** A rejected request; {@code retryAfterNanos} is positive. */
    public static Decision denied(long limit, long remaining, long resetAfterNanos, long retryAfterNanos) {
        check(false, limit, remaining, resetAfterNanos, retryAfterNanos);
        return limit <= Integer.MAX_VALUE
                ? new Denied((int) limit, (int) remaining, resetAfterNanos, retryAfterNanos)
                : new Wide(limit, remaining, resetAfterNanos, retryAfterNanos, false, false, false);
    }

    private static void check(boolean allowed, long limit, long remaining, long resetAfterNanos, long retryAfterNanos) {
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
            throw new IllegalArgumentException("retryAfterNanos must be "
                    + (allowed ? "0 when allowed" : "> 0 when denied") + ", was " + retryAfterNanos);
        }
    }

    /**
     * The same answer marked as given by a store's {@link FailurePolicy}: the store failed or timed out, so the
     * decision is the policy's ({@code FAIL_OPEN} allows, {@code FAIL_CLOSED} denies), not the limit's.
     */
    public static Decision fromFailurePolicy(Decision d) {
        return fromFailurePolicy(d, false);
    }

    /**
     * {@link #fromFailurePolicy(Decision)}, saying whether the store failed by not answering in time
     * ({@link #timedOut()}). A decision already given by the failure policy is returned as it is.
     */
    public static Decision fromFailurePolicy(Decision d, boolean timedOut) {
        if (d.failed()) {
            return d;
        }
        return new Wide(d.limit(), d.remaining(), d.resetAfterNanos(), d.retryAfterNanos(), true, false, timedOut);
    }

    /**
     * The same refusal marked as answered by a shared store's over-limit cache
     * ({@link dev.sluice.spi.SharedStoreBuilder#overLimitCache(int)}): the store refused a request of this cost or less
     * on this key, and no request of this cost can pass before the refusal's retry instant, so the store was not asked.
     *
     * @throws IllegalArgumentException if {@code refusal} is allowed, or is an answer of the failure policy
     */
    public static Decision fromOverLimitCache(Decision refusal) {
        if (refusal.allowed() || refusal.failed()) {
            throw new IllegalArgumentException("only a refusal of the store is cached, was " + refusal);
        }
        return new Wide(
                refusal.limit(),
                refusal.remaining(),
                refusal.resetAfterNanos(),
                refusal.retryAfterNanos(),
                false,
                true,
                false);
    }

    /** Whether the request may proceed. */
    public abstract boolean allowed();

    /**
     * Whether the store behind the limiter failed and this answer is its {@link FailurePolicy}'s rather than the
     * limit's: a fail-open admission that counted nothing, or a fail-closed refusal.
     */
    public boolean failed() {
        return false;
    }

    /**
     * Whether this is the failure policy's answer ({@link #failed()}) because the store did not answer in time: its own
     * timeout, or the caller's deadline, passed. False for any other failure (an error, a refused connection), and for
     * every decision of the limit.
     */
    public boolean timedOut() {
        return false;
    }

    /**
     * Whether a shared store's over-limit cache gave this refusal without a call to the store
     * ({@link #fromOverLimitCache}): a refusal all the same, which listeners count as one.
     */
    public boolean cached() {
        return false;
    }

    /** The limit of the window or bucket that decided ({@code L}). */
    public abstract long limit();

    /** Whole permits left after this decision, in {@code [0, limit]}. A {@code peek} consumes nothing. */
    public abstract long remaining();

    /** {@link #resetAfter()} in nanoseconds. */
    public abstract long resetAfterNanos();

    /** {@link #retryAfter()} in nanoseconds. */
    public abstract long retryAfterNanos();

    /** Time until the key is back to its full limit if no further request arrives. */
    public final Duration resetAfter() {
        return Duration.ofNanos(resetAfterNanos());
    }

    /**
     * Time until a request of the same cost could pass if no other request arrives;
     * {@link Duration#ZERO} when allowed, positive when denied.
     */
    public final Duration retryAfter() {
        long nanos = retryAfterNanos();
        return nanos == 0 ? Duration.ZERO : Duration.ofNanos(nanos);
    }

    @Override
    public final boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof Decision)) {
            return false;
        }
        Decision d = (Decision) o;
        return allowed() == d.allowed()
                && failed() == d.failed()
                && timedOut() == d.timedOut()
                && cached() == d.cached()
                && limit() == d.limit()
                && remaining() == d.remaining()
                && resetAfterNanos() == d.resetAfterNanos()
                && retryAfterNanos() == d.retryAfterNanos();
    }

    @Override
    public final int hashCode() {
        int h = Boolean.hashCode(allowed()) + (failed() ? 2 : 0) + (cached() ? 4 : 0) + (timedOut() ? 8 : 0);
        h = 31 * h + Long.hashCode(limit());
        h = 31 * h + Long.hashCode(remaining());
        h = 31 * h + Long.hashCode(resetAfterNanos());
        return 31 * h + Long.hashCode(retryAfterNanos());
    }

    @Override
    public final String toString() {
        return "Decision[allowed=" + allowed() + (failed() ? ", failed" : "") + (timedOut() ? " (timed out)" : "")
                + (cached() ? ", cached" : "")
                + ", limit=" + limit() + ", remaining=" + remaining() + ", resetAfter=" + resetAfter() + ", retryAfter="
                + retryAfter() + "]";
    }

    private static final class Allowed extends Decision {
        private final int limit;
        private final int remaining;
        private final long resetAfterNanos;

        Allowed(int limit, int remaining, long resetAfterNanos) {
            this.limit = limit;
            this.remaining = remaining;
            this.resetAfterNanos = resetAfterNanos;
        }

        @Override
        public boolean allowed() {
            return true;
        }

        @Override
        public long limit() {
            return limit;
        }

        @Override
        public long remaining() {
            return remaining;
        }

        @Override
        public long resetAfterNanos() {
            return resetAfterNanos;
        }

        @Override
        public long retryAfterNanos() {
            return 0;
        }
    }

    private static final class Denied extends Decision {
        private final int limit;
        private final int remaining;
        private final long resetAfterNanos;
        private final long retryAfterNanos;

        Denied(int limit, int remaining, long resetAfterNanos, long retryAfterNanos) {
            this.limit = limit;
            this.remaining = remaining;
            this.resetAfterNanos = resetAfterNanos;
            this.retryAfterNanos = retryAfterNanos;
        }

        @Override
        public boolean allowed() {
            return false;
        }

        @Override
        public long limit() {
            return limit;
        }

        @Override
        public long remaining() {
            return remaining;
        }

        @Override
        public long resetAfterNanos() {
            return resetAfterNanos;
        }

        @Override
        public long retryAfterNanos() {
            return retryAfterNanos;
        }
    }

    /**
     * A limit over an int, an answer of the failure policy ({@link #failed()}) or of an over-limit cache
     * ({@link #cached()}): the first two rare, the last a refusal that saved a store call.
     */
    private static final class Wide extends Decision {
        private final long limit;
        private final long remaining;
        private final long resetAfterNanos;
        private final long retryAfterNanos;
        private final boolean failed;
        private final boolean cached;
        private final boolean timedOut;

        Wide(
                long limit,
                long remaining,
                long resetAfterNanos,
                long retryAfterNanos,
                boolean failed,
                boolean cached,
                boolean timedOut) {
            this.limit = limit;
            this.remaining = remaining;
            this.resetAfterNanos = resetAfterNanos;
            this.retryAfterNanos = retryAfterNanos;
            this.failed = failed;
            this.cached = cached;
            this.timedOut = timedOut;
        }

        @Override
        public boolean failed() {
            return failed;
        }

        @Override
        public boolean timedOut() {
            return timedOut;
        }

        @Override
        public boolean cached() {
            return cached;
        }

        @Override
        public boolean allowed() {
            return retryAfterNanos == 0;
        }

        @Override
        public long limit() {
            return limit;
        }

        @Override
        public long remaining() {
            return remaining;
        }

        @Override
        public long resetAfterNanos() {
            return resetAfterNanos;
        }

        @Override
        public long retryAfterNanos() {
            return retryAfterNanos;
        }
    }
}
