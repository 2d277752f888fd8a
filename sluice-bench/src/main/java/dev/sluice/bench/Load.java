package dev.sluice.bench;

import java.time.Duration;

/**
 * The two limits every benchmark runs under, the same for Sluice and for each competitor.
 *
 * <ul>
 *   <li>{@link #ALLOWED}: 10,000,000 permits per 100 ms (10<sup>8</sup>/s), far above what one JVM on two cores
 *       can request, so every decision is "allowed". The window is short because {@code SLIDING_LOG} keeps one
 *       entry per admitted request: at about 10<sup>7</sup> requests/s on one hot key it holds about a million
 *       entries, which is the price of an exact log and not what this run should be about.</li>
 *   <li>{@link #DENIED}: 1,000 permits per day, and every key is drained before measuring, so every decision is
 *       "denied": the buckets give a key back one permit every 86.4 s, longer than a run. (At 1,000 per hour a
 *       million keys each visited about once a second got a permit back on one visit in five.)</li>
 * </ul>
 */
public enum Load {
    ALLOWED(10_000_000, Duration.ofMillis(100)),
    DENIED(1_000, Duration.ofDays(1));

    /** Permits per window ({@code L}); also the bucket capacity. */
    public final long limit;
    /** The window ({@code W}); the buckets refill {@code L} per {@code W}. */
    public final Duration window;

    Load(long limit, Duration window) {
        this.limit = limit;
        this.window = window;
    }

    /** Whether every key is drained before measuring. */
    public boolean drained() {
        return this == DENIED;
    }
}
