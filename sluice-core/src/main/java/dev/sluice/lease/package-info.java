/**
 * Leased mode: limiters that decide from memory on every instance, within slices of the limit that each instance
 * claims from a {@link dev.sluice.spi.CounterStore} by compare-and-set, so that the cluster never admits over the
 * limit. Start at {@link dev.sluice.lease.LeasedStore}.
 */
package dev.sluice.lease;
