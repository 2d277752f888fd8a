/**
 * The six algorithms as per-key state machines, shared by every store that runs the algorithm in the JVM. Internal:
 * not exported by the module. A state is not thread-safe: its owner guards it. The in-memory store takes the state's
 * own lock word ({@code AlgorithmState.lock()}) around every call; synchronized mode holds the lock word of the key's
 * {@code KeyState}; a {@code StateMachine} (a shared store replaying a key's history) confines its state to one
 * thread. Times are nanoseconds since the epoch from the limiter's clock.
 */
package dev.sluice.algorithm;
