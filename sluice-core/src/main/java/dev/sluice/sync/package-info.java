/**
 * Synchronized mode: limiters that decide from memory on every instance and share their counts through a
 * {@link dev.sluice.spi.CounterStore} in bulk, with optimistic locking. Start at {@link dev.sluice.sync.SynchronizedStore}.
 */
package dev.sluice.sync;
