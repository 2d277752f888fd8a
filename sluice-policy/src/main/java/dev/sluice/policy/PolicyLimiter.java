package dev.sluice.policy;

import dev.sluice.RateLimitListener;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.spi.Durations;
import dev.sluice.spi.RateLimitStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import org.jspecify.annotations.Nullable;

/**
 * Enforces {@link Policies} on a store: {@link #check(String, List, long)} answers whether a request may proceed.
 *
 * <pre>{@code
 * PolicyLimiter limiter = PolicyLimiter.builder(Policies.load(Path.of("/etc/ratelimit")))
 *         .store(redisStore)
 *         .meterRegistry(registry)
 *         .build();
 * Verdict v = limiter.check("oauth-token",
 *         OAuthDescriptors.forTokenRequest("password", "abc", "bob"), 1);
 * if (!v.allowed()) {
 *     // 429, Retry-After: v.retryAfter()
 * }
 * }</pre>
 *
 * <p>A request passes only if every limit it touches passes: all of its descriptors, all limits of each rule, each at
 * its descriptor's cost. A refused request consumes from none of them. When the store fails, the domain's
 * {@code on_store_failure} answers, inside the check: the {@link Verdict} is the whole answer at every front door. Limits in {@link Mode#DRY_RUN} and {@link Mode#SHADOW_BAN} never
 * refuse the caller; they are counted only when the enforced limits pass (see {@code docs/policies.md}).
 *
 * <p>Thread-safe. The configuration in force is one immutable engine behind one volatile reference: a check sees
 * the configuration before a {@link #update reload} or the one after, whole, never a mix.
 */
public final class PolicyLimiter implements AutoCloseable {

    /** The default of {@link Builder#recentResolutions(int)}. */
    public static final int DEFAULT_RECENT_RESOLUTIONS = Engine.RECENT;

    /** The most {@link Builder#recentResolutions(int)} takes. */
    public static final int MAX_RECENT_RESOLUTIONS = Engine.MAX_RECENT;

    /** The default of {@link Builder#maxDetailedValues(int)}. */
    public static final int DEFAULT_MAX_DETAILED_VALUES = 1000;

    private static final System.Logger LOG = System.getLogger(PolicyLimiter.class.getName());

    private final RateLimitStore store;
    private final Clock clock;
    private final boolean dryRun;
    private final RateLimitListener listener;
    /** Where the store calls of a check run when its thread cannot bound them by the deadline; null: no deadline. */
    private final @Nullable ExecutorService deadlineExecutor;

    private final long deadlineNanos;
    private final int recentSlots;
    /** Null without a meter registry. */
    private final @Nullable PolicyMetrics metrics;

    /** The engine in force; null once closed. Written under {@code this}. */
    private volatile @Nullable Engine engine;
    /** Guarded by {@code this}. */
    private long version;

    private PolicyLimiter(Builder b) {
        this.store = b.store != null ? b.store : InMemoryStore.create();
        this.clock = b.clock;
        this.dryRun = b.dryRun;
        this.deadlineExecutor = b.deadlineExecutor;
        this.deadlineNanos = b.deadline.toNanos();
        this.recentSlots = b.recentSlots;
        this.metrics = b.registry == null ? null : new PolicyMetrics(b.registry, b.maxDetailedValues);
        if (b.registry != null) {
            SharingMetrics.register(b.registry, store);
        }
        this.listener = metrics == null ? RateLimitListener.NONE : metrics;
        this.engine = new Engine(b.policies, ++version, store, clock, listener, dryRun, recentSlots, Map.of());
        if (metrics != null) {
            metrics.loaded(version);
        }
    }

    /** A builder enforcing {@code policies}. */
    public static Builder builder(Policies policies) {
        return new Builder(policies);
    }

    /**
     * Decides a request of {@code domain} described by {@code descriptors}, costing {@code hits} under each limit
     * it touches. An unknown domain, or a descriptor no rule matches, is allowed with no limit.
     *
     * <p>The verdict is the whole answer: when the store fails or does not answer by the {@link Builder#deadline
     * deadline}, the domain's {@code on_store_failure} (of the configuration that decided) has answered, whatever the
     * store's own {@link dev.sluice.FailurePolicy}, and {@link Verdict#storeFailure()} says so.
     *
     * @throws IllegalArgumentException if {@code descriptors} is empty or {@code hits < 1}
     * @throws IllegalStateException    if the limiter is closed
     */
    public Verdict check(String domain, List<Descriptor> descriptors, long hits) {
        checkArguments(domain, descriptors);
        if (hits < 1) {
            throw new IllegalArgumentException("hits must be >= 1, was " + hits);
        }
        return decide(domain, descriptors, hits, null);
    }

