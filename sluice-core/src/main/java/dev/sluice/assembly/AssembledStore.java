package dev.sluice.assembly;

import dev.sluice.spi.RateLimitStore;
import java.util.Objects;

/**
 * A store opened from its URI in its mode by {@link StoreAssembly#open(String)}, with everything it opened (the mode's
 * store, its counter store, the client), closed together in that order: a synchronized store flushes and a leased
 * store gives back its unused slices before what they write through closes.
 */
public final class AssembledStore implements AutoCloseable {

    private final RateLimitStore store;
    private final String description;
    private final boolean waits;
    private final AutoCloseable closer;

    AssembledStore(RateLimitStore store, String description, boolean waits, AutoCloseable closer) {
        this.store = Objects.requireNonNull(store);
        this.description = Objects.requireNonNull(description);
        this.waits = waits;
        this.closer = Objects.requireNonNull(closer);
    }

    /** The store limiters are bound to. */
    public RateLimitStore store() {
        return store;
    }

    /** The URI without its secrets, and the mode with its interval: what logs and pages may print. */
    public String description() {
        return description;
    }

    /**
     * Whether a decision may wait for the store: in exact mode on a shared store every decision calls it, in leased
     * mode a request its slice does not cover claims on its own thread; the in-memory store and synchronized mode
     * decide from memory only.
     */
    public boolean waits() {
        return waits;
    }

    /** Closes the mode's store, then its counter store, then the client. */
    @Override
    public void close() {
        try {
            closer.close();
        } catch (Exception e) {
            throw new IllegalStateException("closing " + description + " failed: " + e, e);
        }
    }

    @Override
    public String toString() {
        return description;
    }
}
