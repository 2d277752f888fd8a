package dev.sluice.spi;

import dev.sluice.Decision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Calls a {@link RateLimitListener} so that it can never change a decision: whatever it throws is caught and logged
 * through {@link System.Logger} ({@code dev.sluice}), at most once a minute for each of the three kinds of call, with
 * the number of throws since the last line. Every store calls its listeners through these methods.
 */
public final class Listeners {

    private static final System.Logger LOG = System.getLogger("dev.sluice");
    private static final long LOG_EVERY_NANOS = 60_000_000_000L;

    private static final RateLimitedLog DECISION = new RateLimitedLog("onDecision");
    private static final RateLimitedLog FAILURE = new RateLimitedLog("onStoreFailure");
    private static final RateLimitedLog CALL = new RateLimitedLog("onStoreCall");

    private Listeners() {}

    /** Tells {@code listener} of a decision; never throws. */
    public static void decision(RateLimitListener listener, RateLimiter limiter, String key, long cost, Decision d) {
        if (listener == RateLimitListener.NONE) {
            return;
        }
        try {
            listener.onDecision(limiter, key, cost, d);
        } catch (RuntimeException | LinkageError e) {
            DECISION.threw(listener, e);
        }
    }

    /** Tells {@code listener} of a store failure; never throws. */
    public static void failure(RateLimitListener listener, @Nullable RateLimiter limiter, SluiceException failure) {
        if (listener == RateLimitListener.NONE) {
            return;
        }
        try {
            listener.onStoreFailure(limiter, failure);
        } catch (RuntimeException | LinkageError e) {
            FAILURE.threw(listener, e);
        }
    }

    /** Tells {@code listener} how long a store call took; never throws. */
    public static void call(RateLimitListener listener, @Nullable RateLimiter limiter, long nanos) {
        if (listener == RateLimitListener.NONE) {
            return;
        }
        try {
            listener.onStoreCall(limiter, nanos);
        } catch (RuntimeException | LinkageError e) {
            CALL.threw(listener, e);
        }
    }

    /** A log line at most once a minute, counting what it did not log. */
    private static final class RateLimitedLog {
        private final String method;
        private final AtomicLong next = new AtomicLong(Long.MIN_VALUE);
        private final AtomicLong unlogged = new AtomicLong();

        RateLimitedLog(String method) {
            this.method = method;
        }

        void threw(RateLimitListener listener, Throwable e) {
            long now = System.nanoTime();
            long due = next.get();
            if ((due != Long.MIN_VALUE && now - due < 0) || !next.compareAndSet(due, now + LOG_EVERY_NANOS)) {
                unlogged.incrementAndGet();
                return;
            }
            long more = unlogged.getAndSet(0);
            LOG.log(
                    Level.WARNING,
                    () -> "rate limit listener " + listener + " threw from " + method
                            + " (ignored; the decision stands)"
                            + (more > 0 ? "; " + more + " more throws since the last line" : ""),
                    e);
        }
    }
}
