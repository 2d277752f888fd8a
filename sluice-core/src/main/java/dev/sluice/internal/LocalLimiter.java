package dev.sluice.internal;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimitListener;
import dev.sluice.algorithm.FrameStates;
import dev.sluice.algorithm.Params;
import dev.sluice.spi.Durations;
import dev.sluice.spi.Listeners;
import dev.sluice.spi.SharedStoreOptions;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the limiters of synchronized and leased mode share, the two modes that decide in memory and share counts per
 * frame through a {@link LocalRounds} spine: the configuration and what is derived from it, the place in the order of
 * a joint request's locks, closing, the clock, and telling the listeners. Each mode brings its per-key state and its
 * decision.
 *
 * @param <R> the limiter's reservation
 */
public abstract class LocalLimiter<R extends OnceReservation> extends AbstractRateLimiter<R> {

    private static final AtomicLong SERIALS = new AtomicLong();

    /** This limiter's place in the order in which a joint request takes the locks of several limiters' keys. */
    public final long serial = SERIALS.incrementAndGet();

    protected final LimiterConfig config;
    protected final Algorithm algorithm;
    protected final Params params;
    /** The counter shape of this limiter's records ({@link SharedStoreOptions#shape}). */
    protected final String shape;
    /** How long after its start a frame still counts ({@link FrameStates#lifetime}). */
    protected final long lifetime;
    /** How long a key stays held here without a request, in nanoseconds. */
    protected final long idleNanos;

    private final RateLimitListener listener;
    private final RateLimitListener storeListener;
    private volatile boolean closed;

    /**
     * A limiter with {@code config}, holding keys idle for {@code idleNanos}, whose decisions are told to the
     * configuration's listener and to {@code storeListener}, its store's.
     */
    protected LocalLimiter(LimiterConfig config, long idleNanos, RateLimitListener storeListener) {
        this.config = config;
        this.algorithm = config.algorithm();
        this.params = new Params(config);
        this.shape = SharedStoreOptions.shape(config);
        this.lifetime = FrameStates.lifetime(algorithm, params);
        this.idleNanos = idleNanos;
        this.listener = config.listener();
        this.storeListener = storeListener;
    }

    @Override
    public final LimiterConfig config() {
        return config;
    }

    /** The clock's time in nanoseconds since the epoch. */
    public final long now() {
        return config.clockNanos();
    }

    @Override
    protected final void checkOpen() {
        if (closed) {
            throw new IllegalStateException("this limiter is closed: " + this);
        }
    }

    /** Marks the limiter closed: every request throws from now on ({@link #checkOpen}). */
    protected final void markClosed() {
        closed = true;
    }

    /** Whether the limiter is closed. */
    public final boolean isClosed() {
        return closed;
    }

    @Override
    protected final void notifyDecision(String key, long cost, Decision d) {
        Listeners.decision(listener, this, key, cost, d);
        Listeners.decision(storeListener, this, key, cost, d);
    }

    /** {@code name[algorithm, limit/window, shape=…, keys=n(, closed)]}: what both modes' {@code toString} say. */
    protected final String describe(String name, int keys) {
        return name + "[" + algorithm + ", " + config.limit() + "/" + Durations.format(config.window()) + ", shape="
                + shape + ", keys=" + keys + (closed ? ", closed" : "") + "]";
    }
}
