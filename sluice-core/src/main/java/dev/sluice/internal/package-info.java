/**
 * Plumbing shared by the limiters of several packages: {@link dev.sluice.internal.KeyTable}, the per-key table of the
 * synchronized and leased limiters, and {@link dev.sluice.internal.JointLocks}, how their joint requests take the keys'
 * locks. Internal: not exported by the module.
 */
package dev.sluice.internal;
