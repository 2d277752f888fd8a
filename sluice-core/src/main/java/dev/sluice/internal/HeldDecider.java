package dev.sluice.internal;

import dev.sluice.Decision;
import dev.sluice.algorithm.AlgorithmState;

/**
 * A limiter that decides on a key's algorithm state itself, under that state's lock: the in-memory limiter and
 * synchronized mode's. Their joint deciders lock every part's state, then decide all of them in one step
 * ({@link JointLocks#allOrNothing}).
 */
public interface HeldDecider {

    /** The limiter's time, in nanoseconds since the epoch. */
    long now();

    /**
     * Decides a request of {@code cost} on {@code s}, whose lock the caller holds, at {@code now}; with
     * {@code consume}, takes the permits where a decision alone takes them (allowed, or refused with
     * {@code countRejected}).
     */
    Decision decideHeld(AlgorithmState s, long now, long cost, boolean consume);
}
