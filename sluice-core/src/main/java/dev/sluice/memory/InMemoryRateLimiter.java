package dev.sluice.memory;

import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import dev.sluice.algorithm.AlgorithmState;
import dev.sluice.algorithm.Params;
import dev.sluice.internal.HeldDecider;
import dev.sluice.internal.JointDecider;
import dev.sluice.internal.JointMember;
import dev.sluice.internal.KeyTable;
import dev.sluice.spi.Durations;
import dev.sluice.spi.Listeners;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A limiter whose per-key states live in a {@link KeyTable}, the table synchronized and leased mode keep theirs in:
 * its slots hold the states themselves, each bound to its key and hash, so a decision on one of many keys reads one
 * object fewer than through a {@code ConcurrentHashMap}'s node. A look-up may find a state evicted a moment ago; the
 * decision then finds it retired under its lock and looks again, as below.
 *
 * <p>How it stays exact under contention, and how eviction stays invisible:
 *
 * <pre>
 * decide(key):  s = table.get(key):  now = clock;  s.lock() { if s.retired: look up again;  else decide on s at now }
 *               or a fresh s, locked, then put into the table, then now = clock and decide on s at now
 * evict(s):     s.lock() { if now ≥ s.expiresAt + keep: s.retired = true; table.remove(s) }
 * </pre>
 *
 * A decision and an eviction of the same key serialize on the key's lock ({@link AlgorithmState#lock()}), and a
 * decision never applies to a retired state, so no admitted permit is ever lost to eviction. A state is evicted
 * only once it decides as a fresh state would ({@link AlgorithmState#expiresAt}), so a key recreated after eviction
 * decides exactly as if it had been kept. A sweep leaves a state idle for {@code keep}
 * ({@link InMemoryStore.Builder#keepIdleKeys}) before it evicts it, so that a key that comes back soon decides on
 * its idle state, as on a fresh one, instead of allocating another; making room at the bound on keys does not wait.
 * Three details make that hold under contention:
 * <ul>
 *   <li>A decision on a state found in the table reads the time before taking the state's lock, so that the lock is
 *       held for the arithmetic alone (reading the clock costs as much as the decision, and threads on a hot key
 *       take turns for as long as the lock is held). A request that reads an older time than the state's newest
 *       (it read the clock, then waited for the lock while others decided) is decided at the state's newest time,
 *       since a state never runs backwards ({@link AlgorithmState}): as if it had arrived just after them.</li>
 *   <li>A request that finds its state retired reads the time again, after the eviction, and so does a request
 *       that takes up a fresh state (after publishing it). Otherwise a request that stalls between its reading and
 *       its decision could find the state evicted at a later time and decide on a fresh one at its older time:
 *       with a fixed window of limit 1, a request reading 12:00:09.5, stalled while the state of the full window
 *       12:00:00 is evicted at 12:00:10.5, would be admitted into that window a second time.</li>
 *   <li>A fresh state is locked before it is published, so a sweep cannot evict it (fresh is idle) between its
 *       insertion and its first decision.</li>
 * </ul>
 * A reservation whose state was evicted holds nothing any more, and its cancel returns false.
 *
 * <p>Eviction is amortized over one cursor that laps the table: once per millisecond of clock time a request examines
 * up to {@value #SWEEP_PER_TICK} entries of the current lap, and each new key examines up to
 * {@value #SWEEP_PER_INSERT} more. No sweep examines an entry twice, and only the millisecond tick starts a lap, so
 * a table that churns through few keys does not pay for a new iterator per insertion. A new lap starts once the last
 * one is done and either about as many decisions have been made since it started as it had entries to examine (and
 * the clock has reached the earliest time a state it kept may be evictable), or the clock has moved on by
 * {@code keep} since it started: a lap costs about one examination per decision, however slowly or fast the clock
 * moves against the requests (a replay on a virtual clock moves it by about a millisecond per request), and a key
 * idle for {@code keep} is still evicted within another {@code keep} and one lap. Decisions are counted by sample:
 * one release of a key's lock in {@link AlgorithmState#SAMPLE} counts that many, the others nothing, so that most
 * decisions write no counter shared by every key. At most one thread sweeps at a time; the others skip it.
 *
 * <p>At the bound on keys, a new key first makes room by evicting every idle key (one full pass, under the sweep
 * lock). If every key is live, the request is denied with {@code retryAfter} until the earliest live key is idle;
 * that instant is remembered, so until then a new key is denied without another pass.
 *
 * <p>A joint request ({@link MemoryJoint}) holds the locks of all its keys at once, taken in one global order
 * ({@link #serial}, then key), so two joint requests never wait on each other in a cycle; it never makes room while
 * holding a lock, since a pass over the table locks every state of this limiter.
 *
 * <p>{@link #close()} retires and drops every state: a reservation taken before returns nothing afterwards.
 */
final class InMemoryRateLimiter implements RateLimiter, JointMember, HeldDecider {

    static final int SWEEP_PER_INSERT = 2;
    static final int SWEEP_PER_TICK = 256;
    private static final long TICK_NANOS = 1_000_000;
    /** What {@link #makeRoom} answers when the caller should try to take a slot again. */
    private static final long ROOM = Long.MIN_VALUE;

    private static final AtomicLong SERIALS = new AtomicLong();

    private final LimiterConfig config;
    private final Params params;
    private final int maximumKeys;
    /** How long a sweep leaves a state idle before evicting it ({@link InMemoryStore.Builder#keepIdleKeys}). */
    private final long keepIdleNanos;

    private final RateLimitListener listener;
    /** Whether a refusal changes nothing (no countRejected), so it may be decided on an optimistic read. */
    private final boolean refusalsWriteNothing;
    /** This limiter's place in the order in which a joint request locks the keys of several limiters. */
    final long serial = SERIALS.incrementAndGet();

    private volatile boolean closed;
    private final KeyTable<AlgorithmState> states = new KeyTable<>();
    private final AtomicInteger size = new AtomicInteger(); // entries in states, counted before insertion

    private final ReentrantLock sweepLock = new ReentrantLock();
    private @Nullable Iterator<AlgorithmState> cursor; // guarded by sweepLock
    private long noRoomUntil = Long.MIN_VALUE; // guarded by sweepLock
    private volatile long nextTick = Long.MIN_VALUE;
    /**
     * Decisions made, counted for the start of the next lap: roughly, {@link AlgorithmState#SAMPLE} at each sampled
     * release of a key's lock ({@link #afterDecision}).
     */
    private final LongAdder decisions = new LongAdder();

    private long lapStartedAt; // guarded by sweepLock: the clock when the current lap started
    private long lapStartDecisions; // guarded by sweepLock: decisions when the current lap started
    private int lapEntries = -1; // guarded by sweepLock: the entries the current lap set out to examine; -1: none yet
    /**
     * Guarded by sweepLock: the earliest time a state the current lap examined and kept becomes evictable (idle for
     * {@code keep}); {@link Long#MAX_VALUE} while it has kept none.
     */
    private long lapEarliestIdle = Long.MAX_VALUE;
    /**
     * Guarded by sweepLock: {@link #lapEarliestIdle} of the last lap that ended, before which a lap paid for by
     * decisions finds nothing it examined to evict; {@link Long#MIN_VALUE}: no such bound.
     */
    private long nextLapUseful = Long.MIN_VALUE;

    InMemoryRateLimiter(LimiterConfig config, int maximumKeys, long keepIdleNanos) {
        this.config = config;
        this.params = new Params(config);
        this.maximumKeys = maximumKeys;
        this.keepIdleNanos = keepIdleNanos;
        this.listener = config.listener();
        this.refusalsWriteNothing = !config.countRejected();
    }

    @Override
    public LimiterConfig config() {
        return config;
    }

    @Override
    public Decision tryAcquire(String key, long cost) {
        config.checkRequest(key, cost);
        checkOpen();
        Decision d = decide(key, cost, null);
        Listeners.decision(listener, this, key, cost, d);
        return d;
    }

    @Override
    public Decision peek(String key, long cost) {
        config.checkRequest(key, cost);
        checkOpen();
        AlgorithmState s = states.get(key);
        if (s != null) {
            Decision optimistic = readOptimistically(s, cost, false);
            if (optimistic != null) {
                return optimistic;
            }
            s.lock();
            try {
                long now = now();
                if (!s.retired()) {
                    return s.decide(params, now, cost, false);
                }
            } finally {
                s.unlock();
            }
        }
        long now = now();
        if (size.get() >= maximumKeys) {
            long until = makeRoom(now);
            if (until != ROOM) {
                s = states.get(key); // another thread may have just created it
                if (s == null) {
                    return noRoom(until, now);
                }
                s.lock();
                try {
                    now = now();
                    if (!s.retired()) {
                        return s.decide(params, now, cost, false);
                    }
                } finally {
                    s.unlock();
                }
            }
        }
        return AlgorithmState.create(config.algorithm(), params).decide(params, now, cost, false);
    }

    @Override
    public Reservation reserve(String key, long cost) {
        config.checkRequest(key, cost);
        checkOpen();
        MemoryReservation r = new MemoryReservation(this, key, cost);
        r.decide(decide(key, cost, r));
        Listeners.decision(listener, this, key, cost, r.decision());
        return r;
    }

    @Override
    public JointDecider jointDecider() {
        return MemoryJoint.INSTANCE;
    }

    /** Retires and drops every state; requests throw from now on. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        sweepLock.lock();
        try {
            for (AlgorithmState s : states) {
                s.lock();
                try {
                    if (!s.retired()) {
                        s.retire();
                        if (states.remove(s)) {
                            size.decrementAndGet();
                        }
                    }
                } finally {
                    s.unlock();
                }
            }
            cursor = null;
        } finally {
            sweepLock.unlock();
        }
    }

    /** Whether {@link #close()} was called. */
    boolean isClosed() {
        return closed;
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("this limiter is closed: " + this);
        }
    }

    boolean cancel(MemoryReservation r) {
        AlgorithmState s = states.get(r.key);
        if (s == null) {
            return false;
        }
        s.lock();
        try {
            long now = now();
            return !s.retired() && s.giveBack(params, now, r.cost, r.place);
        } finally {
            s.unlock();
        }
    }

    private Decision decide(String key, long cost, @Nullable MemoryReservation reservation) {
        while (true) {
            AlgorithmState s = states.get(key);
            if (s != null) {
                if (reservation == null && refusalsWriteNothing) {
                    Decision refused = readOptimistically(s, cost, true);
                    if (refused != null && !refused.allowed()) {
                        return refused;
                    }
                }
                long now = now(); // before the lock, again after a retired state: see the class comment
                Decision d;
                boolean sampled;
                s.lock();
                try {
                    if (s.retired()) {
                        continue;
                    }
                    d = decideOn(s, now, cost, reservation);
                } finally {
                    sampled = s.unlockSampled();
                }
                afterDecision(now, false, sampled);
                return d;
            }
            if (!takeSlot()) {
                long now = now();
                long until = makeRoom(now);
                if (until != ROOM && states.get(key) == null) { // another thread may have just created it
                    return noRoom(until, now);
                }
                continue;
            }
            AlgorithmState fresh = fresh(key);
            long now = 0;
            Decision d = null;
            boolean sampled;
            fresh.lock();
            try {
                if (states.putIfAbsent(fresh) == null) {
                    now = now();
                    if (!fresh.retired()) {
                        d = decideOn(fresh, now, cost, reservation);
                    }
                }
            } finally {
                sampled = fresh.unlockSampled();
            }
            if (d == null) { // another thread inserted the key first (or a sweep ran inside our clock read)
                if (!fresh.retired()) {
                    size.decrementAndGet();
                }
                continue;
            }
            afterDecision(now, true, sampled);
            return d;
        }
    }

    /** A fresh state for {@code key}, bound to it so that the table finds it once added. */
    private AlgorithmState fresh(String key) {
        AlgorithmState s = AlgorithmState.create(config.algorithm(), params);
        s.bind(key);
        return s;
    }

    /** Decides on {@code s}, held by the caller. */
    private Decision decideOn(AlgorithmState s, long now, long cost, @Nullable MemoryReservation reservation) {
        Decision d = s.decide(params, now, cost, true);
        s.noteRefused(!d.allowed());
        if (reservation != null && d.allowed()) {
            reservation.place = s.place(params, now);
        }
        return d;
    }

    /**
     * The answer to a request of {@code cost} that consumes nothing, decided on a copy of {@code s} read without its
     * lock (see {@link AlgorithmState}); null if the read failed (a writer was there, or the state is retired, or
     * cannot be copied) or, with {@code onlyIfRefusing}, the last decision on {@code s} admitted. The caller takes
     * the answer only if it writes nothing: a peek, or a refusal when refusals are not counted; a refusal taken
     * {@code onlyIfRefusing} (a request's) drives the amortized sweep as a decision under the lock does.
     */
    private @Nullable Decision readOptimistically(AlgorithmState s, long cost, boolean onlyIfRefusing) {
        int stamp = s.optimisticStamp(onlyIfRefusing);
        if (stamp == AlgorithmState.NO_STAMP) {
            return null;
        }
        AlgorithmState copy = s.copy();
        long now = now();
        if (copy == null || !s.validate(stamp)) {
            return null;
        }
        Decision d = copy.decide(params, now, cost, false);
        if (onlyIfRefusing && !d.allowed()) {
            afterDecision(now, false, AlgorithmState.sampled(stamp));
        }
        return d;
    }

    // ---- for a joint request (MemoryJoint) --------------------------------------------------------------------------

    /**
     * The state of {@code key}, locked for the caller, created if absent; null if the bound on keys leaves no slot
     * for it (the caller then lets go of every lock it holds and calls {@link #roomFor}).
     */
    @Nullable
    AlgorithmState lockForJoint(String key) {
        while (true) {
            AlgorithmState s = states.get(key);
            if (s != null) {
                s.lock();
                if (!s.retired()) {
                    return s;
                }
                s.unlock();
                continue;
            }
            if (!takeSlot()) {
                return null;
            }
            AlgorithmState fresh = fresh(key);
            fresh.lock();
            if (states.putIfAbsent(fresh) == null) {
                return fresh;
            }
            fresh.unlock();
            size.decrementAndGet();
        }
    }

    /**
     * At the bound, with no lock held: makes room for {@code key} if it can. Null if the caller should try again,
     * else the denial a new key gets now.
     */
    @Nullable
    Decision roomFor(String key) {
        long now = now();
        long until = makeRoom(now);
        if (until == ROOM || states.get(key) != null) {
            return null;
        }
        return noRoom(until, now);
    }

    /**
     * What {@code key} answers in a joint request refused because it has more new keys than the bound has room for:
     * a key held answers as {@link #peek} does; a new one is denied, to retry within a window (by then every key held
     * now that has not been used since is idle, and can be evicted to make room).
     */
    Decision refusedAtBound(String key, long cost) {
        if (states.get(key) != null) {
            return peek(key, cost);
        }
        long window = config.window().toNanos();
        return Decision.denied(config.limit(), 0, window, window);
    }

    /** Decides on {@code s}, held by the caller, at {@code now}. */
    @Override
    public Decision decideHeld(AlgorithmState s, long now, long cost, boolean consume) {
        return s.decide(params, now, cost, consume);
    }

    /** After a joint request let go of its locks: the amortized sweep. */
    void afterJoint(long now) {
        afterDecision(now, false, false);
    }

    /** Counts a decision of a joint request whose release of its key's lock was sampled ({@link #afterDecision}). */
    void sampledJoint() {
        decisions.add(AlgorithmState.SAMPLE);
    }

    RateLimitListener listener() {
        return listener;
    }

    @Override
    public long now() {
        return config.clockNanos();
    }

    /**
     * After a decision: counts it, roughly, for the laps of the sweep, and sweeps. A decision is counted as
     * {@link AlgorithmState#SAMPLE} when its release of the key's lock was sampled ({@code sampled}), else not at all,
     * so that most decisions write no counter shared by every key.
     */
    private void afterDecision(long now, boolean inserted, boolean sampled) {
        if (sampled) {
            decisions.add(AlgorithmState.SAMPLE);
        }
        if (inserted) {
            sweep(now, SWEEP_PER_INSERT, false, false);
        }
        if (now >= nextTick) {
            nextTick = now + TICK_NANOS;
            sweep(now, SWEEP_PER_TICK, false, true);
        }
    }

    /** Counts one more entry unless the bound forbids it. */
    private boolean takeSlot() {
        if (size.incrementAndGet() > maximumKeys) {
            size.decrementAndGet();
            return false;
        }
        return true;
    }

    private Decision noRoom(long until, long now) {
        long wait = until - now;
        return Decision.denied(config.limit(), 0, wait, wait);
    }

    /**
     * At the bound: evicts every idle key. Returns {@link #ROOM} when the caller should try to take a slot again (there
     * is room, or this pass made some, or the slots are held by insertions still in flight), else the earliest time a
     * live key becomes idle, which is after {@code now}.
     */
    private long makeRoom(long now) {
        sweepLock.lock();
        try {
            if (size.get() < maximumKeys) {
                return ROOM;
            }
            if (now < noRoomUntil) {
                return noRoomUntil;
            }
            long earliest = Long.MAX_VALUE;
            boolean evicted = false;
            for (AlgorithmState s : states) {
                long idleAt = evictIfIdle(s, now, 0); // at the bound, at once
                if (idleAt == Long.MIN_VALUE) {
                    evicted = true;
                } else {
                    earliest = Math.min(earliest, idleAt);
                }
            }
            cursor = null;
            nextLapUseful = Long.MIN_VALUE; // the lap was cut short: no bound from it
            if (evicted || earliest == Long.MAX_VALUE || size.get() < maximumKeys) {
                return ROOM;
            }
            noRoomUntil = earliest;
            return earliest;
        } finally {
            sweepLock.unlock();
        }
    }

    /** Examines up to {@code budget} entries from the cursor; with {@code wait}, waits for a concurrent sweep. */
    int sweep(long now, int budget, boolean wait) {
        return sweep(now, budget, wait, true);
    }

    /**
     * Examines up to {@code budget} entries, and at most every entry once, from the cursor. Only a sweep that
     * {@code mayStartLap} restarts an exhausted cursor, and only once: an insertion's sweep just continues the
     * current lap, or else a small table would get a new iterator (an allocation) on nearly every insertion.
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
                    if (cursor != null) { // a lap ended: what it kept is not evictable before this
                        nextLapUseful = lapEarliestIdle;
                        cursor = null;
                    }
                    if (!startLap || !lapDue(now, wait)) {
                        break;
                    }
                    startLap = false;
                    lapStartedAt = now;
                    lapStartDecisions = decisions.sum();
                    lapEntries = size.get();
                    lapEarliestIdle = Long.MAX_VALUE;
                    cursor = states.iterator();
                    if (!cursor.hasNext()) {
                        break;
                    }
                }
                long idleAt = evictIfIdle(cursor.next(), now, keepIdleNanos);
                if (idleAt == Long.MIN_VALUE) {
                    evicted++;
                } else if (idleAt != Long.MAX_VALUE) {
                    long evictable = idleAt > Long.MAX_VALUE - keepIdleNanos ? Long.MAX_VALUE : idleAt + keepIdleNanos;
                    lapEarliestIdle = Math.min(lapEarliestIdle, evictable);
                }
            }
            return evicted;
        } finally {
            sweepLock.unlock();
        }
    }

    /**
     * Whether a new lap may start at {@code now}: always for a full pass ({@code wait}) or the first lap; else once the
     * decisions since the last lap's start have paid for its entries, if by now one of the states it kept may be
     * evictable; else once the clock has moved on by {@code keep}. A state the last lap kept becomes evictable no
     * sooner than that lap found (a decision only moves a state's expiry later); the clock's rule catches the rest (a
     * state made since, a reservation cancelled). So keys that all stay live (a replay's, kept for a day) pay for no
     * lap, and an idle key is still evicted within another {@code keep} and one lap.
     */
    private boolean lapDue(long now, boolean wait) {
        return wait
                || lapEntries < 0
                || (decisions.sum() - lapStartDecisions >= lapEntries && now >= nextLapUseful)
                || now - lapStartedAt >= keepIdleNanos;
    }

    /**
     * Evicts the state if it has been idle for at least {@code keep} at {@code now}: returns MIN_VALUE if it did,
     * MAX_VALUE if it was gone already, else when the state will be idle (which may be past already).
     */
    private long evictIfIdle(AlgorithmState s, long now, long keep) {
        s.lock();
        try {
            if (s.retired()) {
                return Long.MAX_VALUE;
            }
            long expiresAt = s.expiresAt(params);
            // MIN_VALUE: fresh, never used (a state a refused joint request created); now - MIN_VALUE would overflow
            if (expiresAt != Long.MIN_VALUE && (expiresAt > now || now - expiresAt < keep)) {
                return expiresAt;
            }
            s.retire();
            if (states.remove(s)) {
                size.decrementAndGet();
            }
            return Long.MIN_VALUE;
        } finally {
            s.unlock();
        }
    }

    /** Evicts every key idle for {@link InMemoryStore.Builder#keepIdleKeys} now; returns how many. */
    int evictIdle() {
        long now = now();
        return sweep(now, size.get() + 1, true);
    }

    /** Keys held. */
    int keyCount() {
        return size.get();
    }

    @Override
    public String toString() {
        return "InMemoryRateLimiter[" + config.algorithm() + ", " + config.limit() + "/"
                + Durations.format(config.window()) + ", keys=" + size.get() + "]";
    }
}
