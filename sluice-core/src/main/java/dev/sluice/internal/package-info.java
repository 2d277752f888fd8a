/**
 * Plumbing shared by the limiters of several packages: their request entry
 * ({@link dev.sluice.internal.AbstractRateLimiter}) and reservations ({@link dev.sluice.internal.OnceReservation}),
 * how a joint request finds its decider ({@link dev.sluice.internal.JointMember}, {@link
 * dev.sluice.internal.JointDecider}), {@link dev.sluice.internal.KeyTable}, the per-key table of the synchronized and
 * leased limiters, and {@link dev.sluice.internal.JointLocks}, how their joint requests take the keys' locks; the calls
 * of those two modes to their counter store ({@link dev.sluice.internal.CounterStoreCalls}) and their background
 * rounds ({@link dev.sluice.internal.BackgroundRounds}); store failures logged when nobody listens
 * ({@link dev.sluice.internal.FailureLog}), and told apart as timeouts ({@link dev.sluice.internal.Timeouts}).
 * Internal: not exported by the module.
 */
package dev.sluice.internal;
