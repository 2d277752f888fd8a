package dev.sluice.spi;

import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.algorithm.OnceReservation;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

/**
 * A {@link RateLimiter} whose every decision is one call to a shared store's {@link AtomicDecider}: what every
 * shared store's {@link RateLimitStore#bind} returns. It validates arguments, times requests
 * ({@link TimeSource}), applies the {@link FailurePolicy} when the store fails, and keeps reservations.
 *
 * <p>Thread-safe; holds no lock and no per-key state of its own.
 */
public final class SharedRateLimiter implements RateLimiter {

    private final LimiterConfig config;
    private final AtomicDecider decider;
    private final SharedStoreOptions options;
    private final LongAdder failures = new LongAdder();

    private SharedRateLimiter(LimiterConfig config, AtomicDecider decider, SharedStoreOptions options) {
        this.config = Objects.requireNonNull(config, "config must not be null");
        this.decider = Objects.requireNonNull(decider, "decider must not be null");
        this.options = Objects.requireNonNull(options, "options must not be null");
    }

    /** A limiter with {@code config} deciding through {@code decider}. */
    public static SharedRateLimiter create(LimiterConfig config, AtomicDecider decider, SharedStoreOptions options) {
        return new SharedRateLimiter(config, decider, options);
    }

    @Override
    public LimiterConfig config() {
        return config;
    }

    /** The options of the store this limiter decides on. */
    public SharedStoreOptions options() {
        return options;
    }

    /** How many calls to the store have failed or timed out since this limiter was built. */
    public long storeFailures() {
        return failures.sum();
    }

    @Override
    public Decision tryAcquire(String key, long cost) {
        config.checkRequest(key, cost);
        return decide(key, cost, true, null);
    }

    @Override
    public Decision peek(String key, long cost) {
        config.checkRequest(key, cost);
        return decide(key, cost, false, null);
    }

    @Override
    public Reservation reserve(String key, long cost) {
        config.checkRequest(key, cost);
        SharedReservation r = new SharedReservation(key, cost);
        r.decide(decide(key, cost, true, r));
        return r;
    }

    private Decision decide(String key, long cost, boolean consume, SharedReservation reservation) {
        StoreDecision s;
        Decision d;
        try {
            s = decider.decide(key, cost, consume, now());
            if (s == null) {
                throw new SluiceException("the store returned no decision");
            }
            d = s.allowed()
                    ? Decision.allowed(config.limit(), s.remaining(), s.resetAfterNanos())
                    : Decision.denied(config.limit(), s.remaining(), s.resetAfterNanos(), s.retryAfterNanos());
        } catch (RuntimeException e) {
            return fallback(key, cost, e);
        }
        if (reservation != null && d.allowed()) {
            reservation.place = s.place();
            reservation.holds = true;
        }
        return d;
    }

    private boolean giveBack(SharedReservation r) {
        try {
            return decider.giveBack(r.key, r.cost, r.place, now());
        } catch (RuntimeException e) {
            SluiceException failure = recordFailure("giving back " + r.cost + " for", r.key, e);
            if (options.failurePolicy() == FailurePolicy.THROW) {
                throw failure;
            }
            return false;
        }
    }

    private long now() {
        return options.timeSource() == TimeSource.CLOCK ? config.clockNanos() : AtomicDecider.STORE_TIME;
    }

    private Decision fallback(String key, long cost, RuntimeException e) {
        SluiceException failure = recordFailure("deciding", key, e);
        switch (options.failurePolicy()) {
            case FAIL_OPEN:
                return Decision.allowed(config.limit(), config.limit() - cost, 0);
            case FAIL_CLOSED:
                long wait = options.failClosedRetryAfter().toNanos();
                return Decision.denied(config.limit(), 0, wait, wait);
            default:
                throw failure;
        }
    }

    private SluiceException recordFailure(String what, String key, RuntimeException e) {
        failures.increment();
        SluiceException failure = e instanceof SluiceException ? (SluiceException) e
                : new SluiceException("store failed " + what + " key '" + key + "': " + e, e);
        try {
            options.failureListener().accept(failure);
        } catch (RuntimeException listenerFailure) {
            failure.addSuppressed(listenerFailure);
        }
        return failure;
    }

    @Override
    public String toString() {
        return "SharedRateLimiter[" + config.algorithm() + ", " + config.limit() + "/" + config.window() + ", "
                + decider + ", " + options.timeSource() + ", " + options.failurePolicy() + "]";
    }

    /** A reservation on a shared store: remembers where its permits were taken from. */
    private final class SharedReservation extends OnceReservation {
        long place;         // set once by reserve(), before the reservation is published
        boolean holds;      // likewise: admitted by the store itself, not by a fail-open fallback

        SharedReservation(String key, long cost) {
            super(key, cost);
        }

        @Override
        protected boolean holds() {
            return holds;
        }

        @Override
        protected boolean giveBack() {
            return SharedRateLimiter.this.giveBack(this);
        }
    }
}
