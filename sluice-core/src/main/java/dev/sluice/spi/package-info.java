/**
 * The store SPI: what a store implements to keep limiters' state, and what core gives it to build on.
 *
 * <p><b>Exact mode</b> (every decision one atomic operation on the store): a store implements
 * {@link dev.sluice.spi.RateLimitStore}, whose {@code bind} returns {@link dev.sluice.spi.SharedRateLimiter#create
 * SharedRateLimiter.create(config, decider, options, joint)} over an {@link dev.sluice.spi.AtomicDecider} per limiter
 * (one script, one function call, one {@code findOneAndUpdate} per decision). A store that can decide several keys in
 * one call adds an {@link dev.sluice.spi.AtomicJointDecider} to its one {@link dev.sluice.spi.SharedJoint}; without
 * it joint requests are taken and given back. A store whose round trips bound its throughput sends concurrent
 * consuming decisions together with {@link dev.sluice.spi.GroupCommit}, their deadlines by the server's clock
 * ({@link dev.sluice.spi.ServerClock}). Core does the rest: validation, timing
 * ({@link dev.sluice.TimeSource}), the {@link dev.sluice.FailurePolicy}, reservations, listeners. A store whose server
 * cannot run the algorithm keeps and orders each key's history and replays it through
 * {@link dev.sluice.spi.StateMachine}, the in-memory store's own state machines. Builders extend
 * {@link dev.sluice.spi.SharedStoreBuilder}. Such a store passes {@code RateLimiterContract} of {@code sluice-testkit},
 * every algorithm, request by request.
 *
 * <p><b>Synchronized and leased mode</b> (decisions in memory, counts shared in bulk): a store implements
 * {@link dev.sluice.spi.CounterStore}, two calls only (load a batch of {@link dev.sluice.spi.CounterKey}s; compare-and-set
 * a batch of {@link dev.sluice.spi.CounterWrite}s by version), and {@code dev.sluice.sync.SynchronizedStore} or
 * {@code dev.sluice.lease.LeasedStore} does everything else. Such a store passes {@code CounterStoreContract} of
 * {@code sluice-testkit}; those modes keep only the algorithms whose state is counts per frame that add up across
 * instances (their {@link dev.sluice.spi.RateLimitStore#algorithms()}).
 *
 * <p>Either way a store reports to {@link dev.sluice.RateLimitListener}s only through
 * {@link dev.sluice.spi.Listeners}, so a listener that throws changes nothing. A store that keeps fewer than every
 * algorithm says which through {@link dev.sluice.spi.RateLimitStore#algorithms()}.
 *
 * <p>The plumbing core's own limiters share (their request entry, reservations, background rounds, the calls to a
 * counter store) lives in a package the module does not export: a store need not know it.
 */
package dev.sluice.spi;
