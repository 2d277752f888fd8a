package dev.sluice.server.simulate;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.lease.LeasedStore;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.server.replay.VirtualClock;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.sync.SynchronizedStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import org.jspecify.annotations.Nullable;

/**
 * A fleet of service instances in one process on one virtual clock, deciding with the library's own limiters: in
 * exact mode every instance asks one shared limiter (as instances sharing Redis do); in synchronized and leased mode
 * every instance has its own {@link SynchronizedStore} or {@link LeasedStore} over one shared
 * {@link InMemoryCounterStore}, and every {@code interval} the virtual clock runs a round (synchronized: every live
 * instance flushes, then every live instance refreshes; leased: every live instance refreshes). No threads, no sleeps:
 * the same {@link Setup} always gives the same {@link Result}.
 *
 * <p>The measure. Beside the instances, an exact limiter with an unreachable limit (the oracle) is told every admitted
 * request; its {@code remaining} gives the algorithm's own measure {@code M} of everything admitted on a key (the
 * window's count, the sliding tail's estimate, the live sub-windows' sum, the sliding log's count, a bucket's level),
 * which one exact limiter keeps at most the limit {@code L}. The overshoot is how far {@code M} went past {@code L}.
 * A bucket's oracle has {@code K} times the limit over {@code K} times the window: the same rate, so its level (what
 * was taken less what leaked since, never below 0) is the level of a bucket of {@code L}, computed with the same
 * exact arithmetic, but never full.
 *
 * <p>Algorithms. Exact mode runs every algorithm; synchronized and leased mode run those their stores keep (counts per
 * frame that add up across instances), and a setup of another is refused with the store's own reason
 * ({@link #refusal}) rather than simulated with something else.
 *
 * <p>The bound of synchronized mode (docs/sync-mode.md). After a round every live instance has read the store's
 * record, which is everything admitted so far. Until the next round instance {@code j} admits {@code a_j} more, each
 * time within the limit on the record plus its own {@code a_j}. The measure grows by at most one per request, so at
 * every admission {@code M ≤ L + Σa − max a}: the limit, plus what the other instances admitted since the round.
 * {@link Result#worstSlack()} is the least of {@code L + Σa − max a − M} over all admissions. With {@code R·T} offered
 * on a key per interval, spread over {@code n} instances, {@code Σa − max a ≤ ⌊R·T·(n−1)/n⌋}, and never more than
 * {@code (n−1)·L} ({@link Setup#bound()}).
 *
 * <p>Time. Generated requests come one every {@code 1/rate} s, at the middle of each step ({@code step/2},
 * {@code 3·step/2}, ...), so never at the instant of a round; request {@code i} is on key {@code i mod keys}. Rounds
 * come at {@code interval}, {@code 2·interval}, ..., each run before any request at or after its time.
 */
public final class Simulation {

    /** How the instances share a limit. */
    public enum Mode {
        /** Every decision on the shared store: never over the limit, one store call per request. */
        EXACT,
        /** Local decisions, counts shared every interval ({@link SynchronizedStore}). */
        SYNCHRONIZED,
        /** Local decisions within slices claimed from the shared count ({@link LeasedStore}). */
        LEASED
    }

    /** How the requests reach the instances. */
    public enum Traffic {
        /** In turn: instance 1, 2, ..., n, 1, ... */
        EVEN,
        /** Each to an instance drawn at random. */
        RANDOM,
        /** One instance takes 80 %, the others share the rest at random. */
        SKEWED,
        /** No instance holds the keys at the start, and requests at random flood them from the first instant. */
        COLD_FLOOD,
        /** At random, until the last instance dies at {@link Setup#dieAt()}; then at random over the others. */
        INSTANCE_DIES,
        /**
         * A request log's requests at their times, over its keys ({@link #run(Setup, LogTraffic)}; the setup's rate is
         * the log's mean, its keys and duration the log's).
         */
        LOG
    }

