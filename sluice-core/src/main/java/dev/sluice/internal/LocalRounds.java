package dev.sluice.internal;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.algorithm.FrameStates;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import dev.sluice.spi.Durations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The spine of synchronized and leased mode, the two modes whose limiters decide in memory and share their counts
 * through a {@link CounterStore}: which algorithms they keep, their limiters (bound, and released when they close),
 * their joint decider, the round lock, the background thread and what happens when a round throws, and the batched
 * read and compare-and-set of their keys' records with one batching rule. Each mode brings its round, what a closing
 * limiter hands over ({@link #start}), what it writes and how it takes what it reads ({@link PreparedWrite},
 * {@link Settle}).
 *
 * <p>The batching rule: a call to the counter store carries at most {@code batchSize} keys, all of one limiter, in the
 * order they were given. One limiter's keys share one shape, which the {@link CounterStore} contract promises a call
 * (a MongoDB store keeps a shape in a collection of its own), and a round goes limiter by limiter anyway; so a round
 * over {@code n} keys of one limiter makes {@code ceil(n / batchSize)} calls of each kind.
 *
 * <p>Thread-safe; the rounds hold {@link #round()} while they read and write.
 *
 * @param <L> the mode's limiter
 */
public final class LocalRounds<L extends LocalLimiter<?>> {

    /** How many times one round writes a key whose write met a conflict, re-reading it in between. */
    public static final int CONFLICT_ROUNDS = 4;

    /** What a write of several keys came to. */
    public enum Written {
        /** Every key was written (or had nothing to write). */
        ALL,
        /** Some keys still met a conflict after {@link #CONFLICT_ROUNDS} writes; no call failed. */
        CONFLICTS_LEFT,
        /** A call failed: the round stopped there. */
        CALL_FAILED
    }

    /** How a mode prepares the write of a key. */
    @FunctionalInterface
    public interface Prepare<K, W> {
        /** The write for {@code key}; null if it has nothing to write. */
        @Nullable
        W write(K key);
    }

    /** How a mode takes the outcome of each write it prepared. */
    public interface Settle<W> {
        /** The write was applied. */
        void applied(W w);

        /** Another instance wrote first: nothing was written. */
        void conflicted(W w);

        /** The call carrying the write failed: it may or may not have been applied. */
        void unknown(W w);
    }

    private final String mode;
    private final CounterStore counterStore;
    private final CounterStoreCalls calls;
    private final Duration interval;
    private final int batchSize;
    private final @Nullable Duration idleTimeout;
    private final RateLimitListener listener;
    private final LongSupplier versions;
    private final boolean manual;
    private final List<L> limiters = new CopyOnWriteArrayList<>();
    private final ReentrantLock round = new ReentrantLock();
    private @Nullable BackgroundRounds background;
    private @Nullable JointDecider joint;
    private @Nullable Consumer<? super L> handOver;
    private volatile boolean closed;

    /**
     * The spine of a store of {@code mode} ("synchronized", "leased") over {@code counterStore}, with its builder's
     * settings; with {@code manual}, no background thread: the application runs the rounds.
     */
    public LocalRounds(
            String mode,
            CounterStore counterStore,
            Duration interval,
            int batchSize,
            @Nullable Duration idleTimeout,
            RateLimitListener listener,
            LongSupplier versions,
            boolean manual) {
        this.mode = mode;
        this.counterStore = Objects.requireNonNull(counterStore, "counterStore must not be null");
        this.calls = new CounterStoreCalls(counterStore, listener);
        this.interval = interval;
        this.batchSize = batchSize;
        this.idleTimeout = idleTimeout;
        this.listener = listener;
        this.versions = versions;
        this.manual = manual;
    }

    // ---- binding ------------------------------------------------------------------------------------------------

    /** The algorithms both modes keep: those whose state is counts per frame, which add up across instances. */
    public Set<Algorithm> algorithms() {
        return FrameStates.ALGORITHMS;
    }

    /** Why the mode does not keep {@code algorithm}; null if it does. */
    public @Nullable String refusal(Algorithm algorithm) {
        return algorithms().contains(algorithm)
                ? null
                : mode + " mode supports " + AlgorithmList.of(algorithms()) + ", not " + algorithm
                        + ": its state is not counts per frame that add up across instances (use an exact-mode store"
                        + " for it)";
    }

    /**
     * A limiter with {@code config}, made by {@code create} from the configuration and the idle timeout in nanoseconds
     * (the builder's, else the limiter's window), and held from now on.
     *
     * @throws IllegalArgumentException if the mode does not keep the algorithm, with {@link #refusal} as its message
     */
    public <T extends L> T bind(LimiterConfig config, BiFunction<LimiterConfig, Long, T> create) {
        Objects.requireNonNull(config, "config must not be null");
        String refusal = refusal(config.algorithm());
        if (refusal != null) {
            throw new IllegalArgumentException(refusal);
        }
        T limiter = create.apply(config, (idleTimeout != null ? idleTimeout : config.window()).toNanos());
        limiters.add(limiter);
        return limiter;
    }

    /** The limiters held, for the rounds to go through. */
    public List<L> limiters() {
        return limiters;
    }

    /**
     * Closes {@code limiter}, under the round lock: lets go of it and has the mode hand over its keys (what
     * {@link #start} was given). Idempotent: a limiter let go of already is left alone.
     */
    public void release(LocalLimiter<?> limiter) {
        Consumer<? super L> h = Objects.requireNonNull(handOver, "a store starts before it binds a limiter");
        round.lock();
        try {
            for (L l : limiters) {
                if (l == limiter) {
                    limiters.remove(l);
                    h.accept(l);
                    return;
                }
            }
        } finally {
            round.unlock();
        }
    }

    /** The joint decider of every limiter of the store: the one {@link #start} was given. */
    public JointDecider joint() {
        return Objects.requireNonNull(joint, "a store starts before it binds a limiter");
    }

    // ---- the rounds -----------------------------------------------------------------------------------------------

    /** The lock every round, and every close, holds while it reads and writes: one at a time. */
    public ReentrantLock round() {
        return round;
    }

    /**
     * Starts the store, once, from its constructor: {@code joint} decides the joint requests of its limiters,
     * {@code handOver} takes over the keys of a limiter that closes ({@link #release}), and the background thread runs
     * {@code round} every interval, unless the rounds are manual: then the application runs them itself.
     */
    public void start(JointDecider joint, Consumer<? super L> handOver, Runnable round) {
        this.joint = Objects.requireNonNull(joint, "joint must not be null");
        this.handOver = Objects.requireNonNull(handOver, "handOver must not be null");
        if (!manual) {
            BackgroundRounds b = new BackgroundRounds("sluice-" + mode, this::roundFailed);
            b.every(interval, round);
            background = b;
        }
    }

    /**
     * Runs one round of the store, or a part of one that the application may run alone (a flush, a refresh): under the
     * round lock, so one at a time whether the background thread or a caller runs it, counted in {@code count}.
     *
     * @return the round's answer: whether it did all it had to
     */
    public boolean runRound(LongAdder count, BooleanSupplier work) {
        round.lock();
        try {
            count.increment();
            return work.getAsBoolean();
        } finally {
            round.unlock();
        }
    }

    /** Runs {@code task} every {@code every} too, on the background thread if there is one. */
    public void alsoEvery(Duration every, Runnable task) {
        BackgroundRounds b = background;
        if (b != null) {
            b.every(every, task);
        }
    }

    /** Marks the store closed and stops the background thread, waiting up to one interval for a round under way. */
    public void stop() {
        closed = true;
        BackgroundRounds b = background;
        if (b != null) {
            b.stop(interval);
        }
    }

    /** Whether {@link #stop()} was called. */
    public boolean closed() {
        return closed;
    }

    /** Whether a background thread runs the rounds. */
    public boolean background() {
        return background != null;
    }

    /**
     * A round that threw (not a call to the counter store, which reports its own failure): counted and told to the
     * store's listener as a failure; the next round runs as usual.
     */
    private void roundFailed(RuntimeException e) {
        calls.failedOutsideCalls(CounterStoreCalls.wrap("a background round of the " + mode + " store failed", e));
    }

    // ---- reading and writing records, in batches ------------------------------------------------------------------

    /** The calls to the counter store. */
    public CounterStoreCalls calls() {
        return calls;
    }

    /** A version for a write expecting {@code expected}: drawn until it is neither that nor {@code ABSENT}. */
    public long nextVersion(long expected) {
        long v;
        do {
            v = versions.getAsLong();
        } while (v == CounterSnapshot.ABSENT || v == expected);
        return v;
    }

    /**
     * Reads the records of {@code keys} in batches and hands each to {@code loaded}.
     *
     * @param caller the limiter whose request makes the calls, null for a round's
     * @return false if a call failed (the keys of the later batches were not read)
     */
    public <K extends CountedKey> boolean load(
            List<K> keys, @Nullable RateLimiter caller, BiConsumer<K, CounterSnapshot> loaded) {
        for (List<K> batch : batches(keys)) {
            List<CounterKey> ids = new ArrayList<>(batch.size());
            for (K k : batch) {
                ids.add(k.id());
            }
            List<CounterSnapshot> snapshots;
            try {
                snapshots = calls.load(ids, caller);
            } catch (SluiceException e) {
                return false;
            }
            for (int j = 0; j < batch.size(); j++) {
                loaded.accept(batch.get(j), snapshots.get(j));
            }
        }
        return true;
    }

    /**
     * Reads {@code readFirst}, then writes what {@code prepare} makes of each of {@code keys} in batches, and reads
     * and writes again those that met a conflict, up to {@link #CONFLICT_ROUNDS} writes. Each outcome goes to
     * {@code settle}; each record read to {@code loaded}. A failed call stops it: the writes of that call are
     * {@link Settle#unknown}, and later batches are not sent.
     *
     * @param caller the limiter whose request makes the calls, null for a round's
     */
    public <K extends CountedKey, W extends PreparedWrite<K>> Written writeAll(
            List<K> readFirst,
            List<K> keys,
            @Nullable RateLimiter caller,
            BiConsumer<K, CounterSnapshot> loaded,
            Prepare<K, W> prepare,
            Settle<W> settle) {
        if (!load(readFirst, caller, loaded)) {
            return Written.CALL_FAILED;
        }
        List<K> todo = keys;
        for (int attempt = 1; ; attempt++) {
            List<K> conflicted = new ArrayList<>();
            if (!write(todo, caller, prepare, settle, conflicted)) {
                return Written.CALL_FAILED;
            }
            if (conflicted.isEmpty()) {
                return Written.ALL;
            }
            if (attempt == CONFLICT_ROUNDS) {
                return Written.CONFLICTS_LEFT;
            }
            if (!load(conflicted, caller, loaded)) {
                return Written.CALL_FAILED;
            }
            todo = conflicted;
        }
    }

    private <K extends CountedKey, W extends PreparedWrite<K>> boolean write(
            List<K> keys, @Nullable RateLimiter caller, Prepare<K, W> prepare, Settle<W> settle, List<K> conflicted) {
        for (List<K> batch : batches(keys)) {
            List<W> flights = new ArrayList<>(batch.size());
            List<CounterWrite> writes = new ArrayList<>(batch.size());
            for (K k : batch) {
                W w = prepare.write(k);
                if (w != null) {
                    flights.add(w);
                    writes.add(w.write());
                }
            }
            if (flights.isEmpty()) {
                continue;
            }
            boolean[] applied;
            try {
                applied = calls.compareAndSet(writes, caller);
            } catch (SluiceException e) {
                flights.forEach(settle::unknown);
                return false;
            }
            for (int j = 0; j < applied.length; j++) {
                W w = flights.get(j);
                if (applied[j]) {
                    settle.applied(w);
                } else {
                    settle.conflicted(w);
                    conflicted.add(w.key());
                }
            }
        }
        return true;
    }

    /** {@code keys} cut into the batches of the calls: see the class comment. */
    private <K extends CountedKey> List<List<K>> batches(List<K> keys) {
        Map<Object, List<K>> byLimiter = new LinkedHashMap<>();
        for (K k : keys) {
            byLimiter.computeIfAbsent(k.limiter(), l -> new ArrayList<>()).add(k);
        }
        List<List<K>> batches = new ArrayList<>();
        for (List<K> group : byLimiter.values()) {
            for (int from = 0; from < group.size(); from += batchSize) {
                batches.add(group.subList(from, Math.min(group.size(), from + batchSize)));
            }
        }
        return batches;
    }

    // ---- settings -------------------------------------------------------------------------------------------------

    /** The interval of the background round. */
    public Duration interval() {
        return interval;
    }

    /** The most records in one call. */
    public int batchSize() {
        return batchSize;
    }

    /** The store's listener. */
    public RateLimitListener listener() {
        return listener;
    }

    /** What the store's {@code toString} starts with: the counter store, the interval and the batch size. */
    public String describe() {
        return counterStore + ", every " + Durations.format(interval) + ", batches of " + batchSize
                + (background == null ? ", manual" : "");
    }
}
