package dev.sluice.algorithm;

import dev.sluice.LimiterConfig;

/** A limiter's configuration in the primitive form the states compute with. Immutable. */
public final class Params {

    final long limit;
    final long window;
    final long subWindow;
    final boolean countRejected;
    final boolean strict;
    /** {@code W/L} rounded down: the nanoseconds one permit takes to refill or leak, whole part. */
    final long tokenNanosFloor;
    /** {@code W − L·tokenNanosFloor}: the remainder of {@code W/L}, in {@code [0, L)}. */
    final long tokenNanosRemainder;
    /** {@code W/L} rounded up. */
    final long tokenNanos;
    /** Division by {@code L}. */
    final Divisor byLimit;
    /** Division by {@code W}. */
    final Divisor byWindow;

    public Params(LimiterConfig config) {
        this.limit = config.limit();
        this.window = config.windowNanos();
        this.subWindow = config.subWindowNanos();
        this.countRejected = config.countRejected();
        this.strict = config.strict();
        this.tokenNanosFloor = window / limit;
        this.tokenNanosRemainder = window - tokenNanosFloor * limit;
        this.tokenNanos = tokenNanosFloor + (tokenNanosRemainder == 0 ? 0 : 1);
        this.byLimit = new Divisor(limit);
        this.byWindow = new Divisor(window);
    }

    /** {@code L}. */
    public long limit() {
        return limit;
    }
}
