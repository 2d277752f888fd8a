package dev.sluice;

/**
 * The six rate-limiting algorithms. Window {@code W}, limit {@code L}, cost {@code c}; {@code now} comes
 * from the limiter's {@link java.time.Clock}. See {@code docs/algorithms.md} for accuracy and memory.
 */
public enum Algorithm {
    /**
     * One counter per epoch-aligned window {@code [floor(now/W)·W, +W)}; allowed iff {@code count + c ≤ L}.
     * Up to {@code 2L} can pass within one {@code W} straddling a boundary.
     */
    FIXED_WINDOW("fw"),
    /**
     * The timestamps of admitted requests (and rejected ones when counted); allowed iff the cost of the
     * entries in {@code (now−W, now]} plus {@code c} is at most {@code L}. Exact; memory grows with traffic.
     */
    SLIDING_LOG("log"),
    /**
     * Counters of epoch-aligned sub-windows of {@code W/buckets}; allowed iff the counters of the
     * sub-windows whose start is after {@code now−W}, plus {@code c}, are at most {@code L}. With
     * {@code strict}, the sub-window that only partly overlaps the window counts too.
     */
    SLIDING_WINDOW_COUNTER("swc"),
    /**
     * Counters of the current and previous fixed window; allowed iff
     * {@code floor(prev·(W−e)/W) + cur + c ≤ L}, {@code e} the time since the current window began.
     */
    SLIDING_TAIL("tail"),
    /** Tokens refilled continuously at {@code L/W}, starting full at {@code L}; allowed iff tokens ≥ {@code c}. */
    TOKEN_BUCKET("tb"),
    /**
     * A level leaking continuously at {@code L/W} (the GCRA meter); allowed iff level + {@code c ≤ L}.
     * Admits exactly what {@link #TOKEN_BUCKET} admits; no queueing.
     */
    LEAKY_BUCKET("lb");

    private final String code;

    Algorithm(String code) {
        this.code = code;
    }

    /**
     * A short, stable code for the algorithm: {@code fw}, {@code log}, {@code swc}, {@code tail}, {@code tb},
     * {@code lb}. Stores write it into the names of what they keep (see
     * {@link dev.sluice.spi.SharedStoreOptions#shape}), so it never changes.
     */
    public String code() {
        return code;
    }
}
