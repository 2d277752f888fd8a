package dev.sluice.policy;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.spi.RateLimitStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * One loaded configuration made ready to decide: the policies, one {@link RateLimiter} per distinct limit shape
 * (algorithm, limit, window), built once, and a {@link Plan} per rule. Immutable after construction but for a bounded
 * cache of recent resolutions; swapped whole on reload.
 *
 * <p>How a request is decided ({@link #decide}, the one path for every request). Every descriptor is matched to its
 * rule ({@link DomainPolicy#match}) and given its counter keys ({@link Plan#keys}); limits named in another matched
 * limit's {@code replaces} are dropped; unlimited limits are answered at once. The remaining limits, each with the
 * cost of its descriptor (two descriptors that name one counter add their costs), are taken in three stages, each all
 * or nothing through {@link RateLimiter#tryAcquireAll}: the enforced limits, then the shadow-ban limits, then the
 * dry-run limits. A stage runs only if every stage before it passed, so a refused request consumes from no limit at
 * all, and a dry-run limit counts exactly the requests that would reach it if it were enforced. Example: a request
 * under an enforced 10/s and a dry-run 5/s, the sixth in a second: the enforced stage passes and counts; the dry-run
 * stage refuses and counts nothing, so the request is allowed and counted as a "would deny"; an eleventh request is
 * refused by the enforced stage and the dry-run stage never runs.
 *
 * <p>A store that fails. A stage whose store call fails (a decision answered by the store's
 * {@link dev.sluice.FailurePolicy}, whatever that policy is, or a {@link SluiceException}) is answered by the domain's
 * {@code on_store_failure} of this configuration, the one deciding: {@code allow} passes the stage, {@code deny}
 * refuses it as its mode refuses (an enforced stage refuses the request). Its limits report {@link
 * LimitVerdict#failed()} with no counts, since the store gave none: remaining -1, reset and retry 0. A stage the
 * check's deadline cut short ({@link StoreDeadline}) is answered the same way, and every stage after it as well,
 * unasked.
 *
 * <p>Resolutions. What a descriptor resolves to in a domain (its domain's rules, its plan, counter keys and the
 * acquisition of one permit of each counter) is kept in a table of pairs of slots by the descriptor's value and domain
 * name, of {@value #RECENT} slots (or as many as {@link PolicyLimiter.Builder#recentResolutions} allows: then it
 * doubles, up to that, each time half its slots' worth of descriptors have been resolved anew since it last did), so that a descriptor checked again (the same object or an equal one) skips the
 * domain's lookup and the matching, and finds the very key strings, whose hashes the store computed before. A pair holds
 * the last two descriptors that fell in it; descriptors longer than {@value #MAX_CACHED_CHARS} characters are not kept.
 * Slots are read and written without locks: a resolution is immutable, so a thread sees none, an older one or a newer
 * one, each whole, and checks that it is the one asked for.
 *
 * <p>Counters. What a request asks of the store (its {@link Counters}: the counters of its limits merged and staged,
 * and each stage's acquisitions) depends only on its resolutions and costs, so a request of up to three descriptors at
 * one cost keeps them for the next request of the same: a request of one descriptor beside its resolution
 * ({@link Resolution#alone}), one of two or three in {@link #recentCounters}, read and written without locks as the
 * resolutions are. A request then makes only its record ({@link Decided}) and its verdict.
 *
 * <p>Closing: a check holds the engine ({@link #retain(int)}) while it runs. A replaced engine is retired; it lets go
 * of its limiters when the last check holding it is done, never under a running check, and a limiter is closed when
 * the last engine using it lets go. On the in-memory store a check holds nothing ({@link #holdFree}): its limiters
 * have no thread, connection or store call to end, so they are never closed, only let go (the collector takes them
 * once no check runs on them), and a check that still runs on a retired engine decides on its limiters as if it had
 * run just before the reload: on a limiter the next configuration took over, or on one whose counts the reload drops
 * anyway. A reload hands every limiter whose shape the new configuration still has to it ({@link Shared}), so a
 * limit whose rule did not change keeps its in-memory counts: its counter key (domain, rule path, index) and its
 * limiter are the same.
 */
final class Engine {

    /** Shape of a limiter: the limits sharing it share the limiter, under different keys. */
    record Shape(Algorithm algorithm, long limit, Duration window) {}

    /** Slots of the table of recent resolutions by default: a power of two. */
    static final int RECENT = 4096;

    /** The most slots of the table of recent resolutions: a power of two. */
    static final int MAX_RECENT = 1 << 22;

    /** The longest descriptor (its keys and values, in characters) whose resolution is kept. */
    static final int MAX_CACHED_CHARS = 256;

    final Policies policies;
    final long version;
    private final Map<Shape, Shared> limiters;
    /** Per domain, its rules made ready. */
    private final Map<String, Domain> domains;
    /**
     * The domain asked last, with the very string it was asked by: a caller that names its domain with a constant
     * (an application, the filter, the starter) finds it again by that string's identity, without a hash or a
     * comparison of characters. Read and written without a lock: any value seen is a domain of this engine, asked by
     * the string it holds (its fields are final).
     */
    private @Nullable AskedDomain lastAsked;

    /**
     * The table of recent resolutions: a power of two of slots, replaced by one twice its size, up to
     * {@link #maxRecent}, each time half its slots' worth of resolutions have been made since it was.
     */
    private volatile @Nullable Resolution[] recent;

    private final int maxRecent;

    /**
     * The counters of recent requests of up to three descriptors, each of one cost ({@link Counters}), by their
     * resolutions and cost ({@link #countersSlot}): {@link #RECENT} slots or fewer, each holding the last request's
     * that fell in it, read and written without locks as {@link #recent} is (counters are immutable).
     */
    private final @Nullable Counters[] recentCounters;
    /** Resolutions kept since {@link #recent} was made; written without a lock: a count lost only delays a growth. */
    private int made;

    private final Clock clock;

    /**
     * In-flight checks, counted in {@value #STRIPES} stripes {@value #PAD} longs apart (a cache line or two each), so
     * checks on different threads write different lines; a check increments and decrements the stripe of its thread.
     */
    private final AtomicLongArray holds = new AtomicLongArray(STRIPES * PAD);

    private static final int STRIPES = 16;
    private static final int PAD = 16;

    private volatile boolean retired;
    private final AtomicBoolean closed = new AtomicBoolean();
    /**
     * Whether checks skip the hold: true on the {@link InMemoryStore}, whose limiters this engine never closes (see
     * the class comment), so that a check saves the hold's two atomic adds.
     */
    private final boolean holdFree;

    /** A domain and the string it was asked by ({@link #lastAsked}). */
    private record AskedDomain(String asked, Domain domain) {}

    /**
     * The rules of the domain named {@code name}; null if it has none. The domain asked last by the same string
     * object is found by identity; otherwise by the map, and remembered with that string when it is another domain
     * than the last (so a caller whose strings are new at every request, the service's, makes no object per request).
     */
    @SuppressWarnings("ReferenceEquality") // identity, on purpose: equal strings that are not the same go to the map
    private @Nullable Domain domain(String name) {
        AskedDomain last = lastAsked;
        if (last != null && last.asked == name) {
            return last.domain;
        }
        Domain d = domains.get(name);
        if (d != null && (last == null || last.domain != d)) {
            lastAsked = new AskedDomain(name, d);
        }
        return d;
    }

    /** One domain's rules, made ready. */
    private static final class Domain {
        /** The domain's name's hash, which places a descriptor's resolution in the table of recent ones. */
        final int hash;

        final DomainPolicy policy;
        final OnStoreFailure onFailure;
        /** The plan of each node of the configuration that has a rule. */
        final IdentityHashMap<DomainPolicy.Node, Plan> plans;

        Domain(String name, DomainPolicy policy, IdentityHashMap<DomainPolicy.Node, Plan> plans) {
            this.hash = name.hashCode();
            this.policy = policy;
            this.onFailure = policy.onStoreFailure();
            this.plans = plans;
        }
    }

    /**
     * What a descriptor resolves to in a domain: its rule's plan, counter keys and the acquisition of one permit of each
     * counter; no plan when no rule applies.
     */
    private static final class Resolution {
        final Descriptor descriptor;
        /** Null for a domain the configuration does not have. */
        final @Nullable Domain dom;

        final @Nullable Plan plan;
        final @Nullable String @Nullable [] keys;
        /** Per limit, one permit of its counter, which a request of cost 1 asks as it is; null where it has no limiter. */
        final @Nullable Acquisition @Nullable [] ones;
        /** The descriptor's hash in its domain ({@link #slot}); 0 for a domain the configuration does not have. */
        final int hash;
        /** Whether it is kept in the table of recent resolutions (else it is made per request). */
        final boolean kept;
        /**
         * The counters of a request of this descriptor alone at a cost of 1, once one was made: written without a lock,
         * as every thread that makes them makes the same (they are immutable).
         */
        @Nullable
        Counters alone;

        Resolution(Descriptor descriptor, @Nullable Domain dom, @Nullable Plan plan, boolean kept) {
            this.descriptor = descriptor;
            this.dom = dom;
            this.plan = plan;
            this.hash = dom == null ? 0 : hash(descriptor, dom);
            this.kept = kept;
            if (plan == null) {
                this.keys = null;
                this.ones = null;
                return;
            }
            @Nullable String[] keys = plan.keys(descriptor);
            @Nullable Acquisition[] ones = new Acquisition[keys.length];
            for (int j = 0; j < keys.length; j++) {
                RateLimiter limiter = plan.limiters[j];
                String key = keys[j];
                ones[j] = limiter == null || key == null ? null : new Acquisition(limiter, key, 1);
            }
            this.keys = keys;
            this.ones = ones;
        }
    }

    /**
     * A limiter and the count of engines using it. The last engine to close closes it, so that a reload hands the
     * limiters of unchanged shapes, with their counts, to the next configuration.
     */
    static final class Shared {
        final RateLimiter limiter;
        private final AtomicInteger engines = new AtomicInteger(1);

        Shared(RateLimiter limiter) {
            this.limiter = limiter;
        }

        /** One more engine uses it; only while an engine using it is in force, so never after it closed. */
        Shared take() {
            engines.incrementAndGet();
            return this;
        }

        void release() {
            if (engines.decrementAndGet() == 0) {
                limiter.close();
            }
        }

        /** As {@link #release}, without closing the limiter when no engine uses it: an in-memory one, let go. */
        void letGo() {
            engines.decrementAndGet();
        }
    }

    /**
     * @param recentSlots the most slots of the table of recent resolutions, which starts at {@link #RECENT} or fewer: a
     *                    power of two, at most {@link #MAX_RECENT}
     * @param previous    the limiters of the configuration in force, by shape: a shape found there is taken over with
     *                    its counts instead of built anew (empty for the first configuration)
     */
    Engine(
            Policies policies,
            long version,
            RateLimitStore store,
            Clock clock,
            RateLimitListener listener,
            boolean dryRun,
            int recentSlots,
            Map<Shape, Shared> previous) {
        if (recentSlots < 1 || recentSlots > MAX_RECENT || Integer.bitCount(recentSlots) != 1) {
            throw new IllegalArgumentException(
                    "recentSlots must be a power of two up to " + MAX_RECENT + ", was " + recentSlots);
        }
        this.policies = policies;
        this.version = version;
        this.clock = clock;
        this.holdFree = store instanceof InMemoryStore;
        this.maxRecent = Math.max(2, recentSlots);
        this.recent = new Resolution[Math.min(RECENT, maxRecent)];
        this.recentCounters = new Counters[Math.min(RECENT, maxRecent)];
        Map<Shape, Shared> built = new HashMap<>();
        IdentityHashMap<Limit, RateLimiter> byLimit = new IdentityHashMap<>();
        List<PolicyError> refused = new ArrayList<>();
        try {
            for (String domain : policies.domains()) {
                for (Rule rule : policies.rules(domain)) {
                    for (Limit l : rule.limits()) {
                        if (l.unlimited() || l.requestsPerUnit() == 0) {
                            continue;
                        }
                        Shape s = new Shape(
                                Objects.requireNonNull(l.algorithm(), "a limited Limit has one"),
                                l.requestsPerUnit(),
                                Objects.requireNonNull(l.window(), "a limited Limit has one"));
                        String refusal = store.refusal(s.algorithm()); // null if one of store.algorithms()
                        if (refusal != null) {
                            refused.add(rule.error(
                                    "rule " + rule.path() + ", limit " + l + ": the store refuses it: " + refusal));
                            continue;
                        }
                        Shared limiter = built.computeIfAbsent(s, k -> {
                            Shared kept = previous.get(k);
                            return kept != null
                                    ? kept.take()
                                    : new Shared(RateLimiter.builder(k.algorithm())
                                            .limit(k.limit(), k.window())
                                            .clock(clock)
                                            .store(store)
                                            .listener(listener)
                                            .build());
                        });
                        byLimit.put(l, limiter.limiter);
                    }
                }
            }
            if (!refused.isEmpty()) {
                throw new PolicyException(refused);
            }
        } catch (RuntimeException e) {
            built.values().forEach(Shared::release);
            throw e;
        }
        this.limiters = Map.copyOf(built);
        Map<String, Domain> ready = new HashMap<>();
        for (String domain : policies.domains()) {
            DomainPolicy p = Objects.requireNonNull(policies.domainPolicy(domain), "a domain listed has a policy");
            IdentityHashMap<DomainPolicy.Node, Plan> plans = new IdentityHashMap<>();
            plan(domain, p.top(), new ArrayList<>(), byLimit::get, dryRun, plans);
            ready.put(domain, new Domain(domain, p, plans));
        }
        this.domains = ready;
    }

    /** Makes a plan of every rule under {@code level}, whose ancestors are {@code path}. */
    private static void plan(
            String domain,
            DomainPolicy.Level level,
            List<DomainPolicy.Node> path,
            Function<Limit, @Nullable RateLimiter> limiters,
            boolean dryRun,
            IdentityHashMap<DomainPolicy.Node, Plan> out) {
        for (DomainPolicy.Node n : level.nodes()) {
            path.add(n);
            if (n.rule != null) {
                out.put(n, new Plan(domain, List.copyOf(path), limiters, dryRun));
            }
            DomainPolicy.Level children = n.children;
            if (children != null) {
                plan(domain, children, path, limiters, dryRun, out);
            }
            path.remove(path.size() - 1);
        }
    }

    int limiterCount() {
        return limiters.size();
    }

    /** The limiters by shape, for the next configuration to take over ({@link Shared#take()}). */
    Map<Shape, Shared> limiters() {
        return limiters;
    }

    /** The stripe of {@link #holds} the current thread counts its checks in: pass it to retain and release. */
    static int stripe() {
        long id = Thread.currentThread().getId();
        return (int) ((id * 0x9E3779B97F4A7C15L) >>> 60) * PAD; // Fibonacci hashing: the top 4 bits, 0 to 15
    }

    /**
     * Holds the engine for a check, unless it is retired: then the caller takes the engine in force instead.
     *
     * <p>Why this never closes the limiters under a check, with no lock and no shared write: a check increments its
     * stripe, then reads {@code retired}; {@link #retire} writes {@code retired}, then reads every stripe. Both are
     * volatile, so of the two orders one holds: the check sees {@code retired} and lets go (the engine is not used),
     * or the closer sees the check's stripe above zero and leaves the closing to the last check to let go, which
     * looks at every stripe again after its decrement. A stripe is never below the checks it holds, since each
     * check increments and decrements the same stripe, so a sum read stripe by stripe after {@code retired} is
     * written is zero only when every check that saw the engine in force is done. On the in-memory store
     * ({@link #holdFree}) nothing is held: only {@code retired} is read, and no limiter is ever closed under a check.
     */
    boolean retain(int stripe) {
        if (holdFree) {
            return !retired;
        }
        holds.getAndIncrement(stripe);
        if (retired) {
            release(stripe);
            return false;
        }
        return true;
    }

    /**
     * One more hold at {@code stripe}, for work a check hands to another thread, by a caller that holds the engine
     * there already (so it cannot close meanwhile); that work {@link #release releases} it.
     */
    void holdMore(int stripe) {
        if (!holdFree) {
            holds.getAndIncrement(stripe);
        }
    }

    void release(int stripe) {
        if (holdFree) {
            return;
        }
        holds.getAndDecrement(stripe);
        if (retired) {
            closeIfIdle();
        }
    }

    /** No new check will retain this engine; its limiters close when the running ones are done. */
    void retire() {
        retired = true;
        closeIfIdle();
    }

    private void closeIfIdle() {
        for (int i = 0; i < STRIPES; i++) {
            if (holds.get(i * PAD) != 0) {
                return;
            }
        }
        if (closed.compareAndSet(false, true)) {
            limiters.values().forEach(holdFree ? Shared::letGo : Shared::release);
        }
    }

    boolean closed() {
        return closed.get();
    }

    /**
     * One counter of a request: a limiter and key, with the costs of every limit of the request naming them added, and
     * what the store is asked for it. Made with its request's {@link Counters} and complete when they are; never
     * changed after, so the counters of one request serve the next request of the same descriptors.
     */
    private static final class Counter {
        /** Null for a limit of 0, which is impossible and never asks. */
        final @Nullable RateLimiter limiter;

        final String key;
        final Limit limit;
        /** The {@link Plan} stage of its limit. */
        final byte stage;

        /** One permit of this counter, kept by the resolution; null for a limit of 0. */
        private final @Nullable Acquisition one;

        // Added up while the counters are made (Engine.counters), then set by complete(): read only after
        private long cost;
        /** Refused without asking the store: a limit of 0, or a cost above the limit. */
        private boolean impossible;
        /** What the store is asked: its cost of its counter; null when impossible. */
        private @Nullable Acquisition acquisition;

        Counter(@Nullable RateLimiter limiter, String key, Limit limit, int stage, @Nullable Acquisition one) {
            this.limiter = limiter;
            this.key = key;
            this.limit = limit;
            this.stage = (byte) stage;
            this.one = one;
        }

        /** Adds {@code more} to this counter's cost, up to {@link Long#MAX_VALUE}. */
        void add(long more) {
            cost = cost > Long.MAX_VALUE - more ? Long.MAX_VALUE : cost + more;
        }

        /** Fixes what is asked once every cost is added. */
        void complete() {
            long l = limit.requestsPerUnit();
            impossible = l == 0 || cost > l;
            Acquisition a = one;
            acquisition = impossible
                    ? null
                    : a != null && cost == 1
                            ? a
                            : new Acquisition(
                                    Objects.requireNonNull(limiter, "a limit of 0 has none, and is impossible"),
                                    key,
                                    cost);
        }

        Acquisition acquisition() {
            return Objects.requireNonNull(acquisition, "an impossible counter is never asked");
        }
    }

    /**
     * The counters of a request, in its order, and what its stages ask: one object for every request of the same
     * descriptors (their resolutions) and the same cost for each; made from the resolutions ({@link #counters}) and kept
     * ({@link #recentCounters}) so that the next such request finds them made. Immutable once made.
     */
    private static final class Counters {

        /** The counters of a request that has none: no rule applies to any of its descriptors. */
        static final Counters NONE = new Counters(null, null, null, 0, new Counter[0], null, null);

        // What they were made for: a request of up to three descriptors (the ones past its end null), each of the same
        // cost (kept only then)
        private final @Nullable Resolution first;
        private final @Nullable Resolution second;
        private final @Nullable Resolution third;
        private final long hits;

        /** The counters, in the order of the request. */
        final Counter[] parts;
        /**
         * The counter of each limit (slot) of the request, in order, as an index into {@link #parts} (-1: none, the
         * limit is unlimited or replaced); null when the k-th slot's is the k-th counter, every slot having one of its
         * own.
         */
        private final int @Nullable [] partOfSlot;
        /** The names of the limits that matched limits of the request replace; null when none does. */
        final @Nullable Set<String> replaced;
        /** A bit per stage that has a counter. */
        final byte stageBits;
        /** A bit per stage that has an impossible counter. */
        final byte impossibleStages;
        /**
         * The acquisitions of each stage's counters, in the order of the request, as one joint request asks them; null
         * for a stage without counters or with an impossible one (which is refused without asking).
         */
        private final @Nullable List<Acquisition> @Nullable [] asked;
        /** Per stage, 16 bits: 1 + the index of its one counter, or 0 when it has several or none ({@link #only}). */
        private final long singles;

        @SuppressWarnings({"unchecked", "rawtypes"}) // an array of lists, one per stage
        Counters(
                @Nullable Resolution first,
                @Nullable Resolution second,
                @Nullable Resolution third,
                long hits,
                Counter[] parts,
                int @Nullable [] partOfSlot,
                @Nullable Set<String> replaced) {
            this.first = first;
            this.second = second;
            this.third = third;
            this.hits = hits;
            this.parts = parts;
            this.partOfSlot = partOfSlot;
            this.replaced = replaced;
            int stages = 0;
            int impossible = 0;
            int[] perStage = new int[Plan.DRY_RUN + 1];
            for (Counter c : parts) {
                c.complete();
                stages |= 1 << c.stage;
                impossible |= c.impossible ? 1 << c.stage : 0;
                perStage[c.stage]++;
            }
            this.stageBits = (byte) stages;
            this.impossibleStages = (byte) impossible;
            long singles = 0;
            for (int k = 0; k < parts.length && k < 0xFFFF; k++) {
                int stage = parts[k].stage;
                if (perStage[stage] == 1) {
                    singles |= (long) (k + 1) << (16 * stage);
                }
            }
            this.singles = singles;
            if (parts.length == 0) {
                this.asked = null;
                return;
            }
            @Nullable List<Acquisition>[] asked = new List[Plan.DRY_RUN + 1];
            for (int stage = 0; stage < asked.length; stage++) {
                if (perStage[stage] == 0 || (impossible & 1 << stage) != 0) {
                    continue;
                }
                Acquisition[] a = new Acquisition[perStage[stage]];
                int k = 0;
                for (Counter c : parts) {
                    if (c.stage == stage) {
                        a[k++] = c.acquisition();
                    }
                }
                asked[stage] = List.of(a);
            }
            this.asked = asked;
        }

        /**
         * Whether these are the counters of a request of resolutions {@code r}, {@code r2} and {@code r3} (null past its
         * end), each at the cost {@code hits}.
         */
        @SuppressWarnings("ReferenceEquality") // a resolution is one object while it is kept
        boolean madeFor(Resolution r, @Nullable Resolution r2, @Nullable Resolution r3, long hits) {
            return first == r && second == r2 && third == r3 && this.hits == hits;
        }

        /** The index in {@link #parts} of the counter of {@code slot}; -1 when it has none. */
        int part(int slot) {
            int[] of = partOfSlot;
            return of == null ? slot : of[slot];
        }

        /** The index in {@link #parts} of the one counter of {@code stage}; -1 when it has several (or none). */
        int only(int stage) {
            return (int) (singles >>> (16 * stage) & 0xFFFF) - 1;
        }

        /** The acquisitions of {@code stage}'s counters, in the order of the request. */
        List<Acquisition> asked(int stage) {
            @Nullable List<Acquisition>[] all = Objects.requireNonNull(asked, "a request with counters asks them");
            return Objects.requireNonNull(all[stage], "a stage asked has counters, none impossible");
        }
    }

    /**
     * What {@link #decide} decided for a request, from which its {@link Verdict} builds the answer of every descriptor
     * and limit when first read ({@link #descriptors}). It is also the state of the request's stages while they run
     * (so a check that waits on its own thread makes no object for them). Made before the stages run, completed by
     * them, and not changed after its verdict is made.
     */
    static final class Decided {
        private final List<Descriptor> request;
        /**
         * The resolution of each descriptor: of a request of up to three (Envoy's usual request has three) in
         * {@link #first}, {@link #second} and {@link #third} (null past the request's end); of a longer one, of every
         * descriptor in {@link #rest} (else null), and of the first in {@link #first} too.
         */
        private final Resolution first;

        private final @Nullable Resolution second;
        private final @Nullable Resolution third;
        private final Resolution @Nullable [] rest;
        private final Counters counters;
        /**
         * The store's decision for each counter, by its index in {@link Counters#parts}: of the first three in
         * {@link #d0}, {@link #d1} and {@link #d2}, of the others in {@link #more}; null until its stage is answered by
         * the store, and if the stage did not run or the store failed.
         */
        private @Nullable Decision d0;

        private @Nullable Decision d1;
        private @Nullable Decision d2;
        private final @Nullable Decision @Nullable [] more;
        // the stages' numbers and bits are bytes, as Counter.stage: a check makes this record, so each byte counts
        private byte refusedStage = -1;
        private byte failedStages;
        /** The time the impossible limits report their reset from; -1 when there are none. */
        private long nowNanos = -1;
        /** The limits refused by a store's over-limit cache, without a store call ({@link Decision#cached()}). */
        int cachedRefusals;

        // While the stages run (Engine.run): the next stage to run, and what the stages met so far
        private byte nextStage = Plan.ENFORCE;
        private final @Nullable StoreDeadline deadline;
        private boolean timedOut;
        /** A quota limit refused while its stage passed (Outcome.OVER_QUOTA). */
        private boolean overQuota;
        /** The verdict to come, for a check that waits for no thread, until it is made; else null. */
        private @Nullable CompletableFuture<Verdict> result;

        Decided(
                List<Descriptor> request,
                Resolution first,
                @Nullable Resolution second,
                @Nullable Resolution third,
                Resolution @Nullable [] rest,
                Counters counters,
                @Nullable StoreDeadline deadline) {
            this.request = request;
            this.first = first;
            this.second = second;
            this.third = third;
            this.rest = rest;
            this.counters = counters;
            this.more = counters.parts.length > 3 ? new Decision[counters.parts.length - 3] : null;
            this.deadline = deadline;
        }

        /**
         * The domain's {@code on_store_failure}, of the configuration that decided (every descriptor of a request
         * resolves in its one domain); {@code allow} for a domain the configuration does not have.
         */
        OnStoreFailure onFailure() {
            Domain d = first.dom;
            return d == null ? OnStoreFailure.ALLOW : d.onFailure;
        }

        /** The resolution of descriptor {@code i}. */
        Resolution resolution(int i) {
            Resolution[] all = rest;
            if (all != null) {
                return all[i];
            }
            return Objects.requireNonNull(
                    i == 0 ? first : i == 1 ? second : i == 2 ? third : null, "a resolution per descriptor");
        }

        /** The store's decision for counter {@code k}; null if it has none. */
        @Nullable
        Decision decision(int k) {
            return switch (k) {
                case 0 -> d0;
                case 1 -> d1;
                case 2 -> d2;
                default -> Objects.requireNonNull(more, "a request of more than three counters")[k - 3];
            };
        }

        void decision(int k, Decision d) {
            switch (k) {
                case 0 -> d0 = d;
                case 1 -> d1 = d;
                case 2 -> d2 = d;
                default -> Objects.requireNonNull(more, "a request of more than three counters")[k - 3] = d;
            }
        }

        private @Nullable Plan plan(int i) {
            return resolution(i).plan;
        }

        /** The answer of limit {@code j} of {@code p}, whose counter is {@code k}: the one place outcomes are given. */
        private LimitVerdict limit(Plan p, int j, int k) {
            Limit l = p.limits[j];
            if (k < 0) {
                Set<String> replaced = counters.replaced;
                Outcome o = l.unlimited() && (replaced == null || !replaced.contains(l.name()))
                        ? Outcome.UNLIMITED
                        : Outcome.REPLACED;
                return new LimitVerdict(l, o, Long.MAX_VALUE, 0, 0, false);
            }
            if (counters.parts[k].impossible && (refusedStage < 0 || p.stage <= refusedStage)) { // its stage ran
                return impossible(l, p.stage == Plan.QUOTA && p.stage != refusedStage ? -1 : p.stage, nowNanos);
            }
            if ((failedStages & (1 << p.stage)) != 0) {
                Outcome o = onFailure() == OnStoreFailure.DENY ? refusal(p.stage) : Outcome.ALLOWED;
                return new LimitVerdict(l, o, -1, 0, 0, true);
            }
            Decision d = decision(k);
            if (d == null) {
                return new LimitVerdict(l, Outcome.NOT_COUNTED, -1, 0, 0, false);
            }
            Outcome o = p.stage != refusedStage
                    ? (d.allowed() || p.stage != Plan.QUOTA ? Outcome.ALLOWED : Outcome.OVER_QUOTA)
                    : d.allowed() ? Outcome.NOT_COUNTED : refusal(p.stage);
            return new LimitVerdict(l, o, d.remaining(), d.resetAfterNanos(), d.retryAfterNanos(), false);
        }

        /** The rule of the first limit, in the order of the request, that shadow-banned it; null when none did. */
        private @Nullable Rule shadowBan() {
            if (refusedStage != Plan.SHADOW_BAN) { // no other refusal is a shadow ban
                return null;
            }
            int slot = 0;
            for (int i = 0; i < request.size(); i++) {
                Plan p = plan(i);
                if (p == null) {
                    continue;
                }
                for (int j = 0; j < p.limits.length; j++, slot++) {
                    if (p.stage == Plan.SHADOW_BAN
                            && limit(p, j, counters.part(slot)).outcome() == Outcome.SHADOW_BANNED) {
                        return p.rule;
                    }
                }
            }
            return null;
        }

        /** The answer of every descriptor, in the order of the request. */
        List<DescriptorVerdict> descriptors() {
            int n = request.size();
            DescriptorVerdict[] out = new DescriptorVerdict[n];
            int slot = 0;
            for (int i = 0; i < n; i++) {
                Plan p = plan(i);
                if (p == null) {
                    out[i] = new DescriptorVerdict(request.get(i), null, List.of());
                    continue;
                }
                LimitVerdict[] verdicts = new LimitVerdict[p.limits.length];
                for (int j = 0; j < verdicts.length; j++, slot++) {
                    verdicts[j] = limit(p, j, counters.part(slot));
                }
                out[i] = new DescriptorVerdict(request.get(i), p.rule, List.of(verdicts));
            }
            return List.of(out);
        }
    }

    /**
     * Decides a request: the one path for every request (see the class comment). The answer of each descriptor and
     * limit is built when the verdict is read ({@link Decided}).
     *
     * @param hits         the cost of every descriptor, unless {@code costs} is given
     * @param costs        the cost of each descriptor, in order; null when every descriptor costs {@code hits}
     * @param deadline     the check's deadline, or null to wait as long as the store's calls take; a stage not decided
     *                     by it (or asked after it) is answered by {@code on_store_failure}, as timed out; it names
     *                     where the caller holds this engine, for work it hands to another thread
     */
    Verdict decide(
            String domain,
            List<Descriptor> descriptors,
            long hits,
            long @Nullable [] costs,
            @Nullable StoreDeadline deadline) {
        return decide(stages(domain, descriptors, hits, costs, deadline));
    }

    /**
     * {@link #decide} without waiting for the store: a stage that needs no store call is decided on this thread, one
     * that does is sent, and the stages after it run on the thread that completes it. The verdict completes by the
     * deadline at the latest; it fails only as {@link #decide} throws (a closed store).
     *
     * @param deadline the check's deadline, which names where the caller holds this engine until the verdict
     *                 completes
     */
    CompletableFuture<Verdict> decideAsync(
            String domain, List<Descriptor> descriptors, long hits, long @Nullable [] costs, StoreDeadline deadline) {
        return decideAsync(stages(domain, descriptors, hits, costs, deadline));
    }

    /** The stages of a request: its descriptors resolved and its counters found or made, not yet asked. */
    private Decided stages(
            String domain,
            List<Descriptor> descriptors,
            long hits,
            long @Nullable [] costs,
            @Nullable StoreDeadline deadline) {
        int n = descriptors.size();
        // a request of up to three descriptors keeps their resolutions without an array
        @Nullable Domain dom = domain(domain);
        Resolution first = resolve(dom, descriptors.get(0));
        Resolution second = null;
        Resolution third = null;
        Resolution[] rest = null;
        if (n > 3) {
            rest = new Resolution[n];
            rest[0] = first;
            for (int i = 1; i < n; i++) {
                rest[i] = resolve(dom, descriptors.get(i));
            }
        } else {
            second = n > 1 ? resolve(dom, descriptors.get(1)) : null;
            third = n > 2 ? resolve(dom, descriptors.get(2)) : null;
        }
        Counters c;
        if (dom == null) {
            c = Counters.NONE; // no rule applies to a domain the configuration does not have
        } else if (rest != null || costs != null) { // not kept: made for this request
            c = counters(
                    rest != null
                            ? Arrays.asList(rest)
                            : n == 1 ? List.of(first) : n == 2 ? List.of(first, second) : List.of(first, second, third),
                    hits,
                    costs,
                    null,
                    null);
        } else if (n == 1 && hits == 1 && first.kept) { // a request of one descriptor finds its counters beside it
            c = first.alone;
            if (c == null) {
                c = counters(List.of(first), hits, null, null, null);
                first.alone = c;
            }
        } else {
            int slot = countersSlot(first, second, third, hits);
            @Nullable Counters[] table = recentCounters;
            c = table[slot];
            if (c == null || !c.madeFor(first, second, third, hits)) {
                c = counters(
                        n == 1 ? List.of(first) : n == 2 ? List.of(first, second) : List.of(first, second, third),
                        hits,
                        null,
                        second,
                        third);
                if (c != Counters.NONE // a request of no counter finds none again at no cost: no write
                        && first.kept
                        && (second == null || second.kept)
                        && (third == null || third.kept)) {
                    table[slot] = c;
                }
            }
        }
        return new Decided(descriptors, first, second, third, rest, c, deadline);
    }

    /**
     * The counters of a request whose descriptors resolve to {@code resolutions}, each costing {@code hits} unless
     * {@code costs} gives each its own: one counter per limiter and key, in the order of the request (two limits that
     * name one counter add their costs); a limit replaced or unlimited has none.
     *
     * @param second the second resolution, which the counters are made for, when they may be kept (else null)
     * @param third  the third, likewise
     */
    private static Counters counters(
            List<Resolution> resolutions,
            long hits,
            long @Nullable [] costs,
            @Nullable Resolution second,
            @Nullable Resolution third) {
        int n = resolutions.size();
        int slots = 0;
        boolean replaces = false;
        for (Resolution r : resolutions) {
            Plan p = r.plan;
            if (p != null) {
                slots += p.limits.length;
                replaces |= p.replaces;
            }
        }
        if (slots == 0) {
            return Counters.NONE;
        }
        Set<String> replaced = replaces ? replaced(resolutions) : null;
        Counter[] parts = new Counter[slots];
        int count = 0;
        int[] partOfSlot = null; // while each slot has a counter of its own, the k-th slot's is the k-th
        Map<String, Integer> byKey = slots > 8 ? new HashMap<>() : null;
        int slot = 0;
        for (int i = 0; i < n; i++) {
            Resolution r = resolutions.get(i);
            Plan p = r.plan;
            if (p == null) {
                continue;
            }
            @Nullable String[] keys = Objects.requireNonNull(r.keys, "a resolution with a plan has its keys");
            @Nullable Acquisition[] ones = Objects.requireNonNull(r.ones, "a resolution with a plan has its keys");
            long cost = costs == null ? hits : costs[i];
            for (int j = 0; j < p.limits.length; j++, slot++) {
                Limit l = p.limits[j];
                String key = keys[j];
                int k = -1;
                if (key != null && (replaced == null || !replaced.contains(l.name()))) {
                    Integer known = byKey != null ? byKey.get(key) : null;
                    k = byKey != null ? (known == null ? -1 : known) : find(parts, count, key, l);
                    if (k < 0) {
                        k = count++;
                        parts[k] = new Counter(p.limiters[j], key, l, p.stage, ones[j]);
                        if (byKey != null) {
                            byKey.put(key, k);
                        }
                    }
                    parts[k].add(cost);
                }
                if (partOfSlot == null && k != slot) {
                    partOfSlot = new int[slots];
                    for (int s = 0; s < slot; s++) {
                        partOfSlot[s] = s;
                    }
                }
                if (partOfSlot != null) {
                    partOfSlot[slot] = k;
                }
            }
        }
        return new Counters(
                resolutions.get(0),
                second,
                third,
                hits,
                count == parts.length ? parts : Arrays.copyOf(parts, count),
                partOfSlot,
                replaced);
    }

    /** The slot of the counters of a request of these resolutions and cost in {@link #recentCounters}. */
    private int countersSlot(Resolution first, @Nullable Resolution second, @Nullable Resolution third, long hits) {
        int h = first.hash;
        h = h * 31 + (second == null ? 0 : second.hash);
        h = h * 31 + (third == null ? 0 : third.hash);
        h = h * 31 + Long.hashCode(hits);
        return (h ^ (h >>> 16)) & (recentCounters.length - 1);
    }

    /*
     * The stages of one request, in order ({@link #decide}): each asks the store for its counters unless a stage
     * before it refused. A check that waits for no thread ({@link #decideAsync}) suspends here while a stage's store
     * call is in flight, and goes on with the next stage on the thread that completes it. Their state is the request's
     * decision record ({@link Decided}), so a check that waits on its own thread makes no object for it.
     */

    /** Runs every stage on this thread, waiting for the store where a stage needs it. */
    private Verdict decide(Decided s) {
        return Objects.requireNonNull(run(s, PENDING), "a check that waits decides every stage");
    }

    /** Runs the stages without waiting for the store: the verdict completes when the last stage is decided. */
    private CompletableFuture<Verdict> decideAsync(Decided s) {
        CompletableFuture<Verdict> r = new CompletableFuture<>();
        s.result = r;
        Verdict v = run(s, PENDING);
        return v != null ? CompletableFuture.completedFuture(v) : r;
    }

    /**
     * Runs the stages of {@code s} from {@link Decided#nextStage}: the verdict once every stage is decided, or null when
     * a stage's store call is in flight (then its completion runs the rest and completes {@link Decided#result}).
     *
     * @param resumed what the store call that suspended the stage {@link Decided#nextStage} answered, its stage to go
     *                on from there (the quota stage with its counters not yet asked); {@link #PENDING} to start the
     *                stage
     */
    private @Nullable Verdict run(Decided s, int resumed) {
        Counters c = s.counters;
        for (; s.nextStage <= Plan.DRY_RUN && s.refusedStage < 0; s.nextStage++) {
            int asking = resumed;
            resumed = PENDING;
            if (asking == PENDING) { // to the next stage that has a counter, if any
                int left = (c.stageBits & 0xFF) >>> s.nextStage;
                if (left == 0) {
                    break;
                }
                s.nextStage += (byte) Integer.numberOfTrailingZeros(left);
            }
            boolean quota = s.nextStage == Plan.QUOTA;
            if (asking != PENDING) {
                if (quota && asking == ASKED) {
                    asking = askQuota(s);
                }
            } else {
                if ((c.impossibleStages & 1 << s.nextStage) != 0) {
                    s.nowNanos = clock.millis() * 1_000_000L;
                    if (!quota) {
                        s.refusedStage = s.nextStage;
                        continue;
                    }
                }
                asking = quota ? askQuota(s) : ask(s, -1);
            }
            if (asking == PENDING) {
                return null;
            }
            asked(s, asking);
        }
        return verdict(s);
    }

    /** Takes up the stage whose store call completed with {@code joint} (or failed by {@code e}), and the rest. */
    private void resume(Decided s, int alone, @Nullable JointDecision joint, @Nullable Throwable e) {
        CompletableFuture<Verdict> r = Objects.requireNonNull(s.result, "a suspended check has its verdict to come");
        try {
            Verdict v = run(s, e != null ? failedUnlessSluice(e) : took(s, alone, joint));
            if (v != null) {
                r.complete(v);
            }
        } catch (Throwable t) { // a closed store, or a bug: the check fails rather than never answering
            r.completeExceptionally(t);
        }
    }

    /** What the stage {@link Decided#nextStage} did, once asked: its decisions counted, and its refusal or failure kept. */
    private void asked(Decided s, int asking) {
        boolean quota = s.nextStage == Plan.QUOTA;
        boolean failed = asking != ASKED;
        s.timedOut |= asking == TIMED_OUT;
        boolean allowed = !quota;
        Counter[] parts = s.counters.parts;
        for (int k = 0; k < parts.length && !failed; k++) {
            Decision d = s.decision(k);
            if (parts[k].stage == s.nextStage && d != null) {
                failed = d.failed();
                s.timedOut |= d.timedOut(); // the store's own timeout, before the check's deadline
                s.cachedRefusals += d.cached() ? 1 : 0;
                allowed = quota ? allowed || d.allowed() : allowed && d.allowed();
            }
        }
        if (failed && s.deadline != null && s.deadline.passed()) {
            s.timedOut = true; // the store's failure policy answered a call the deadline cut short
        }
        if (quota) {
            s.overQuota = overQuota(s, failed);
        }
        if (failed) {
            s.failedStages = (byte) (s.failedStages | 1 << s.nextStage);
            if (s.onFailure() == OnStoreFailure.DENY) {
                s.refusedStage = s.nextStage;
            }
        } else if (!allowed) {
            s.refusedStage = s.nextStage;
        }
    }

    private static Verdict verdict(Decided s) {
        s.result = null; // done: the verdict keeps no future
        return new Verdict(
                s.refusedStage != Plan.ENFORCE && s.refusedStage != Plan.QUOTA,
                s.shadowBan(),
                s.failedStages == 0 ? null : s.onFailure(),
                s.timedOut,
                s.refusedStage < 0 && !s.overQuota,
                s);
    }

    /**
     * Whether a limit of the quota stage refused, as {@link Decided#limit} answers it: a limit of 0 or below the cost
     * always, one the store refused unless the stage failed (then {@code on_store_failure} answered it).
     */
    private static boolean overQuota(Decided s, boolean failed) {
        Counter[] parts = s.counters.parts;
        for (int k = 0; k < parts.length; k++) {
            Decision d = s.decision(k);
            if (parts[k].stage == Plan.QUOTA && (parts[k].impossible || (!failed && d != null && !d.allowed()))) {
                return true;
            }
        }
        return false;
    }

    /**
     * What {@link #ask} did: the store decided (each counter asked has its decision), failed, or gave no answer by the
     * deadline; or its call is in flight, and its completion resumes the stages ({@link #resume}).
     */
    private static final int ASKED = 0;

    private static final int FAILED = 1;
    private static final int TIMED_OUT = 2;
    private static final int PENDING = -1;

    /**
     * Asks the store for the counters of the stage {@link Decided#nextStage}, all or nothing, and gives each its
     * decision; or, {@code alone} given, for that counter only. Without a deadline the store's call is made on this
     * thread however long it takes; with one, by the deadline, on this thread for a check that waits
     * ({@link StoreDeadline#decide}), else without waiting ({@link StoreDeadline#decideAsync}: {@link #PENDING} while
     * the call is in flight). {@link #FAILED} when the store failed by throwing (a store whose failure policy answered
     * returns decisions marked failed instead).
     *
     * @param alone the index of the one counter to ask, or -1 for every counter of the stage
     */
    private int ask(Decided s, int alone) {
        StoreDeadline d = s.deadline;
        Counters c = s.counters;
        try {
            if (d == null) {
                int k = alone >= 0 ? alone : c.only(s.nextStage);
                if (k >= 0) { // a joint request of one part, asked as the one decision it is
                    Acquisition a = c.parts[k].acquisition();
                    s.decision(k, a.limiter().tryAcquire(a.key(), a.cost()));
                    return ASKED;
                }
                answer(s, RateLimiter.tryAcquireAll(c.asked(s.nextStage)));
                return ASKED;
            }
            List<Acquisition> parts = alone >= 0 ? List.of(c.parts[alone].acquisition()) : c.asked(s.nextStage);
            if (s.result == null) {
                return took(s, alone, d.decide(parts, this));
            }
            CompletableFuture<JointDecision> joint = d.decideAsync(parts, this);
            if (joint.isDone()) {
                return took(s, alone, joinNow(joint));
            }
            var unused = joint.whenComplete((j, e) -> resume(s, alone, j, e));
            return PENDING;
        } catch (SluiceException e) {
            return FAILED;
        }
    }

    /**
     * Asks the store for each possible counter of the quota stage not yet asked (without its decision) on its own, each
     * counted if it has room, as {@link #ask} asks: {@link #ASKED} when every counter was, else what stopped it.
     */
    private int askQuota(Decided s) {
        Counter[] parts = s.counters.parts;
        for (int k = 0; k < parts.length; k++) {
            if (parts[k].stage == Plan.QUOTA && !parts[k].impossible && s.decision(k) == null) {
                int a = ask(s, k);
                if (a != ASKED) {
                    return a;
                }
            }
        }
        return ASKED;
    }

    /** The counters asked given their decisions from {@code joint}: {@code alone}, or every counter of the stage. */
    private static int took(Decided s, int alone, @Nullable JointDecision joint) {
        if (joint == null) {
            return TIMED_OUT;
        }
        if (alone >= 0) {
            s.decision(alone, joint.decision(0));
        } else {
            answer(s, joint);
        }
        return ASKED;
    }

    /** The value of a completed future, or what it failed with, thrown as it was. */
    private static @Nullable JointDecision joinNow(CompletableFuture<JointDecision> done) {
        try {
            return done.join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }

    /** {@link #FAILED} if {@code e} is a store failure ({@link SluiceException}), which fails the stage; else throws it. */
    private static int failedUnlessSluice(Throwable e) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        if (cause instanceof SluiceException) {
            return FAILED;
        }
        throw cause instanceof RuntimeException r ? r : new CompletionException(cause);
    }

    /**
     * Gives each counter of the stage {@link Decided#nextStage} its decision from {@code joint}, asked in the order of
     * {@link Counters#asked}.
     */
    private static void answer(Decided s, JointDecision joint) {
        Counter[] parts = s.counters.parts;
        int q = 0;
        for (int k = 0; k < parts.length; k++) {
            if (parts[k].stage == s.nextStage) {
                s.decision(k, joint.decision(q++));
            }
        }
    }

    /**
     * The index of the counter {@code key} of {@code limit} among the first {@code count} of {@code parts}, or -1. A
     * counter key names its rule and the limit's index in it ({@link Plan}), and a descriptor matches one rule, so
     * counters of another limit never have this key: they are passed over without comparing characters.
     */
    @SuppressWarnings("ReferenceEquality") // a rule's limit is one object in an engine
    private static int find(Counter[] parts, int count, String key, Limit limit) {
        for (int k = 0; k < count; k++) {
            if (parts[k].limit == limit && parts[k].key.equals(key)) {
                return k;
            }
        }
        return -1;
    }

    /** The names of the limits that matched limits of the request replace. */
    private static Set<String> replaced(List<Resolution> resolutions) {
        Set<String> replaced = new HashSet<>();
        for (Resolution r : resolutions) {
            Plan p = r.plan;
            if (p != null && p.replaces) {
                for (Limit l : p.limits) {
                    replaced.addAll(l.replaces());
                }
            }
        }
        replaced.remove(""); // an unnamed limit is never replaced
        return replaced;
    }

    /**
     * What {@code d} resolves to in the domain whose rules are {@code dom} (null for a domain the configuration does
     * not have; looked up once per request): from the table of recent resolutions, else matched and kept.
     */
    @SuppressWarnings("ReferenceEquality") // a domain's rules are one object for the life of this engine
    private Resolution resolve(@Nullable Domain dom, Descriptor d) {
        Objects.requireNonNull(d, "descriptor must not be null");
        if (dom == null) {
            return new Resolution(d, null, null, false);
        }
        @Nullable Resolution[] table = recent;
        int slot = slot(d, dom, table.length);
        Resolution r = table[slot];
        if (r != null && r.dom == dom && d.equals(r.descriptor)) {
            return r;
        }
        Resolution older = table[slot ^ 1];
        if (older != null && older.dom == dom && d.equals(older.descriptor)) {
            return older;
        }
        DomainPolicy.Node node = dom.policy.match(d);
        boolean kept = chars(d) <= MAX_CACHED_CHARS;
        r = new Resolution(d, dom, node == null ? null : dom.plans.get(node), kept);
        if (kept) {
            if (table[slot] == null) {
                table[slot] = r;
            } else if (table[slot ^ 1] == null) {
                table[slot ^ 1] = r;
            } else { // the pair keeps the two descriptors that fell in it last
                table[slot ^ 1] = table[slot];
                table[slot] = r;
            }
            if (table.length < maxRecent && ++made >= table.length / 2) {
                grow(table);
            }
        }
        return r;
    }

    /** Replaces the table of recent resolutions by one twice its size holding what it holds. */
    private void grow(@Nullable Resolution[] table) {
        @Nullable Resolution[] bigger = new Resolution[2 * table.length];
        for (Resolution r : table) {
            if (r != null) {
                int slot = slot(
                        r.descriptor, Objects.requireNonNull(r.dom, "only a known domain's are kept"), bigger.length);
                bigger[bigger[slot] == null ? slot : slot ^ 1] = r;
            }
        }
        made = 0;
        recent = bigger; // a resolution another thread keeps in the old table meanwhile is made again when next asked
    }

    /** The slot of {@code d} in the domain of {@code dom} in a table of {@code slots} slots, a power of two. */
    private static int slot(Descriptor d, Domain dom, int slots) {
        int h = hash(d, dom);
        return (h ^ (h >>> 16)) & (slots - 1);
    }

    /** The hash of {@code d} in the domain of {@code dom}. */
    private static int hash(Descriptor d, Domain dom) {
        return d.hashCode() * 31 + dom.hash;
    }

    /** The characters of {@code d}'s keys and values, against {@link #MAX_CACHED_CHARS}. */
    static int chars(Descriptor d) {
        int n = 0;
        for (Descriptor.Entry e : d.entries()) {
            n += e.key().length() + e.value().length();
        }
        return n;
    }

    /** The counter keys of {@code d} in {@code domain}, as a check resolves them; null when no rule applies. */
    @Nullable
    String @Nullable [] keysForTest(String domain, Descriptor d) {
        return resolve(domains.get(domain), d).keys;
    }

    /** The slots of the table of recent resolutions now. */
    int recentSlotsForTest() {
        return recent.length;
    }

    /** A limit refused without asking the store: a limit of 0, or a cost above the limit. */
    private static LimitVerdict impossible(Limit l, int stage, long nowNanos) {
        long w = Objects.requireNonNull(l.window(), "a limited Limit has one").toNanos();
        long reset = w - Math.floorMod(nowNanos, w);
        return new LimitVerdict(l, refusal(stage), 0, reset, l.requestsPerUnit() == 0 ? reset : Long.MAX_VALUE, false);
    }

    /** How a limit of {@code stage} refused; -1: a quota limit over while the request was allowed. */
    private static Outcome refusal(int stage) {
        return stage < 0
                ? Outcome.OVER_QUOTA
                : stage == Plan.ENFORCE || stage == Plan.QUOTA
                        ? Outcome.DENIED
                        : stage == Plan.SHADOW_BAN ? Outcome.SHADOW_BANNED : Outcome.WOULD_DENY;
    }
}
