package dev.sluice.bench;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Counts each thread's allowed and denied decisions, reported by JMH next to the throughput as the secondary
 * results {@code allowed} and {@code denied}, as events (each iteration's total), so a run shows which load it
 * really measured. The in-memory and PostgreSQL benchmarks use it; the Redis ones report per second
 * ({@code redis.Decisions}).
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class Outcomes extends Tally {

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
