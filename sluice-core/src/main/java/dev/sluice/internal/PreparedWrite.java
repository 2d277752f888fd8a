package dev.sluice.internal;

import dev.sluice.spi.CounterWrite;

/**
 * A write a limiter of synchronized or leased mode prepared for one of its keys, with whatever it needs to settle the
 * outcome.
 *
 * @param <K> the key
 */
public interface PreparedWrite<K> {

    /** The key written. */
    K key();

    /** The compare-and-set to send. */
    CounterWrite write();
}
