package dev.sluice.memory;

import dev.sluice.Decision;
import dev.sluice.Reservation;
import java.util.concurrent.atomic.AtomicBoolean;

/** A reservation on the in-memory store: remembers where its permits were taken from. */
final class MemoryReservation implements Reservation {

    private final InMemoryRateLimiter limiter;
    final String key;
    final long cost;
    Decision decision;  // set once by reserve(), before the reservation is published
    long place;         // likewise; meaningful only when the decision was allowed
    private final AtomicBoolean done = new AtomicBoolean();

    MemoryReservation(InMemoryRateLimiter limiter, String key, long cost) {
        this.limiter = limiter;
        this.key = key;
        this.cost = cost;
    }

    @Override
    public Decision decision() {
        return decision;
    }

    @Override
    public boolean cancel() {
        if (!decision.allowed() || !done.compareAndSet(false, true)) {
            return false;
        }
        return limiter.cancel(this);
    }

    @Override
    public String toString() {
        return "Reservation[" + key + ", cost=" + cost + ", " + decision + (done.get() ? ", cancelled" : "") + "]";
    }
}