    /**
     * {@link #check(String, List, long)} with a cost per descriptor: {@code hits[i]} under each limit of
     * {@code descriptors.get(i)}, as Envoy's per-descriptor {@code hits_addend}. Still one decision, all or nothing:
     * the request passes only if every limit passes at its descriptor's cost, and a refused request consumes from
     * none. Two descriptors that name one counter take the sum of their costs from it.
     *
     * @throws IllegalArgumentException if {@code descriptors} is empty, {@code hits} is not of its length, or a hit
     *                                  is below 1
     * @throws IllegalStateException    if the limiter is closed
     */
    public Verdict check(String domain, List<Descriptor> descriptors, long[] hits) {
        checkArguments(domain, descriptors);
        long same = sameCost(descriptors, hits);
        return same > 0 ? decide(domain, descriptors, same, null) : decide(domain, descriptors, 1, costs(hits));
    }

    /**
     * The cost every descriptor has in {@code hits}, validated (one per descriptor, at least 1), or -1 when they differ.
     * A check whose descriptors all cost the same (as Envoy's usual request, whose descriptors carry no
     * {@code hits_addend} of their own) is a check at that one cost, without a copy of the costs.
     */
    private static long sameCost(List<Descriptor> descriptors, long[] hits) {
        Objects.requireNonNull(hits, "hits must not be null");
        if (hits.length != descriptors.size()) {
            throw new IllegalArgumentException(
                    "one hits per descriptor: " + descriptors.size() + " descriptors, " + hits.length + " hits");
        }
        // the answer only if the loop finds it at every index: validated, whatever the caller does to the array
        // meanwhile
        long first = hits[0];
        for (int i = 0; i < hits.length; i++) {
            long h = hits[i];
            if (h < 1) {
                throw new IllegalArgumentException("hits[" + i + "] must be >= 1, was " + h);
            }
            if (h != first) {
                return -1;
            }
        }
        return first;
    }

    /** A copy of {@code hits} (one per descriptor, as {@link #sameCost} checked), each validated: at least 1. */
    private static long[] costs(long[] hits) {
        long[] costs = hits.clone();
        for (int i = 0; i < costs.length; i++) {
            if (costs[i] < 1) {
                throw new IllegalArgumentException("hits[" + i + "] must be >= 1, was " + costs[i]);
            }
        }
        return costs;
    }

    /** {@link #check(String, List, long)} of one descriptor and one hit. */
    public Verdict check(String domain, Descriptor descriptor) {
        return check(domain, List.of(descriptor), 1);
    }

    /**
     * {@link #check(String, List, long[])} without holding the calling thread while the store answers. A check that
     * needs no store call (in memory, synchronized mode, a leased slice that covers it, a refusal of the over-limit
     * cache) is decided on the calling thread and returned completed. One that must reach the store (exact mode on a
     * store that batches its calls and keeps deadlines, such as Redis) is sent, and the returned stage completes when
     * the store answers, or at the {@link Builder#deadline deadline} with the domain's {@code on_store_failure}
     * ({@link Verdict#storeTimedOut()}), never later. A call the store cannot bound runs on the deadline's executor, as
     * for {@link #check(String, List, long[])}. Without a {@link Builder#deadline deadline} the check is decided on the
     * calling thread, as {@link #check(String, List, long[])} does, and returned completed.
     *
     * <p>The verdict is the one {@link #check(String, List, long[])} would give: all or nothing, dry run, shadow ban,
     * metrics, and the configuration the check started under (held until the stage completes). The stage completes on
     * the thread that completes the store call (the store driver's or a timer's) unless it completed at once: a caller
     * with more than a little work to do on the verdict hands it to an executor of its own.
     *
     * @return the verdict to come; it fails only with an {@link IllegalStateException} when the store is closed while
     *         deciding
     * @throws IllegalArgumentException if {@code descriptors} is empty, {@code hits} is not of its length, or a hit
     *                                  is below 1
     * @throws IllegalStateException    if the limiter is closed
     */
    public CompletionStage<Verdict> checkAsync(String domain, List<Descriptor> descriptors, long[] hits) {
        checkArguments(domain, descriptors);
        long same = sameCost(descriptors, hits);
        return same > 0
                ? decideAsync(domain, descriptors, same, null)
                : decideAsync(domain, descriptors, 1, costs(hits));
    }