    /** 2026-01-01T12:00:00Z: the virtual clock's start, aligned to every window of a whole number of seconds. */
    static final Instant START = Instant.parse("2026-01-01T12:00:00Z");

    private static final long START_NANOS = START.getEpochSecond() * 1_000_000_000L;

    private static final long ORACLE_LIMIT = 1L << 40;
    /** How many windows a bucket's oracle spans ({@code K} in the class comment), at most. */
    private static final long BUCKET_SCALE = 1L << 20;

    private static final long SECOND = 1_000_000_000L;

    /**
     * One run's setup.
     *
     * @param limit    requests per {@code window} on each key
     * @param rate     requests per second offered over all keys
     * @param keys     how many keys the requests go to in turn (each has its own limit)
     * @param duration how long the run lasts on the virtual clock
     * @param seed     the seed of the random choices (the instance of each request)
     * @param dieAt    when the last instance dies ({@link Traffic#INSTANCE_DIES} only; null: half-way)
     */
    public record Setup(
            Mode mode,
            Algorithm algorithm,
            int instances,
            Duration interval,
            long limit,
            Duration window,
            Traffic traffic,
            int rate,
            int keys,
            Duration duration,
            long seed,
            @Nullable Duration dieAt) {

        /** The algorithms every mode simulates: the ones whose counts per frame add up across instances. */
        public static final List<Algorithm> ALGORITHMS =
                List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER, Algorithm.SLIDING_TAIL);

        /** The algorithms exact mode alone simulates, as only an exact-mode store keeps them. */
        public static final List<Algorithm> EXACT_ONLY =
                List.of(Algorithm.SLIDING_LOG, Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET);

        /**
         * @throws IllegalArgumentException naming the bad value: fewer than one instance, key or request per second,
         *     more than a billion requests per second, an algorithm the mode does not run
         *     ({@link Simulation#refusal}), a duration shorter than the window, a dying instance with fewer than two or
         *     outside the run
         */
        public Setup {
            Objects.requireNonNull(mode, "mode");
            Objects.requireNonNull(algorithm, "algorithm");
            Objects.requireNonNull(traffic, "traffic");
            positive("instances", instances);
            positive("limit", limit);
            positive("keys", keys);
            if (rate < 1 || rate > SECOND) {
                throw new IllegalArgumentException("rate must be from 1 to 1000000000 a second, was " + rate);
            }
            String refusal = refusal(mode, algorithm);
            if (refusal != null) {
                throw new IllegalArgumentException(refusal);
            }
            positive("interval", interval);
            positive("window", window);
            positive("duration", duration);
            if (duration.compareTo(window) < 0) {
                throw new IllegalArgumentException(
                        "duration must be at least the window (" + window + "), was " + duration);
            }
            if (traffic == Traffic.INSTANCE_DIES) {
                if (instances < 2) {
                    throw new IllegalArgumentException("an instance can die only among 2 or more, was " + instances);
                }
                if (dieAt != null && (dieAt.isNegative() || dieAt.compareTo(duration) >= 0)) {
                    throw new IllegalArgumentException(
                            "the instance must die within the run (" + duration + "), was at " + dieAt);
                }
            }
        }

        /** {@code n} instances, rounds every {@code interval}, a limit of 50 a second, 500 a second offered evenly. */
        public static Setup of(Mode mode, Algorithm algorithm, int instances, Duration interval) {
            return new Setup(
                    mode,
                    algorithm,
                    instances,
                    interval,
                    50,
                    Duration.ofSeconds(1),
                    Traffic.EVEN,
                    500,
                    1,
                    Duration.ofSeconds(20),
                    1,
                    null);
        }

        public Setup mode(Mode m) {
            return new Setup(
                    m, algorithm, instances, interval, limit, window, traffic, rate, keys, duration, seed, dieAt);
        }

