/**
 * Plumbing shared by the limiters of several packages: {@link dev.sluice.internal.KeyTable}, the per-key table of the
 * synchronized and leased limiters. Internal: not exported by the module.
 */
package dev.sluice.internal;
