package dev.sluice;

/**
 * A {@link java.time.Clock} that also tells its time as a count, without making an {@link java.time.Instant}: a
 * limiter given such a clock reads {@link #epochNanos()} instead of {@code instant()} for every decision
 * ({@link LimiterConfig#clockNanos()}). For a clock moved by the program, such as a replay's virtual clock,
 * whose every reading would otherwise be a new object.
 *
 * <p>Contract: {@link #epochNanos()} is the clock's {@code instant()} in nanoseconds since the epoch, exactly, at
 * every moment.
 */
public interface EpochNanosClock {
    /** The time now, in nanoseconds since the epoch: the clock's {@code instant()} as a count. */
    long epochNanos();
}
