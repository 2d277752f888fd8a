package dev.sluice.spi;

import dev.sluice.internal.FrameMap;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * One optimistic write to a {@link CounterStore}: replace the record of {@code key} by {@code counters},
 * {@code newVersion} and {@code expireAtNanos}, if and only if its version is still {@code expectedVersion}
 * ({@link CounterSnapshot#ABSENT}: if and only if there is no record).
 *
 * @param key             the record
 * @param expectedVersion the version last read, {@link CounterSnapshot#ABSENT} to create the record
 * @param newVersion      the version the record has after the write; never {@link CounterSnapshot#ABSENT} and never
 *                        {@code expectedVersion}
 * @param counters        the whole new content: count per frame start (nanoseconds since the epoch), counts positive,
 *                        iterated in increasing frame order; frames not in it are removed from the record
 * @param expireAtNanos   nanoseconds since the epoch from which no frame of the record counts any more: the store
 *                        may delete the record from then on (a MongoDB TTL index, a Redis {@code PEXPIREAT})
 */
public record CounterWrite(
        CounterKey key, long expectedVersion, long newVersion, Map<Long, Long> counters, long expireAtNanos) {

    /**
     * Validates the fields and copies {@code counters} into an immutable map in increasing frame order, leaving out
     * frames whose count is zero.
     *
     * @throws IllegalArgumentException if a count is negative, or {@code newVersion} is {@link CounterSnapshot#ABSENT}
     *                                  or {@code expectedVersion}
     */
    public CounterWrite {
        Objects.requireNonNull(key, "key must not be null");
        counters = FrameMap.copyOf(counters);
        if (newVersion == CounterSnapshot.ABSENT) {
            throw new IllegalArgumentException(
                    "newVersion must not be " + CounterSnapshot.ABSENT + " (the version of an absent record)");
        }
        if (newVersion == expectedVersion) {
            throw new IllegalArgumentException("newVersion must differ from expectedVersion, both were " + newVersion);
        }
    }

    /** Whether this write creates the record (it expects none). */
    public boolean creates() {
        return expectedVersion == CounterSnapshot.ABSENT;
    }

    /** {@link #expireAtNanos()} as an instant. */
    public Instant expireAt() {
        return Instant.ofEpochSecond(
                Math.floorDiv(expireAtNanos, 1_000_000_000L), Math.floorMod(expireAtNanos, 1_000_000_000L));
    }

    /**
     * The sum of the counts over all frames. Keys from {@code -2^62} (inclusive) to {@code -2^61} are notes core keeps
     * in the record (leased mode's demands), stored as any frame by a store but not frames: they are left out.
     */
    public long total() {
        return FrameMap.copyOf(counters).total(); // the frame map itself: no copy
    }
}