        public Setup limit(long l) {
            return new Setup(
                    mode, algorithm, instances, interval, l, window, traffic, rate, keys, duration, seed, dieAt);
        }

        public Setup traffic(Traffic t) {
            return new Setup(mode, algorithm, instances, interval, limit, window, t, rate, keys, duration, seed, dieAt);
        }

        public Setup traffic(Traffic t, long s) {
            return new Setup(mode, algorithm, instances, interval, limit, window, t, rate, keys, duration, s, dieAt);
        }

        public Setup rate(int r) {
            return new Setup(
                    mode, algorithm, instances, interval, limit, window, traffic, r, keys, duration, seed, dieAt);
        }

        public Setup keys(int k) {
            return new Setup(
                    mode, algorithm, instances, interval, limit, window, traffic, rate, k, duration, seed, dieAt);
        }

        public Setup seconds(int s) {
            return new Setup(
                    mode,
                    algorithm,
                    instances,
                    interval,
                    limit,
                    window,
                    traffic,
                    rate,
                    keys,
                    Duration.ofSeconds(s),
                    seed,
                    dieAt);
        }

        /** The time the last instance dies: {@link #dieAt()}, or half-way through the run. */
        public Duration deathTime() {
            return dieAt != null ? dieAt : duration.dividedBy(2);
        }

        /** The windows of the run: {@code ⌈duration / window⌉}. */
        public int windows() {
            long d = duration.toNanos();
            long w = window.toNanos();
            return (int) Math.min(Integer.MAX_VALUE, (d + w - 1) / w);
        }

        /**
         * {@code L + min(⌊R·T·(n−1)/n⌋, (n−1)·L)}, {@code R} the rate on one key: what synchronized mode's measure
         * never exceeds while every instance lives.
         */
        public long bound() {
            long perInterval = (long) rate * interval.toNanos() / SECOND / keys;
            return limit + Math.min(perInterval * (instances - 1) / instances, (long) (instances - 1) * limit);
        }

        @Override
        public String toString() {
            return Names.of(mode) + ", " + instances + (instances == 1 ? " instance" : " instances")
                    + (mode == Mode.EXACT ? "" : ", a round every " + Names.of(interval)) + ", "
                    + Names.of(algorithm) + " " + limit + " per " + Names.of(window) + ", "
                    + (traffic == Traffic.LOG
                            ? "traffic from a log (" + rate + "/s on average)"
                            : Names.of(traffic) + " traffic at " + rate + "/s")
                    + " over " + keys + (keys == 1 ? " key" : " keys") + ", "
                    + Names.of(duration) + (traffic == Traffic.EVEN ? "" : ", seed " + seed)
                    + (traffic == Traffic.INSTANCE_DIES ? ", the last instance dies at " + Names.of(deathTime()) : "");
        }

        private static void positive(String name, long value) {
            if (value < 1) {
                throw new IllegalArgumentException(name + " must be at least 1, was " + value);
            }
        }

