package dev.sluice.bench.redis;

import dev.sluice.bench.Tally;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Counts each thread's allowed and denied decisions, reported by JMH next to the throughput as the secondary
 * results {@code allowed} and {@code denied} (per second, like the throughput: they add up to it), so a run shows
 * which load it really measured.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.OPERATIONS)
public class Decisions extends Tally {

    @Setup(Level.Iteration)
    public void reset() {
        clear();
    }

    public long allowed() {
        return allowed;
    }

    public long denied() {
        return denied;
    }
}
