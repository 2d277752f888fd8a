package dev.sluice.memory;

import dev.sluice.internal.OnceReservation;

/** A reservation on the in-memory store: remembers where its permits were taken from. */
final class MemoryReservation extends OnceReservation {

    private final InMemoryRateLimiter limiter;
    long place; // set once by reserve(), before the reservation is published; meaningful only if allowed

    MemoryReservation(InMemoryRateLimiter limiter, String key, long cost) {
        super(key, cost);
        this.limiter = limiter;
    }

    @Override
    protected boolean giveBack() {
        return limiter.cancel(this);
    }
}
