package dev.sluice.bench.postgres;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Each thread's allowed and denied decisions, reported by JMH as the secondary results {@code allowed} and
 * {@code denied}.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class PgOutcomes {

    public long allowed;
    public long denied;

    @Setup(Level.Iteration)
    public void reset() {
        allowed = 0;
        denied = 0;
    }

    boolean count(boolean wasAllowed) {
        if (wasAllowed) {
            allowed++;
        } else {
            denied++;
        }
        return wasAllowed;
    }
}
