package dev.sluice.spi;

import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimitListener;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.internal.AbstractRateLimiter;
import dev.sluice.internal.FailureLog;
import dev.sluice.internal.JointDecider;
import dev.sluice.internal.OnceReservation;
import dev.sluice.internal.Timeouts;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * The {@link SharedRateLimiter} of every shared store: validates arguments, times requests ({@link TimeSource}),
 * applies the {@link FailurePolicy} when the store fails, keeps reservations, and tells the limiter's and the store's
 * {@link RateLimitListener}s of every decision, failure and call. With no listener at all, store failures are logged
 * through a {@link FailureLog}: one warning a minute with their count.
 *
 * <p>Thread-safe; holds no lock and no per-key state of its own.
 */
final class SharedLimiter extends AbstractRateLimiter<OnceReservation> implements SharedRateLimiter {

    private final LimiterConfig config;
    private final AtomicDecider decider;
    private final SharedStoreOptions options;
    private final SharedJoint joint;
    private final RateLimitListener limiterListener;
    private final RateLimitListener storeListener;
    private final LongAdder failures = new LongAdder();
    private final @Nullable FailureLog failureLog;
    /** This limiter's part of its store's over-limit cache; null without one. */
    private final OverLimitCache.@Nullable Table overLimit;

    private volatile boolean closed;

    SharedLimiter(LimiterConfig config, AtomicDecider decider, SharedStoreOptions options, SharedJoint joint) {
        this.config = Objects.requireNonNull(config, "config must not be null");
        this.decider = Objects.requireNonNull(decider, "decider must not be null");
        this.options = Objects.requireNonNull(options, "options must not be null");
        this.joint = Objects.requireNonNull(joint, "joint must not be null");
        this.limiterListener = config.listener();
        this.storeListener = options.listener();
        this.failureLog = limiterListener == RateLimitListener.NONE && storeListener == RateLimitListener.NONE
                ? new FailureLog(decider.toString(), options.failurePolicy().toString())
                : null;
        this.overLimit = joint.overLimitTable(config);
    }

    @Override
    public LimiterConfig config() {
        return config;
    }

    @Override
    public SharedStoreOptions options() {
        return options;
    }

    /** The store's decider behind this limiter. */
    AtomicDecider decider() {
        return decider;
    }

    @Override
    public long storeFailures() {
        return failures.sum();
    }

    @Override
    public SharedJoint joint() {
        return joint;
    }

    @Override
    public JointDecider jointDecider() {
        return joint.decider();
    }

    /** This limiter's part of the over-limit cache; null without one. */
    OverLimitCache.@Nullable Table overLimitTable() {
        return overLimit;
    }

    /** The over-limit cache's refusal of {@code cost} on {@code key} now, or null when the store must be asked. */
    @Nullable
    Decision cachedRefusal(String key, long cost) {
        OverLimitCache.Table t = overLimit;
        return t == null ? null : t.refusal(key, cost, config.clockNanos());
    }

    /**
     * Marks the limiter closed and drops its over-limit cache entries: it holds no other state of its own, and the
     * store stays open for other limiters.
     */
    @Override
    public void close() {
        closed = true;
        OverLimitCache.Table t = overLimit;
        if (t != null) {
            t.clear();
        }
    }

    @Override
    protected void checkOpen() {
        if (closed) {
            throw new IllegalStateException("this limiter is closed: " + this);
        }
    }

    /**
     * Decides one request; a store failure is answered by the failure policy. A {@code reservation} is always one of
     * this limiter's {@link SharedReservation}s.
     */
    @Override
    protected Decision decide(String key, long cost, boolean consume, @Nullable OnceReservation reservation) {
        OverLimitCache.Table cache = overLimit;
        long asked = 0;
        long giveBacks = 0;
        if (cache != null) {
            asked = config.clockNanos();
            Decision refused = cache.refusal(key, cost, asked);
            if (refused != null) {
                return refused;
            }
            giveBacks = cache.giveBacks();
        }
        StoreDecision s;
        long start = System.nanoTime();
        try {
            s = decider.decide(key, cost, consume, now());
            if (s == null) {
                throw new SluiceException("the store returned no decision");
            }
        } catch (RuntimeException e) {
            storeCall(start);
            throwIfClosed(e);
            return fallback(key, cost, e);
        }
        storeCall(start);
        Decision d = toDecision(s);
        if (reservation instanceof SharedReservation r && d.allowed()) {
            r.place = s.place();
            r.holds = true;
        }
        if (cache != null && !d.allowed()) {
            cache.refused(key, cost, d, asked, giveBacks);
        }
        return d;
    }

