package dev.sluice.internal;

import dev.sluice.spi.CounterKey;

/**
 * A key that synchronized or leased mode holds for one limiter and shares through a counter store: what
 * {@link LocalRounds} needs to batch its reads and writes.
 */
public interface CountedKey {

    /** The key's record in the counter store. */
    CounterKey id();

    /** The limiter holding the key: a call to the counter store carries the keys of one limiter only. */
    Object limiter();
}