        private static void positive(String name, Duration value) {
            Objects.requireNonNull(value, name);
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, was " + value);
            }
        }
    }

    /** One run's outcome; every array has one element per window {@code [w·W, (w+1)·W)} of the run. */
    public static final class Result {
        private final Setup setup;
        private final long[] offered;
        private final long[] admitted;
        private final long[] peak;
        private final long[] calls;
        private final int[] activeKeys;
        private final long peakMeasure;
        private final long worstSlack;
        private final long storeCalls;
        private final long rounds;
        private final long conflicts;
        private final long[] perInstance;

        Result(
                Setup setup,
                long[] offered,
                long[] admitted,
                long[] peak,
                long[] calls,
                int[] activeKeys,
                long peakMeasure,
                long worstSlack,
                long storeCalls,
                long rounds,
                long conflicts,
                long[] perInstance) {
            this.setup = setup;
            this.offered = offered;
            this.admitted = admitted;
            this.peak = peak;
            this.calls = calls;
            this.activeKeys = activeKeys;
            this.peakMeasure = peakMeasure;
            this.worstSlack = worstSlack;
            this.storeCalls = storeCalls;
            this.rounds = rounds;
            this.conflicts = conflicts;
            this.perInstance = perInstance;
        }

        public Setup setup() {
            return setup;
        }

        /** Requests offered in each window. */
        public long[] offered() {
            return offered.clone();
        }

        /** Requests admitted in each window. */
        public long[] admitted() {
            return admitted.clone();
        }

        /** The largest measure of any key after an admission in each window (0 if none). */
        public long[] peak() {
            return peak.clone();
        }

        /** Counter store calls of all instances in each window (exact mode: one per request). */
        public long[] calls() {
            return calls.clone();
        }

        /** Keys offered a request in each window. */
        public int[] activeKeys() {
            return activeKeys.clone();
        }

        /** The largest measure over the run. */
        public long peakMeasure() {
            return peakMeasure;
        }

        /** The least of {@code L + Σa − max a − M} over all admissions (see the class comment). */
        public long worstSlack() {
            return worstSlack;
        }

        /** Counter store calls of all instances over the run. */
        public long storeCalls() {
            return storeCalls;
        }

        /** Rounds run (per live instance). */
        public long rounds() {
            return rounds;
        }

        /** Writes refused because another instance had written first, over all instances. */
        public long conflicts() {
            return conflicts;
        }

        /** Admitted by each instance over the run. */
        public long[] perInstance() {
            return perInstance.clone();
        }

        /** Requests offered in window {@code w}. */
        public long offered(int w) {
            return offered[w];
        }

        /** Requests admitted in window {@code w}. */
        public long admitted(int w) {
            return admitted[w];
        }

        /** The largest measure of any key after an admission in window {@code w} (0 if none). */
        public long peak(int w) {
            return peak[w];
        }

        /** How many windows the run has. */
        public int windows() {
            return admitted.length;
        }

        /** Admitted over the run. */
        public long totalAdmitted() {
            return Arrays.stream(admitted).sum();
        }

        /** Offered over the run. */
        public long totalOffered() {
            return Arrays.stream(offered).sum();
        }

        /** Admitted per window, on average. */
        public double meanPerWindow() {
            return (double) totalAdmitted() / admitted.length;
        }

        /** The most admitted in one window. */
        public long maxPerWindow() {
            return Arrays.stream(admitted).max().orElse(0);
        }

        /** The least admitted in one window. */
        public long minPerWindow() {
            return Arrays.stream(admitted).min().orElse(0);
        }

        /** How far the measure went past the limit in window {@code w}, or 0. */
        public long overshoot(int w) {
            return Math.max(0, peak[w] - setup.limit());
        }

        /** How far the measure went past the limit over the run, or 0. */
        public long worstOvershoot() {
            return Math.max(0, peakMeasure - setup.limit());
        }

        /** Admitted in window {@code w} as a share of the limit of every key offered a request in it (0 if none). */
        public double share(int w) {
            return activeKeys[w] == 0 ? 0 : (double) admitted[w] / (setup.limit() * activeKeys[w]);
        }

        /** Admitted over the run as a share of the limit of the keys offered requests, window by window. */
        public double share() {
            long capacity = 0;
            for (int k : activeKeys) {
                capacity += k * setup.limit();
            }
            return capacity == 0 ? 0 : (double) totalAdmitted() / capacity;
        }

        /** Counter store calls per instance per interval, over the run. */
        public double callsPerInstancePerInterval() {
            return (double) storeCalls / setup.instances() / Math.max(1, rounds);
        }

        /** Counter store calls per instance per interval in window {@code w}. */
        public double callsPerInstancePerInterval(int w) {
            double intervals =
                    (double) setup.window().toNanos() / setup.interval().toNanos();
            return calls[w] / (double) setup.instances() / intervals;
        }

        /**
         * Jain's fairness index of what each instance admitted: 1 when all admitted the same, {@code 1/n} when one
         * admitted everything. Meaningful where every instance is asked about the same (the even and random traffic).
         */
        public double fairness() {
            double sum = 0;
            double squares = 0;
            for (long a : perInstance) {
                sum += a;
                squares += (double) a * a;
            }
            return squares == 0 ? 1 : sum * sum / (perInstance.length * squares);
        }
    }

    private Simulation() {}

    /**
     * Why {@code mode} cannot run {@code algorithm}, as its store says it (naming the mode, the algorithm and the
     * algorithms it runs); null if it can. Exact mode runs every algorithm.
     */
    public static @Nullable String refusal(Mode mode, Algorithm algorithm) {
        Objects.requireNonNull(algorithm, "algorithm");
        Map<Algorithm, String> refused = REFUSALS.get(Objects.requireNonNull(mode, "mode"));
        return Objects.requireNonNull(refused, "every mode has its entry").get(algorithm);
    }

    /** Per mode, per algorithm, why its store refuses it; no entry for what it keeps. Asked once of each store. */
    private static final Map<Mode, Map<Algorithm, String>> REFUSALS = refusals();

    private static Map<Mode, Map<Algorithm, String>> refusals() {
        Map<Mode, Map<Algorithm, String>> byMode = new EnumMap<>(Mode.class);
        for (Mode mode : Mode.values()) {
            RateLimitStore store =
                    switch (mode) {
                        case EXACT -> InMemoryStore.create();
                        case SYNCHRONIZED -> SynchronizedStore.builder(InMemoryCounterStore.create())
                                .manualRounds()
                                .build();
                        case LEASED -> LeasedStore.builder(InMemoryCounterStore.create())
                                .manualRounds()
                                .build();
                    };
            Map<Algorithm, String> refused = new EnumMap<>(Algorithm.class);
            for (Algorithm a : Algorithm.values()) {
                String why = store.refusal(a);
                if (why != null) {
                    refused.put(a, why);
                }
            }
            byMode.put(mode, refused);
        }
        return byMode;
    }

    /**
     * Runs {@code s}.
     *
     * @throws IllegalArgumentException if its traffic is {@link Traffic#LOG}
     */
    public static Result run(Setup s) {
        if (s.traffic() == Traffic.LOG) {
            throw new IllegalArgumentException("log traffic needs its log");
        }
        return new Run(s, null).run();
    }

    /** Runs {@code s} on the requests of {@code log}, spread over the instances as it says. */
    static Result run(Setup s, LogTraffic log) {
        if (s.traffic() != Traffic.LOG || s.keys() != log.keys()) {
            throw new IllegalArgumentException(
                    "a log's setup has log traffic over the log's " + log.keys() + " keys, was " + s);
        }
        return new Run(s, log).run();
    }

    /** One run's state. */
    private static final class Run {
        private final Setup s;
        private final @Nullable LogTraffic log;
        private final VirtualClock clock = new VirtualClock(START_NANOS);
        private final List<SynchronizedStore> synced = new ArrayList<>();
        private final List<LeasedStore> leased = new ArrayList<>();
        private final RateLimiter[] limiters;
        private final RateLimiter oracle;
        private final long oracleLimit;
        private final String[] keys;
        private final int windows;
        private final long windowNanos;
        private final long[] offered;
        private final long[] admitted;
        private final long[] peak;
        private final long[] calls;
        private final int[] activeKeys;
        private final long[] perInstance;
        /** The round each key's admissions since a round were counted in ({@code sinceRound}, {@code sum}, {@code max}). */
        private final long[] keyRound;

        private final long[][] sinceRound;
        private final long[] sum;
        private final long[] max;
        private final int[] lastWindowOf;
        private long exactCalls;

        Run(Setup s, @Nullable LogTraffic log) {
            this.s = s;
            this.log = log;
            int n = s.instances();
            limiters = new RateLimiter[n];
            if (s.mode() == Mode.EXACT) {
                RateLimiter shared = limiter(s.limit(), s.window(), InMemoryStore.create());
                Arrays.fill(limiters, shared);
            } else {
                InMemoryCounterStore counters = InMemoryCounterStore.create();
                for (int j = 0; j < n; j++) {
                    RateLimitStore store;
                    if (s.mode() == Mode.SYNCHRONIZED) {
                        SynchronizedStore y = SynchronizedStore.builder(counters)
                                .interval(s.interval())
                                .manualRounds()
                                .build();
                        synced.add(y);
                        store = y;
                    } else {
                        LeasedStore l = LeasedStore.builder(counters)
                                .interval(s.interval())
                                .manualRounds()
                                .build();
                        leased.add(l);
                        store = l;
                    }
                    limiters[j] = limiter(s.limit(), s.window(), store);
                }
            }
            if (s.algorithm() == Algorithm.TOKEN_BUCKET || s.algorithm() == Algorithm.LEAKY_BUCKET) {
                long scale = Math.max(
                        2,
                        Math.min(
                                BUCKET_SCALE,
                                LimiterConfig.MAX_WINDOW.toNanos() / s.window().toNanos()));
                oracleLimit = Math.multiplyExact(s.limit(), scale);
                oracle = limiter(oracleLimit, s.window().multipliedBy(scale), InMemoryStore.create());
            } else {
                oracleLimit = ORACLE_LIMIT;
                oracle = limiter(ORACLE_LIMIT, s.window(), InMemoryStore.create());
            }
            keys = new String[s.keys()];
            for (int k = 0; k < keys.length; k++) {
                keys[k] = log != null ? log.keyName(k) : "key-" + k;
            }
            if (s.traffic() != Traffic.COLD_FLOOD) {
                for (RateLimiter limiter : s.mode() == Mode.EXACT ? new RateLimiter[] {limiters[0]} : limiters) {
                    for (String key : keys) {
                        limiter.peek(key, 1); // the steady state: every instance has served every key before
                    }
                }
            }
            windows = s.windows();
            windowNanos = s.window().toNanos();
            offered = new long[windows];
            admitted = new long[windows];
            peak = new long[windows];
            calls = new long[windows];
            activeKeys = new int[windows];
            perInstance = new long[n];
            keyRound = new long[keys.length];
            Arrays.fill(keyRound, -1);
            sinceRound = new long[keys.length][];
            sum = new long[keys.length];
            max = new long[keys.length];
            lastWindowOf = new int[keys.length];
            Arrays.fill(lastWindowOf, -1);
        }

        private RateLimiter limiter(long limit, Duration window, RateLimitStore store) {
            RateLimiterBuilder b =
                    RateLimiter.builder(s.algorithm()).limit(limit, window).clock(clock);
            if (s.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER) {
                b.buckets(10);
            }
            return b.store(store).build();
        }

        Result run() {
            int n = s.instances();
            long step = SECOND / s.rate();
            long interval = s.interval().toNanos();
            long end = s.duration().toNanos();
            long deathNanos =
                    s.traffic() == Traffic.INSTANCE_DIES ? s.deathTime().toNanos() : Long.MAX_VALUE;
            Random random = new Random(s.seed());
            long peakMeasure = 0;
            long worstSlack = Long.MAX_VALUE;
            long nextRound = interval;
            long rounds = 0;
            int window = 0;
            long callsBefore = storeCalls();
            long callsAtWindowStart = callsBefore;
            long requests = log != null ? log.size() : Math.max(0, (end - step / 2 + step - 1) / step);
            for (long request = 0; request < requests; request++) {
                long t = log != null ? log.nanos((int) request) : step / 2 + request * step;
                int live = t < deathNanos ? n : n - 1;
                while (nextRound <= t) {
                    while (nextRound >= (window + 1) * windowNanos) {
                        long c = storeCalls();
                        calls[window++] = c - callsAtWindowStart;
                        callsAtWindowStart = c;
                    }
                    at(nextRound);
                    int liveAtRound = nextRound < deathNanos ? n : n - 1;
                    round(liveAtRound);
                    rounds++;
                    nextRound += interval;
                }
                while (t >= (window + 1) * windowNanos) {
                    long c = storeCalls();
                    calls[window++] = c - callsAtWindowStart;
                    callsAtWindowStart = c;
                }
                at(t);
                int k = log != null ? log.key((int) request) : (int) (request % keys.length);
                int j = instance(request, live, random);
                offered[window]++;
                if (lastWindowOf[k] != window) {
                    lastWindowOf[k] = window;
                    activeKeys[window]++;
                }
                if (s.mode() == Mode.EXACT) {
                    exactCalls++;
                }
                if (!limiters[j].tryAcquire(keys[k]).allowed()) {
                    continue;
                }
                if (!oracle.tryAcquire(keys[k]).allowed()) {
                    throw new IllegalStateException("the measure's limiter refused a request: " + s);
                }
                long measure = oracleLimit - oracle.peek(keys[k], 1).remaining();
                admitted[window]++;
                perInstance[j]++;
                peak[window] = Math.max(peak[window], measure);
                peakMeasure = Math.max(peakMeasure, measure);
                if (keyRound[k] != rounds) {
                    keyRound[k] = rounds;
                    if (sinceRound[k] == null) {
                        sinceRound[k] = new long[n];
                    } else {
                        Arrays.fill(sinceRound[k], 0);
                    }
                    sum[k] = 0;
                    max[k] = 0;
                }
                sum[k]++;
                max[k] = Math.max(max[k], ++sinceRound[k][j]);
                worstSlack = Math.min(worstSlack, s.limit() + sum[k] - max[k] - measure);
            }
            while (window < windows) {
                long c = storeCalls();
                calls[window++] = c - callsAtWindowStart;
                callsAtWindowStart = c;
            }
            long conflicts = 0;
            for (SynchronizedStore y : synced) {
                conflicts += y.stats().conflicts();
            }
            for (LeasedStore l : leased) {
                conflicts += l.stats().conflicts();
            }
            return new Result(
                    s,
                    offered,
                    admitted,
                    peak,
                    calls,
                    activeKeys,
                    peakMeasure,
                    worstSlack == Long.MAX_VALUE ? s.limit() : worstSlack,
                    storeCalls() - callsBefore,
                    rounds,
                    conflicts,
                    perInstance);
        }

        private void at(long nanos) {
            clock.setNanos(START_NANOS + nanos);
        }

        /** A round on the first {@code live} instances. */
        private void round(int live) {
            for (int j = 0; j < leased.size() && j < live; j++) {
                leased.get(j).refresh();
            }
            for (int j = 0; j < synced.size() && j < live; j++) {
                synced.get(j).flush();
            }
            for (int j = 0; j < synced.size() && j < live; j++) {
                synced.get(j).refresh();
            }
        }

        /** The instance of request {@code i}, among the first {@code live}. */
        private int instance(long i, int live, Random random) {
            LogTraffic l = log;
            if (l != null) {
                return l.routed((int) i) ? l.instance((int) i, live) : random.nextInt(live);
            }
            return switch (s.traffic()) {
                case EVEN -> (int) (i % live);
                case SKEWED -> random.nextInt(10) < 8 || live == 1 ? 0 : 1 + random.nextInt(live - 1);
                case RANDOM, COLD_FLOOD, INSTANCE_DIES, LOG -> random.nextInt(live);
            };
        }

        private long storeCalls() {
            long c = exactCalls;
            for (SynchronizedStore y : synced) {
                c += y.stats().storeCalls();
            }
            for (LeasedStore l : leased) {
                c += l.stats().storeCalls();
            }
            return c;
        }
    }
}
