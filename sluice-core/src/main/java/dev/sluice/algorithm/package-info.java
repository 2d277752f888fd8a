/**
 * The six algorithms as per-key state machines, shared by every store that runs the algorithm in the JVM.
 * Internal: not exported by the module. Every method of a state must be called while holding that state's
 * lock ({@code AlgorithmState.lock()}); times are nanoseconds since the epoch from the limiter's clock.
 */
package dev.sluice.algorithm;