    /** {@link #checkAsync(String, List, long[])} with the cost {@code hits} for every descriptor. */
    public CompletionStage<Verdict> checkAsync(String domain, List<Descriptor> descriptors, long hits) {
        checkArguments(domain, descriptors);
        if (hits < 1) {
            throw new IllegalArgumentException("hits must be >= 1, was " + hits);
        }
        return decideAsync(domain, descriptors, hits, null);
    }

    private CompletionStage<Verdict> decideAsync(
            String domain, List<Descriptor> descriptors, long hits, long @Nullable [] costs) {
        ExecutorService executor = deadlineExecutor;
        if (executor == null) {
            return CompletableFuture.completedFuture(decide(domain, descriptors, hits, costs));
        }
        int stripe = Engine.stripe();
        Engine e = retain(stripe);
        PolicyMetrics m = metrics;
        long start = System.nanoTime();
        CompletableFuture<Verdict> v;
        try {
            v = e.decideAsync(
                    domain, descriptors, hits, costs, new StoreDeadline(start + deadlineNanos, executor, stripe));
        } catch (RuntimeException failed) {
            e.release(stripe);
            return CompletableFuture.failedFuture(failed);
        }
        if (v.isDone() && !v.isCompletedExceptionally()) { // decided here: no second future
            e.release(stripe);
            if (m != null) {
                m.record(domain, e.policies.domains().contains(domain), v.join(), System.nanoTime() - start);
            }
            return v;
        }
        return v.whenComplete((verdict, failed) -> {
            e.release(stripe); // once, whether the check was answered, timed out or failed
            if (m != null && verdict != null) {
                m.record(domain, e.policies.domains().contains(domain), verdict, System.nanoTime() - start);
            }
        });
    }

    private static void checkArguments(String domain, List<Descriptor> descriptors) {
        Objects.requireNonNull(domain, "domain must not be null");
        Objects.requireNonNull(descriptors, "descriptors must not be null");
        if (descriptors.isEmpty()) {
            throw new IllegalArgumentException("descriptors must not be empty");
        }
    }

    private Verdict decide(String domain, List<Descriptor> descriptors, long hits, long @Nullable [] costs) {
        int stripe = Engine.stripe();
        Engine e = retain(stripe);
        ExecutorService executor = deadlineExecutor;
        PolicyMetrics m = metrics;
        long start = executor != null || m != null ? System.nanoTime() : 0; // a clock read only for what needs it
        Verdict v;
        try {
            v = e.decide(
                    domain,
                    descriptors,
                    hits,
                    costs,
                    executor == null ? null : new StoreDeadline(start + deadlineNanos, executor, stripe));
        } finally {
            e.release(stripe);
        }
        if (m != null) {
            m.record(domain, e.policies.domains().contains(domain), v, System.nanoTime() - start);
        }
        return v;
    }

    private Engine retain(int stripe) {
        for (; ; ) {
            Engine e = engine;
            if (e == null) {
                throw new IllegalStateException("the policy limiter is closed");
            }
            if (e.retain(stripe)) {
                return e;
            }
            Thread.onSpinWait();
        }
    }

    /** The policies in force. */
    public Policies policies() {
        Engine e = engine;
        if (e == null) {
            throw new IllegalStateException("the policy limiter is closed");
        }
        return e.policies;
    }

    /**
     * Whether the global dry run is on ({@link Builder#dryRun(boolean)}): every limit is evaluated as
     * {@link Mode#DRY_RUN}, whatever the mode of its rule. An adapter that answers differently for dry-run limits
     * (the HTTP filter does not advertise them) needs this as well as {@link Rule#mode()}.
     */
    public boolean dryRun() {
        return dryRun;
    }

    /** How many configurations have been put in force: 1 after {@link Builder#build()}, +1 per reload. */
    public synchronized long version() {
        return version;
    }

