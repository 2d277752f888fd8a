package dev.sluice.bench;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Counts each thread's allowed and denied decisions, reported by JMH next to the throughput as the secondary
 * results {@code allowed} and {@code denied} (per second), so a run shows which load it really measured.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class Outcomes {

    public long allowed;
    public long denied;

    @Setup(Level.Iteration)
    public void reset() {
        allowed = 0;
        denied = 0;
    }

    /** Counts one decision; returns it. */
    boolean count(boolean wasAllowed) {
        if (wasAllowed) {
            allowed++;
        } else {
            denied++;
        }
        return wasAllowed;
    }
}
