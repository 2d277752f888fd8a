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
import org.jspecify.annotations.Nullable;

/**
 * What the limiters of synchronized and leased mode share, the two modes that decide in memory and share counts per
 * frame through a {@link LocalRounds} spine: the configuration and what is derived from it, the place in the order of
 * a joint request's locks, the joint decider and closing (both the spine's), the clock, telling the listeners,
 * finding a key's entry locked ({@link #lockHeld}) and reservations, which remember the frame their permits were
 * counted in and give them back under the entry's lock ({@link #giveBack}). Each mode brings its per-key entry, its
 * decision and how a cancel returns permits.
 *
 * @param <E> the entry the limiter holds per key, in a {@link KeyTable}
 */
public abstract class LocalLimiter<E extends KeyTable.Entry>
        extends AbstractRateLimiter<LocalLimiter.FrameReservation> {

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

    private final LocalRounds<?> rounds;
    private final RateLimitListener listener;
    private final RateLimitListener storeListener;
    private volatile boolean closed;

    /**
     * A limiter with {@code config} of the store whose spine is {@code rounds}, holding keys idle for
     * {@code idleNanos}, whose decisions are told to the configuration's listener and to the store's.
     */
    protected LocalLimiter(LimiterConfig config, long idleNanos, LocalRounds<?> rounds) {
        this.config = config;
        this.algorithm = config.algorithm();
        this.params = new Params(config);
        this.shape = SharedStoreOptions.shape(config);
        this.lifetime = FrameStates.lifetime(algorithm, params);
        this.idleNanos = idleNanos;
        this.rounds = rounds;
        this.listener = config.listener();
        this.storeListener = rounds.listener();
    }

    /** The joint decider of this limiter's store: the same for every limiter of the store. */
    @Override
    public final JointDecider jointDecider() {
        return rounds.joint();
    }

    /**
     * Lets the limiter go: requests throw {@link IllegalStateException} from now on, and the store hands over its keys
     * (what each mode then writes is said on its store) and keeps no reference to it. Idempotent.
     */
    @Override
    public final void close() {
        rounds.release(this);
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
            throw closedException();
        }
    }

    private IllegalStateException closedException() {
        return new IllegalStateException("this limiter is closed: " + this);
    }

    /**
     * The entry of {@code key}, found or made by {@link #held} and locked: looked up again while the one found was
     * dropped as idle before its lock was taken. The caller unlocks it.
     *
     * @throws IllegalStateException holding no lock, if the limiter is closed (checked under the entry's lock, so no
     *     decision takes a count once its store has taken the limiter's keys)
     */
    protected final E lockHeld(String key) {
        while (true) {
            E e = held(key);
            e.lock();
            if (e.retired()) {
                e.unlock();
            } else if (closed) {
                e.unlock();
                throw closedException();
            } else {
                return e;
            }
        }
    }

    /**
     * The entry of {@code key}, made if this instance holds none; what making one costs (a read of the record, or
     * nothing) is the mode's. It may be retired by the time it is locked.
     */
    protected abstract E held(String key);

    /** The entry of {@code key} if this instance holds one, else null; for a cancel. */
    protected abstract @Nullable E find(String key);

    /**
     * Gives back the permits of {@code r}, reserved in the frame it remembers, to {@code e}, whose lock the caller
     * holds and which was not dropped, at {@code now}; whether they were returned. Called only while that frame still
     * counts.
     */
    protected abstract boolean giveBack(E e, FrameReservation r, long now);

    @Override
    protected final FrameReservation reservation(String key, long cost) {
        return new FrameReservation(this, key, cost);
    }

    private boolean cancel(FrameReservation r) {
        long now = now();
        E e = find(r.key);
        if (e == null || r.frame + lifetime <= now) {
            return false; // a frame that no longer counts holds nothing to give back
        }
        e.lock();
        try {
            return !e.retired() && giveBack(e, r, now);
        } finally {
            e.unlock();
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

    /**
     * A reservation of a limiter of synchronized or leased mode: remembers where its permits were counted, so that a
     * cancel gives them back there while that frame still counts.
     */
    public static final class FrameReservation extends OnceReservation {
        private final LocalLimiter<?> limiter;
        /** The frame the permits were counted in; set once, before the reservation is published, if allowed. */
        public long frame;
        /**
         * Where in the algorithm's state they were counted ({@link dev.sluice.algorithm.AlgorithmState#place}), for a
         * mode that gives them back there; likewise set once.
         */
        public long place;

        FrameReservation(LocalLimiter<?> limiter, String key, long cost) {
            super(key, cost);
            this.limiter = limiter;
        }

        @Override
        protected boolean giveBack() {
            return limiter.cancel(this);
        }
    }
}
