package dev.sluice.algorithm;

import dev.sluice.LimiterConfig;

/** A limiter's configuration in the primitive form the states compute with. Immutable. */
public final class Params {

    final long limit;
    final long window;
    final long subWindow;
    final boolean countRejected;
    final boolean strict;

    public Params(LimiterConfig config) {
        this.limit = config.limit();
        this.window = config.windowNanos();
        this.subWindow = config.subWindowNanos();
        this.countRejected = config.countRejected();
        this.strict = config.strict();
    }

    /** {@code L}. */
    public long limit() {
        return limit;
    }
}
