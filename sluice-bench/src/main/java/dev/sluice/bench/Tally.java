package dev.sluice.bench;

/**
 * A thread's count of allowed and denied decisions, for the {@code @AuxCounters} states that report them
 * ({@link Outcomes}, {@code redis.Decisions}). Not thread-safe: one instance per benchmark thread.
 *
 * <p>JMH takes a counters state's own public fields and methods as its counters (only the annotated class's, not
 * inherited ones), so a public {@code count} cannot sit in the state itself: it lives here, and each state
 * publishes the two totals as its own {@code allowed()} and {@code denied()} methods.
 */
public abstract class Tally {

    /** Allowed decisions since the last {@link #clear()}. */
    protected long allowed;
    /** Denied decisions since the last {@link #clear()}. */
    protected long denied;

    /** Counts one decision; returns it. */
    public final boolean count(boolean wasAllowed) {
        if (wasAllowed) {
            allowed++;
        } else {
            denied++;
        }
        return wasAllowed;
    }

    /** Sets both counts to zero. */
    protected final void clear() {
        allowed = 0;
        denied = 0;
    }
}
