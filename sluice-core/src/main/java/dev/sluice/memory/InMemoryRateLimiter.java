package dev.sluice.memory;

import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import dev.sluice.algorithm.AlgorithmState;
import dev.sluice.algorithm.Params;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A limiter whose per-key states live in a {@link ConcurrentHashMap}.
 *
 * <p>How it stays exact under contention, and how eviction stays invisible:
 *
 * <pre>
 * decide(key):  s = map.get(key) (or insert a fresh one)
 *               s.lock() { if s.retired: look up again;  else decide on s }
 * evict(s):     s.lock() { if now ≥ s.expiresAt: s.retired = true; map.remove(key, s) }
 * </pre>
 *
 * A decision and an eviction of the same key serialize on the key's lock ({@link AlgorithmState#lock()}), and a decision never applies to a
 * retired state, so no admitted permit is ever lost to eviction. A state is evicted only once it decides as a fresh
 * state would ({@link AlgorithmState#expiresAt}), so a key recreated after eviction decides exactly as if it
 * had been kept. A reservation whose state was evicted holds nothing any more, and its cancel returns false.
 *
 * <p>Eviction is amortized over one cursor that laps the map: once per millisecond of clock time a request examines
 * up to {@value #SWEEP_PER_TICK} entries, starting a new lap if the last one is done, and each new key examines up to
 * {@value #SWEEP_PER_INSERT} more entries of the current lap. No sweep examines an entry twice, and only the
 * millisecond tick starts a lap, so a map that churns through few keys does not pay for a new iterator per
 * insertion. At most one thread sweeps at a time; the others skip it.
 */
final class InMemoryRateLimiter implements RateLimiter {

    static final int SWEEP_PER_INSERT = 2;
    static final int SWEEP_PER_TICK = 256;
    private static final long TICK_NANOS = 1_000_000;

    private final LimiterConfig config;
    private final Params params;
    private final int maximumKeys;
    private final ConcurrentHashMap<String, AlgorithmState> states = new ConcurrentHashMap<>();
    private final AtomicInteger size = new AtomicInteger();  // entries in states, counted before insertion

    private final ReentrantLock sweepLock = new ReentrantLock();
    private Iterator<Map.Entry<String, AlgorithmState>> cursor;  // guarded by sweepLock
    private long noRoomUntil = Long.MIN_VALUE;                   // guarded by sweepLock
    private volatile long nextTick = Long.MIN_VALUE;

    InMemoryRateLimiter(LimiterConfig config, int maximumKeys) {
        this.config = config;
        this.params = new Params(config);
        this.maximumKeys = maximumKeys;
    }

    @Override
    public LimiterConfig config() {
        return config;
    }

    @Override
    public Decision tryAcquire(String key, long cost) {
        config.checkRequest(key, cost);
        return decide(key, cost, now(), null);
    }

    @Override
    public Decision peek(String key, long cost) {
        config.checkRequest(key, cost);
        long now = now();
        AlgorithmState s = states.get(key);
        if (s != null) {
            s.lock();
            try {
                if (!s.isRetired()) {
                    return s.decide(params, now, cost, false);
                }
            } finally {
                s.unlock();
            }
        }
        return AlgorithmState.create(config.algorithm(), params, now).decide(params, now, cost, false);
    }

    @Override
    public Reservation reserve(String key, long cost) {
        config.checkRequest(key, cost);
        MemoryReservation r = new MemoryReservation(this, key, cost);
        r.decision = decide(key, cost, now(), r);
        return r;
    }

    boolean cancel(MemoryReservation r) {
        long now = now();
        AlgorithmState s = states.get(r.key);
        if (s == null) {
            return false;
        }
        s.lock();
        try {
            return !s.isRetired() && s.giveBack(params, now, r.cost, r.place);
        } finally {
            s.unlock();
        }
    }

    private Decision decide(String key, long cost, long now, MemoryReservation reservation) {
        if (now >= nextTick) {
            tick(now);
        }
        boolean inserted = false;
        while (true) {
            AlgorithmState s = states.get(key);
            if (s == null) {
                s = insert(key, now);
                if (s == null) {
                    return noRoom(now);
                }
                inserted = true;
            }
            Decision d;
            s.lock();
            try {
                if (s.isRetired()) {
                    continue;
                }
                d = s.decide(params, now, cost, true);
                if (reservation != null && d.allowed()) {
                    reservation.place = s.place(params, now);
                }
            } finally {
                s.unlock();
            }
            // Sweep only after deciding: a fresh state is idle by definition, and a sweep between its insertion
            // and its first decision would evict it and send this loop round again.
            if (inserted) {
                sweep(now, SWEEP_PER_INSERT, false, false);
            }
            return d;
        }
    }

    /** Inserts a fresh state for {@code key} unless the bound forbids it; returns the key's state or null. */
    private AlgorithmState insert(String key, long now) {
        while (size.incrementAndGet() > maximumKeys) {
            size.decrementAndGet();
            if (!makeRoom(now)) {
                AlgorithmState raced = states.get(key);  // another thread may have inserted it meanwhile
                return raced;
            }
        }
        AlgorithmState fresh = AlgorithmState.create(config.algorithm(), params, now);
        AlgorithmState prior = states.putIfAbsent(key, fresh);
        if (prior != null) {
            size.decrementAndGet();
            return prior;
        }
        return fresh;
    }

    private Decision noRoom(long now) {
        long wait;
        sweepLock.lock();
        try {
            wait = Math.max(1, noRoomUntil - now);
        } finally {
            sweepLock.unlock();
        }
        return Decision.denied(config.limit(), 0, wait, wait);
    }

    /** At the bound: evicts every idle key, unless a full pass has just shown there is none. */
    private boolean makeRoom(long now) {
        sweepLock.lock();
        try {
            if (size.get() < maximumKeys) {
                return true;
            }
            if (now < noRoomUntil) {
                return false;
            }
            long earliest = Long.MAX_VALUE;
            for (Map.Entry<String, AlgorithmState> e : states.entrySet()) {
                earliest = Math.min(earliest, evictIfIdle(e.getKey(), e.getValue(), now));
            }
            cursor = null;
            if (size.get() < maximumKeys) {
                return true;
            }
            noRoomUntil = earliest;
            return false;
        } finally {
            sweepLock.unlock();
        }
    }

    private void tick(long now) {
        nextTick = now + TICK_NANOS;
        sweep(now, SWEEP_PER_TICK, false);
    }

    /** Examines up to {@code budget} entries from the cursor; with {@code wait}, waits for a concurrent sweep. */
    int sweep(long now, int budget, boolean wait) {
        return sweep(now, budget, wait, true);
    }

    /**
     * Examines up to {@code budget} entries, and at most every entry once, from the cursor. Only a sweep that
     * {@code mayStartLap} restarts an exhausted cursor, and only once: an insertion's sweep just continues the
     * current lap, or else a small map would get a new iterator (an allocation) on nearly every insertion.
     */
    private int sweep(long now, int budget, boolean wait, boolean mayStartLap) {
        if (wait) {
            sweepLock.lock();
        } else if (!sweepLock.tryLock()) {
            return 0;
        }
        try {
            int evicted = 0;
            int examine = Math.min(budget, size.get());
            boolean startLap = mayStartLap;
            for (int i = 0; i < examine; i++) {
                if (cursor == null || !cursor.hasNext()) {
                    if (!startLap) {
                        break;
                    }
                    startLap = false;
                    cursor = states.entrySet().iterator();
                    if (!cursor.hasNext()) {
                        break;
                    }
                }
                Map.Entry<String, AlgorithmState> e = cursor.next();
                if (evictIfIdle(e.getKey(), e.getValue(), now) == Long.MIN_VALUE) {
                    evicted++;
                }
            }
            return evicted;
        } finally {
            sweepLock.unlock();
        }
    }

    /** Evicts the state if idle at {@code now}: returns MIN_VALUE if it did, else when the state will be idle. */
    private long evictIfIdle(String key, AlgorithmState s, long now) {
        s.lock();
        try {
            if (s.isRetired()) {
                return Long.MAX_VALUE;
            }
            long expiresAt = s.expiresAt(params);
            if (expiresAt > now) {
                return expiresAt;
            }
            s.retire();
            if (states.remove(key, s)) {
                size.decrementAndGet();
            }
            return Long.MIN_VALUE;
        } finally {
            s.unlock();
        }
    }

    /** Evicts every idle key now; returns how many. */
    int evictIdle() {
        long now = now();
        return sweep(now, size.get() + 1, true);
    }

    /** Keys held. */
    int keyCount() {
        return size.get();
    }

    private long now() {
        return config.clockNanos();
    }

    @Override
    public String toString() {
        return "InMemoryRateLimiter[" + config.algorithm() + ", " + config.limit() + "/" + config.window()
                + ", keys=" + size.get() + "]";
    }
}