    /**
     * Puts {@code policies} in force, whole: checks that start after this returns use them. A limit whose rule did
     * not change (the same domain, rule path and index, algorithm, limit and window) keeps its counts, in memory as
     * on a shared store; the others start from zero. The limiters no longer used are closed once the checks still
     * using the configuration replaced are done (the in-memory store's are let go instead: they hold nothing to
     * close).
     *
     * @throws PolicyException      if the store refuses one of its limits (synchronized and leased mode keep only
     *                               fixed windows, sliding window counters and sliding tails); the configuration in
     *                               force stays
     * @throws IllegalStateException if the limiter is closed
     */
    public synchronized void update(Policies policies) {
        Objects.requireNonNull(policies, "policies must not be null");
        Engine old = engine;
        if (old == null) {
            throw new IllegalStateException("the policy limiter is closed");
        }
        Engine next = new Engine(policies, version + 1, store, clock, listener, dryRun, recentSlots, old.limiters());
        version++;
        engine = next;
        old.retire();
        if (metrics != null) {
            metrics.loaded(version);
        }
    }

    /**
     * Loads {@code path} ({@link Policies#load}) and puts it in force. A configuration that does not load changes
     * nothing: the one in force stays, the problems are logged (WARNING, through {@link System.Logger}) and counted.
     *
     * @return whether the new configuration is now in force
     * @throws IllegalStateException if the limiter is closed
     */
    public boolean reload(Path path) {
        return reloadOrError(path) == null;
    }