    Decision toDecision(StoreDecision s) {
        return s.allowed()
                ? Decision.allowed(config.limit(), s.remaining(), s.resetAfterNanos())
                : Decision.denied(config.limit(), s.remaining(), s.resetAfterNanos(), s.retryAfterNanos());
    }

    /**
     * Gives {@code cost} permits of {@code key} back to the store, then drops the key's over-limit cache entry: a
     * refusal kept from before may no longer hold (whether or not the store took the permits back).
     */
    boolean giveBack(String key, long cost, long place) {
        long start = System.nanoTime();
        try {
            boolean returned = decider.giveBack(key, cost, place, now());
            storeCall(start);
            forgetRefusal(key);
            return returned;
        } catch (RuntimeException e) {
            storeCall(start);
            forgetRefusal(key);
            throwIfClosed(e);
            SluiceException failure = recordFailure("giving back " + cost + " for", key, e);
            if (options.failurePolicy() == FailurePolicy.THROW) {
                throw failure;
            }
            return false;
        }
    }

    private void forgetRefusal(String key) {
        OverLimitCache.Table t = overLimit;
        if (t != null) {
            t.gaveBack(key);
        }
    }

    long now() {
        return options.timeSource() == TimeSource.CLOCK ? config.clockNanos() : AtomicDecider.STORE_TIME;
    }

    /**
     * Rethrows {@code e} if it says the store is closed ({@link AtomicDecider}): no failure policy answers for a
     * store the application closed.
     */
    static void throwIfClosed(RuntimeException e) {
        if (e instanceof IllegalStateException) {
            throw e;
        }
    }

    /** The failure policy's answer to a request the store failed to decide. */
    Decision fallback(String key, long cost, RuntimeException e) {
        SluiceException failure = recordFailure("deciding", key, e);
        boolean timedOut = Timeouts.isTimeout(e);
        switch (options.failurePolicy()) {
            case FAIL_OPEN:
                return Decision.fromFailurePolicy(Decision.allowed(config.limit(), config.limit() - cost, 0), timedOut);
            case FAIL_CLOSED:
                long wait = options.failClosedRetryAfter().toNanos();
                return Decision.fromFailurePolicy(Decision.denied(config.limit(), 0, wait, wait), timedOut);
            default:
                throw failure;
        }
    }

    SluiceException recordFailure(String what, String key, RuntimeException e) {
        failures.increment();
        SluiceException failure = e instanceof SluiceException
                ? (SluiceException) e
                : new SluiceException("store failed " + what + " key '" + key + "': " + e, e);
        if (failureLog != null) {
            failureLog.failed(failure);
        }
        Listeners.failure(limiterListener, this, failure);
        Listeners.failure(storeListener, this, failure);
        return failure;
    }

    void storeCall(long startNanos) {
        if (limiterListener == RateLimitListener.NONE && storeListener == RateLimitListener.NONE) {
            return;
        }
        long nanos = System.nanoTime() - startNanos;
        Listeners.call(limiterListener, this, nanos);
        Listeners.call(storeListener, this, nanos);
    }

    @Override
    protected void notifyDecision(String key, long cost, Decision d) {
        Listeners.decision(limiterListener, this, key, cost, d);
        Listeners.decision(storeListener, this, key, cost, d);
    }

    @Override
    public String toString() {
        return "SharedRateLimiter[" + config.algorithm() + ", " + config.limit() + "/"
                + Durations.format(config.window()) + ", "
                + decider + ", " + options.timeSource() + ", " + options.failurePolicy() + (closed ? ", closed" : "")
                + "]";
    }

    @Override
    protected OnceReservation reservation(String key, long cost) {
        return new SharedReservation(key, cost);
    }

    /** A reservation on a shared store: remembers where its permits were taken from. */
    final class SharedReservation extends OnceReservation {
        long place; // set once by reserve(), before the reservation is published
        boolean holds; // likewise: admitted by the store itself, not by a fail-open fallback

        SharedReservation(String key, long cost) {
            super(key, cost);
        }

        @Override
        protected boolean holds() {
            return holds;
        }

        @Override
        protected boolean giveBack() {
            return SharedLimiter.this.giveBack(key, cost, place);
        }
    }
}
