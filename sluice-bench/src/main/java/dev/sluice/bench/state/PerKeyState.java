package dev.sluice.bench.state;

import dev.sluice.bench.Keys;
import dev.sluice.bench.Load;
import java.util.concurrent.ConcurrentHashMap;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * A competitor's limiters, one per key, as its users do per-key limits: every call looks the limiter up in a
 * {@link ConcurrentHashMap}, creating it if absent, on one key as on many, as a service that limits per client must
 * (it does not know which key is hot) and as Sluice looks its key up.
 * Every key's limiter exists (and, under a drained {@link Load}, has had {@code L} permits taken) before measuring.
 * A subclass says how to make a limiter and how to drain one. Safe for concurrent {@link #limiterAt} calls.
 *
 * @param <L> the competitor's limiter type
 */
@State(Scope.Benchmark)
public abstract class PerKeyState<L> {

    @Param({"1", "1000000"})
    public int keys;

    @Param
    public Load load;

    private final ConcurrentHashMap<String, L> limiters = new ConcurrentHashMap<>();
    private String[] names;

    @Setup(Level.Trial)
    public void setUp() {
        configure();
        names = Keys.generate(keys);
        for (String name : names) {
            L l = limiter(name);
            if (load.drained() && !drain(l)) {
                throw new IllegalStateException("setup request denied for " + name);
            }
        }
    }

    /** Reads {@link #load} into whatever {@link #create} needs; runs before the first {@link #create}. */
    protected void configure() {}

    /** A new limiter under the run's {@link #load}, for key {@code key}. */
    protected abstract L create(String key);

    /** Takes the load's {@code L} permits from {@code limiter} at once; whether it granted them. */
    protected abstract boolean drain(L limiter);

    /** The limiter of key {@code index}, looked up. */
    public final L limiterAt(int index) {
        return limiter(names[index]);
    }

    private L limiter(String key) {
        L l = limiters.get(key);
        return l != null ? l : limiters.computeIfAbsent(key, this::create);
    }
}