    /** {@link #reload(Path)}, answering the refusal: null when the new configuration is in force. */
    @Nullable
    PolicyException reloadOrError(Path path) {
        try {
            update(Policies.load(path));
        } catch (PolicyException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "rate limit policies in " + path + " refused, the previous ones " + "stay in force: "
                            + e.getMessage());
            loadFailed();
            return e;
        }
        return null;
    }

    /**
     * Counts a configuration that was refused or could not be loaded ({@code sluice.policy.config.loads{result=
     * failure}}); the one in force stays. {@link #reload(Path)} and {@link PolicyWatcher} count their own refusals; a
     * loader of another source (a configuration server) calls this for each one it refuses.
     */
    public void loadFailed() {
        if (metrics != null) {
            metrics.loadFailed();
        }
    }

    /**
     * Closes the limiters of the configuration in force (once running checks are done; the in-memory store's are let
     * go instead, since they hold nothing to close). Checks after this throw. Idempotent.
     */
    @Override
    public synchronized void close() {
        Engine e = engine;
        if (e != null) {
            engine = null;
            e.retire();
        }
    }

    @Nullable
    Engine engineForTest() {
        return engine;
    }

    @Override
    public String toString() {
        Engine e = engine;
        return "PolicyLimiter[" + (e == null ? "closed" : e.policies + " v" + e.version) + (dryRun ? ", dry run" : "")
                + "]";
    }

    /** Builds a {@link PolicyLimiter}. Not thread-safe. */
    public static final class Builder {
        private final Policies policies;
        private @Nullable RateLimitStore store;
        private Clock clock = Clock.systemUTC();
        private boolean dryRun;
        private @Nullable MeterRegistry registry;
        private int maxDetailedValues = DEFAULT_MAX_DETAILED_VALUES;
        private @Nullable ExecutorService deadlineExecutor;
        private Duration deadline = Duration.ZERO;
        private int recentSlots = DEFAULT_RECENT_RESOLUTIONS;

        private Builder(Policies policies) {
            this.policies = Objects.requireNonNull(policies, "policies must not be null");
        }

        /** Where the counts live; default a new {@link InMemoryStore}. The limiter does not close it. */
        public Builder store(RateLimitStore store) {
            this.store = Objects.requireNonNull(store, "store must not be null");
            return this;
        }

        /** The only source of time of every limit; default {@link Clock#systemUTC()}. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * Global dry run (default off): every limit, whatever its mode, is evaluated as {@link Mode#DRY_RUN}, so no
         * request is ever refused or shadow-banned; refusals are counted as "would deny". envoyproxy/ratelimit's
         * global shadow mode.
         */
        public Builder dryRun(boolean dryRun) {
            this.dryRun = dryRun;
            return this;
        }

        /**
         * Where the metrics go (see {@code docs/policies.md} for the names); default none. Store errors and
         * latency are heard through the limiters' {@link RateLimitListener}; a synchronized or leased store's own
         * counts ({@code sluice.sync.*}, {@code sluice.leased.*}) are read from its stats when scraped.
         */
        public Builder meterRegistry(MeterRegistry registry) {
            this.registry = Objects.requireNonNull(registry, "registry must not be null");
            return this;
        }

        /**
         * The most distinct descriptor values the metrics of {@code detailed_metric: true} rules tag, across the
         * limiter; later values are counted under {@code value=other}. Default {@value #DEFAULT_MAX_DETAILED_VALUES}.
         *
         * @throws IllegalArgumentException if {@code max < 0}
         */
        public Builder maxDetailedValues(int max) {
            if (max < 0) {
                throw new IllegalArgumentException("maxDetailedValues must be >= 0, was " + max);
            }
            this.maxDetailedValues = max;
            return this;
        }

        /**
         * How many descriptors' resolutions (the rule a descriptor matches, its counter keys) the limiter may keep, so
         * that a descriptor checked again is neither matched nor given its keys again: the most slots of a table, each
         * pair of slots holding the last two descriptors that fell in it, rounded up to a power of two (at least two);
         * default
         * {@value #DEFAULT_RECENT_RESOLUTIONS}. The table starts at {@value #DEFAULT_RECENT_RESOLUTIONS} slots (fewer
         * if this is fewer) and doubles, up to this, each time as many descriptors as half its slots have been resolved
         * anew since it last grew: it follows the descriptors in use (a replay of a log whose tens of thousands of keys
         * are all live) without taking more than it needs. Memory: a reference per slot, and a resolution (a few
         * hundred bytes) per slot in use. It never changes an answer.
         *
         * @throws IllegalArgumentException if {@code slots} is not between 1 and {@value #MAX_RECENT_RESOLUTIONS}
         */
        public Builder recentResolutions(int slots) {
            if (slots < 1 || slots > MAX_RECENT_RESOLUTIONS) {
                throw new IllegalArgumentException(
                        "recentResolutions must be between 1 and " + MAX_RECENT_RESOLUTIONS + ", was " + slots);
            }
            this.recentSlots = Integer.highestOneBit(slots) == slots ? slots : Integer.highestOneBit(slots) << 1;
            return this;
        }

        /**
         * A bound on the time a check waits for its store (default none: a check waits as long as its store's calls
         * take), one deadline for the whole check whatever its descriptors and costs. A check is decided on the
         * caller's thread wherever that keeps the deadline ({@link dev.sluice.RateLimiter#tryAcquireAllBy}): from
         * memory (a leased slice that covers it), or by a store call the store bounds by the deadline and never
         * applies past it (exact mode on Redis, whose concurrent calls also go together in one round trip). Only the
         * store calls the thread cannot bound (a leased claim, exact mode on PostgreSQL or MongoDB) run on
         * {@code executor}. A check not decided by the deadline, or whose call the executor refuses, is answered by
         * its domain's {@code on_store_failure} ({@link Verdict#storeTimedOut()}), from the configuration it was
         * checked under. A call handed to the executor that starts past the deadline is not made; one that started
         * runs to its end, and what it takes from the store then stays taken. For a store called per decision (exact
         * mode on a shared store, or a leased store's claims), whose answer must come before a caller's own timeout.
         *
         * @param executor where the store calls that the checking thread cannot bound run; the limiter does not shut
         *                 it down
         * @throws IllegalArgumentException if {@code deadline} is not positive
         */
        public Builder deadline(Duration deadline, ExecutorService executor) {
            Objects.requireNonNull(deadline, "deadline must not be null");
            if (deadline.isNegative() || deadline.isZero()) {
                throw new IllegalArgumentException("deadline must be > 0, was " + Durations.format(deadline));
            }
            this.deadline = deadline;
            this.deadlineExecutor = Objects.requireNonNull(executor, "executor must not be null");
            return this;
        }

        /**
         * Builds the limiter, with one {@link dev.sluice.RateLimiter} per distinct limit shape on the store.
         *
         * @throws PolicyException if the store refuses one of the limits (synchronized and leased mode keep only fixed
         *                         windows, sliding window counters and sliding tails): one error per limit refused, at
         *                         the rule that defines it
         */
        public PolicyLimiter build() {
            return new PolicyLimiter(this);
        }
    }
}
