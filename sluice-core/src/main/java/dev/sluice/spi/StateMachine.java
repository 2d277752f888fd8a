package dev.sluice.spi;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.algorithm.AlgorithmState;
import dev.sluice.algorithm.Params;
import java.util.Arrays;
import java.util.Objects;

/**
 * One key's state under one algorithm, decided in this JVM by the very state machines of the in-memory store and
 * carried to and from a server as plain numbers ({@link #snapshot()}, {@link #restore}). For a shared store that
 * cannot run the algorithm on its server, only keep and order what happened to a key: its decider replays the
 * key's history through a {@code StateMachine} and so decides exactly as the in-memory store does.
 *
 * <p>Every method takes the {@link LimiterConfig} of the request being applied, which must have this state's
 * algorithm, window and sub-windows; its limit and {@code countRejected} may differ from request to request (a limit
 * raised or lowered keeps the counts already taken). Times are nanoseconds since the epoch. Not thread-safe.
 */
public final class StateMachine {

    private final Algorithm algorithm;
    private final AlgorithmState state;

    private StateMachine(Algorithm algorithm, AlgorithmState state) {
        this.algorithm = algorithm;
        this.state = state;
    }

    /** The state of a key never seen before; it decides alike whatever the time of its first request. */
    public static StateMachine fresh(LimiterConfig config) {
        Objects.requireNonNull(config, "config must not be null");
        Algorithm algorithm = config.algorithm();
        return new StateMachine(algorithm, AlgorithmState.create(algorithm, new Params(config)));
    }

    /**
     * The state a {@link #snapshot()} of {@code config}'s algorithm describes.
     *
     * @throws IllegalArgumentException if {@code snapshot} is not a snapshot of that algorithm
     */
    public static StateMachine restore(LimiterConfig config, long[] snapshot) {
        Objects.requireNonNull(config, "config must not be null");
        return new StateMachine(config.algorithm(), AlgorithmState.restore(config.algorithm(), snapshot));
    }

    /**
     * Decides a request of {@code cost} at {@code nowNanos}, as {@link dev.sluice.spi.AtomicDecider#decide} does;
     * the decision's {@code place} is set when the request consumed and was admitted, else 0.
     */
    public StoreDecision decide(LimiterConfig config, long nowNanos, long cost, boolean consume) {
        Params p = params(config);
        Decision d = state.decide(p, nowNanos, cost, consume);
        long place = consume && d.allowed() ? state.place(p, nowNanos) : 0;
        return new StoreDecision(d.allowed(), d.remaining(), d.resetAfterNanos(), d.retryAfterNanos(), place);
    }

    /** Gives back permits taken at {@code place}, as {@link dev.sluice.spi.AtomicDecider#giveBack} does. */
    public boolean giveBack(LimiterConfig config, long nowNanos, long cost, long place) {
        return state.giveBack(params(config), nowNanos, cost, place);
    }

    /**
     * The earliest time from which this state decides exactly as a fresh one would if nothing happens until then;
     * {@link Long#MIN_VALUE} if it already does.
     */
    public long expiresAt(LimiterConfig config) {
        return state.expiresAt(params(config));
    }

    /** This state as numbers; {@link #restore} rebuilds it exactly. */
    public long[] snapshot() {
        return state.snapshot();
    }

    private Params params(LimiterConfig config) {
        if (config.algorithm() != algorithm) {
            throw new IllegalArgumentException(
                    "config must be of this state's algorithm " + algorithm + ", was " + config.algorithm());
        }
        return new Params(config);
    }

    @Override
    public String toString() {
        return "StateMachine[" + algorithm + ", " + Arrays.toString(state.snapshot()) + "]";
    }
}
