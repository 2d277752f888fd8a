package dev.sluice.internal;

import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import org.jspecify.annotations.Nullable;

/**
 * The request entry of a limiter that decides every request in one method, {@link #decide}: {@link #tryAcquire},
 * {@link #peek} and {@link #reserve} check their arguments ({@link LimiterConfig#checkRequest}) and that the limiter
 * is open, decide, and tell the listeners of every decision that may consume ({@code peek} is not told). The limiters
 * of exact mode ({@link dev.sluice.spi.SharedRateLimiter}), synchronized mode and leased mode extend it; a store of
 * another module binds a {@code SharedRateLimiter} and need not know it.
 *
 * @param <R> the limiter's reservation, which remembers where its permits were taken from
 */
public abstract class AbstractRateLimiter<R extends OnceReservation> implements RateLimiter, JointMember {

    /** For a limiter's constructor. */
    protected AbstractRateLimiter() {}

    @Override
    public final Decision tryAcquire(String key, long cost) {
        config().checkRequest(key, cost);
        checkOpen();
        Decision d = decide(key, cost, true, null);
        notifyDecision(key, cost, d);
        return d;
    }

    @Override
    public final Decision peek(String key, long cost) {
        config().checkRequest(key, cost);
        checkOpen();
        return decide(key, cost, false, null);
    }

    @Override
    public final Reservation reserve(String key, long cost) {
        config().checkRequest(key, cost);
        checkOpen();
        R r = reservation(key, cost);
        r.decide(decide(key, cost, true, r));
        notifyDecision(key, cost, r.decision());
        return r;
    }

    /**
     * Decides one request whose arguments are valid: {@code consume} is false for a {@code peek}; {@code reservation}
     * is set for a {@code reserve}, and is told, before it is published, where the permits of an admitted request were
     * taken from.
     */
    protected abstract Decision decide(String key, long cost, boolean consume, @Nullable R reservation);

    /** A reservation of {@code cost} permits of {@code key}, not yet decided. */
    protected abstract R reservation(String key, long cost);

    /**
     * Throws {@link IllegalStateException} if the limiter is closed.
     *
     * @throws IllegalStateException if the limiter is closed
     */
    protected abstract void checkOpen();

    /** Tells the limiter's listener and its store's of a decision; a listener that throws changes nothing. */
    protected abstract void notifyDecision(String key, long cost, Decision d);
}
