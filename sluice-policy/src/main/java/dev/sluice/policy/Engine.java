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
        /**
         * The first limit's key and permit, as in {@link #keys} and {@link #ones}: a rule usually has one limit, and a
         * check of it then reads neither array.
         */
        private final @Nullable String key0;

        private final @Nullable Acquisition one0;

        Resolution(Descriptor descriptor, @Nullable Domain dom, @Nullable Plan plan) {
            this.descriptor = descriptor;
            this.dom = dom;
            this.plan = plan;
            if (plan == null) {
                this.keys = null;
                this.ones = null;
                this.key0 = null;
                this.one0 = null;
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
            this.key0 = keys.length == 0 ? null : keys[0];
            this.one0 = ones.length == 0 ? null : ones[0];
        }

        /** The key of limit {@code j} of its plan; null where the limit has no counter. */
        @Nullable
        String key(int j) {
            return j == 0 ? key0 : Objects.requireNonNull(keys, "a resolution with a plan has its keys")[j];
        }

        /** One permit of limit {@code j}'s counter; null where it has none. */
        @Nullable
        Acquisition one(int j) {
            return j == 0 ? one0 : Objects.requireNonNull(ones, "a resolution with a plan has its keys")[j];
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
     * One counter of the request: a limiter and key, with the costs of every limit naming them added. The first counter
     * of a request is its {@link Decided} itself ({@link #count}), so a request of one counter makes one object.
     */
    private static class Part {
        /** Null for a limit of 0, which is impossible and never asks. */
        @Nullable
        RateLimiter limiter;

        String key = "";

        @Nullable
        Limit limit;

        /** The {@link Plan} stage of its limit (a byte: a request's parts and record are made per check). */
        byte stage;

        long cost;
        /** Null until its stage is answered by the store; stays null if the stage did not run or the store failed. */
        @Nullable
        Decision decision;
        /** Refused without asking the store: a limit of 0, or a cost above the limit. */
        boolean impossible;
        /** The next part of the request, in the order of the request. */
        @Nullable
        Part next;

        /** One permit of this counter, kept by the resolution; null for a limit of 0. */
        private @Nullable Acquisition one;

        /** Not a counter until {@link #count} makes it one. */
        Part() {}

        /** Makes this the part of the counter {@code key} of {@code limiter}, for {@code limit} of {@code stage}. */
        final Part count(@Nullable RateLimiter limiter, String key, Limit limit, int stage, @Nullable Acquisition one) {
            this.limiter = limiter;
            this.key = key;
            this.limit = limit;
            this.stage = (byte) stage;
            this.one = one;
            return this;
        }

        /** The limit this part was made for; only once {@link #count} made it a counter. */
        final Limit limit() {
            return Objects.requireNonNull(limit, "a part counts once it has its limit");
        }

        /** What the store is asked for this part: its cost of its counter. */
        Acquisition acquisition() {
            Acquisition a = one;
            return a != null && cost == 1
                    ? a
                    : new Acquisition(
                            Objects.requireNonNull(limiter, "a limit of 0 has none, and is impossible"), key, cost);
        }
    }

    /**
     * What {@link #decide} decided for a request, from which its {@link Verdict} builds the answer of every descriptor
     * and limit when first read ({@link #descriptors}). It is also the request's first counter ({@link Part}), if it
     * has one, and the state of the request's stages while they run (so a check that waits on its own thread makes no
     * object for them). Made before the stages run, given its counters by {@link #stages}, completed by the stages,
     * and not changed after its verdict is made.
     */
    static final class Decided extends Part {
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
        /**
         * The part of each limit (slot) of the request. Usually each slot that has a part has one of its own, in the
         * order of the parts: then {@link #fresh} has a bit per such slot (the k-th bit set names the k-th part) and
         * there is no array; {@link #bySlot} names every slot's part when a slot shares an earlier slot's counter or
         * there are more than 32 slots.
         */
        private int fresh;

        private @Nullable Part @Nullable [] bySlot;
        private @Nullable Set<String> replaced;
        // the stages' numbers and bits are bytes, as Part.stage: a check makes this record, so each byte counts
        private byte refusedStage = -1;
        private byte failedStages;
        /** The time the impossible limits report their reset from; -1 when there are none. */
        private long nowNanos = -1;
        /** The limits refused by a store's over-limit cache, without a store call ({@link Decision#cached()}). */
        int cachedRefusals;

        // While the stages run (Engine.run): a bit per stage that has a part (the counters are this record's, from
        // head() on), the next stage to run, and what the stages met so far
        private byte stageBits;
        private byte nextStage = Plan.ENFORCE;
        private @Nullable StoreDeadline deadline;
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
                Resolution @Nullable [] rest) {
            this.request = request;
            this.first = first;
            this.second = second;
            this.third = third;
            this.rest = rest;
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

        /**
         * The request's first counter, in the order of the request (the others follow through {@link Part#next}): this
         * record itself, which {@link #stages} makes the first part; null when the request has no counter.
         */
        private @Nullable Part head() {
            return stageBits == 0 ? null : this;
        }

        /**
         * Completes the record before its stages run: a bit per stage that has a counter, each limit's counter, the
         * limits replaced and the deadline.
         */
        void stages(
                int stageBits,
                int fresh,
                @Nullable Part @Nullable [] bySlot,
                @Nullable Set<String> replaced,
                @Nullable StoreDeadline deadline) {
            this.stageBits = (byte) stageBits;
            this.fresh = fresh;
            this.bySlot = bySlot;
            this.replaced = replaced;
            this.deadline = deadline;
        }

        private @Nullable Plan plan(int i) {
            return resolution(i).plan;
        }

        private @Nullable Part part(int slot) {
            if (bySlot != null) {
                return bySlot[slot];
            }
            if (slot >= Integer.SIZE || (fresh & (1 << slot)) == 0) { // a shift takes the slot modulo 32
                return null;
            }
            Part p = head();
            for (int k = Integer.bitCount(fresh & ((1 << slot) - 1)); k > 0 && p != null; k--) {
                p = p.next;
            }
            return p;
        }

        /** The answer of limit {@code j} of {@code p}, whose part is {@code part}: the one place outcomes are given. */
        private LimitVerdict limit(Plan p, int j, @Nullable Part part) {
            Limit l = p.limits[j];
            if (part == null) {
                Outcome o = l.unlimited() && (replaced == null || !replaced.contains(l.name()))
                        ? Outcome.UNLIMITED
                        : Outcome.REPLACED;
                return new LimitVerdict(l, o, Long.MAX_VALUE, 0, 0, false);
            }
            if (part.impossible) {
                return impossible(l, p.stage == Plan.QUOTA && p.stage != refusedStage ? -1 : p.stage, nowNanos);
            }
            if ((failedStages & (1 << p.stage)) != 0) {
                Outcome o = onFailure() == OnStoreFailure.DENY ? refusal(p.stage) : Outcome.ALLOWED;
                return new LimitVerdict(l, o, -1, 0, 0, true);
            }
            Decision d = part.decision;
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
                    if (p.stage == Plan.SHADOW_BAN && limit(p, j, part(slot)).outcome() == Outcome.SHADOW_BANNED) {
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
                    verdicts[j] = limit(p, j, part(slot));
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

    /** The stages of a request: its descriptors resolved and its counters made, not yet asked. */
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
        Decided decided = new Decided(descriptors, first, second, third, rest);
        int slots = 0;
        boolean replaces = false;
        for (int i = 0; i < n; i++) {
            Plan p = decided.resolution(i).plan;
            if (p != null) {
                slots += p.limits.length;
                replaces |= p.replaces;
            }
        }
        Set<String> replaced = replaces ? replaced(decided, n) : null;

        // The counters: one part per limiter and key, in the order of the request (a list through Part.next); each
        // limit (slot) names its part, or none when it is replaced or unlimited: by a bit per slot while each slot's
        // part is a new one (Decided.fresh), in an array from the first slot that shares an earlier slot's part.
        int fresh = 0;
        @Nullable Part[] bySlot = null;
        Part head = null;
        Part tail = null;
        int stages = 0; // a bit per stage that has a part
        Map<String, Part> byKey = slots > 8 ? new HashMap<>() : null;
        int slot = 0;
        for (int i = 0; i < n; i++) {
            Resolution r = decided.resolution(i);
            Plan p = r.plan;
            if (p == null) {
                continue;
            }
            long cost = costs == null ? hits : costs[i];
            for (int j = 0; j < p.limits.length; j++, slot++) {
                Limit l = p.limits[j];
                String key = r.key(j);
                if (key == null || (replaced != null && replaced.contains(l.name()))) {
                    continue;
                }
                Part part = byKey != null ? byKey.get(key) : find(head, key, l);
                boolean shared = part != null;
                if (part == null) {
                    part = (head == null ? decided : new Part()).count(p.limiters[j], key, l, p.stage, r.one(j));
                    stages |= 1 << p.stage;
                    if (tail == null) {
                        head = part;
                    } else {
                        tail.next = part;
                    }
                    tail = part;
                    if (byKey != null) {
                        byKey.put(key, part);
                    }
                }
                part.cost = part.cost > Long.MAX_VALUE - cost ? Long.MAX_VALUE : part.cost + cost;
                if (bySlot == null && !shared && slot < Integer.SIZE) {
                    fresh |= 1 << slot;
                } else {
                    if (bySlot == null) {
                        bySlot = bySlot(head, fresh, slots);
                    }
                    bySlot[slot] = part;
                }
            }
        }

        decided.stages(stages, fresh, bySlot, replaced, deadline);
        return decided;
    }

    /*
     * The stages of one request, in order ({@link #decide}): each asks the store for its parts unless a stage before
     * it refused. A check that waits for no thread ({@link #decideAsync}) suspends here while a stage's store call is
     * in flight, and goes on with the next stage on the thread that completes it. Their state is the request's
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
     *                on from there (the quota stage with its parts not yet asked); {@link #PENDING} to start the stage
     */
    private @Nullable Verdict run(Decided s, int resumed) {
        for (; s.nextStage <= Plan.DRY_RUN && s.refusedStage < 0; s.nextStage++) {
            int asking = resumed;
            resumed = PENDING;
            if (asking == PENDING) { // to the next stage that has a part, if any
                int left = (s.stageBits & 0xFF) >>> s.nextStage;
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
                int asked = 0;
                Part one = null;
                boolean impossible = false;
                for (Part p = s.head(); p != null; p = p.next) {
                    if (p.stage == s.nextStage) {
                        asked++;
                        one = p;
                        long limit = p.limit().requestsPerUnit();
                        if (limit == 0 || p.cost > limit) {
                            p.impossible = true;
                            impossible = true;
                        }
                    }
                }
                if (one == null) {
                    continue;
                }
                if (impossible) {
                    s.nowNanos = clock.millis() * 1_000_000L;
                    if (!quota) {
                        s.refusedStage = s.nextStage;
                        continue;
                    }
                }
                asking = quota ? askQuota(s) : ask(s, asked == 1 ? one : null, asked);
            }
            if (asking == PENDING) {
                return null;
            }
            asked(s, asking);
        }
        return verdict(s);
    }

    /** Takes up the stage whose store call completed with {@code joint} (or failed by {@code e}), and the rest. */
    private void resume(Decided s, @Nullable Part alone, @Nullable JointDecision joint, @Nullable Throwable e) {
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
        for (Part p = s.head(); p != null && !failed; p = p.next) {
            Decision d = p.decision;
            if (p.stage == s.nextStage && d != null) {
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
            s.overQuota = overQuota(s.head(), failed);
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
    private static boolean overQuota(@Nullable Part head, boolean failed) {
        for (Part p = head; p != null; p = p.next) {
            Decision d = p.decision;
            if (p.stage == Plan.QUOTA && (p.impossible || (!failed && d != null && !d.allowed()))) {
                return true;
            }
        }
        return false;
    }

    /**
     * What {@link #ask} did: the store decided (each part asked has its decision), failed, or gave no answer by the
     * deadline; or its call is in flight, and its completion resumes the stages ({@link #resume}).
     */
    private static final int ASKED = 0;

    private static final int FAILED = 1;
    private static final int TIMED_OUT = 2;
    private static final int PENDING = -1;

    /**
     * Asks the store for the {@code asked} parts of the stage {@link Decided#nextStage}, all or nothing, and gives each
     * its decision; or, {@code alone} given, for that part only. Without a deadline the store's call is made on this
     * thread however long it takes; with one, by the deadline, on this thread for a check that waits
     * ({@link StoreDeadline#decide}), else without waiting ({@link StoreDeadline#decideAsync}: {@link #PENDING} while
     * the call is in flight). {@link #FAILED} when the store failed by throwing (a store whose failure policy answered
     * returns decisions marked failed instead).
     *
     * @param alone the one part to ask, or null for every part of the stage
     */
    private int ask(Decided s, @Nullable Part alone, int asked) {
        StoreDeadline d = s.deadline;
        try {
            if (d == null) {
                if (alone != null) { // tryAcquireAll of one part, without its list
                    alone.decision = Objects.requireNonNull(alone.limiter, "a limit of 0 has none, and is impossible")
                            .tryAcquire(alone.key, alone.cost);
                    return ASKED;
                }
                answer(s.head(), s.nextStage, RateLimiter.tryAcquireAll(acquisitions(s.head(), s.nextStage, asked)));
                return ASKED;
            }
            List<Acquisition> parts =
                    alone != null ? List.of(alone.acquisition()) : acquisitions(s.head(), s.nextStage, asked);
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
     * Asks the store for each possible part of the quota stage not yet asked (without its decision) on its own, each
     * counted if it has room, as {@link #ask} asks: {@link #ASKED} when every part was, else what stopped it.
     */
    private int askQuota(Decided s) {
        for (Part p = s.head(); p != null; p = p.next) {
            if (p.stage == Plan.QUOTA && !p.impossible && p.decision == null) {
                int a = ask(s, p, 1);
                if (a != ASKED) {
                    return a;
                }
            }
        }
        return ASKED;
    }

    /** The parts asked given their decisions from {@code joint}: {@code alone}, or every part of the stage. */
    private static int took(Decided s, @Nullable Part alone, @Nullable JointDecision joint) {
        if (joint == null) {
            return TIMED_OUT;
        }
        if (alone != null) {
            alone.decision = joint.decision(0);
        } else {
            answer(s.head(), s.nextStage, joint);
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

    /** The acquisitions of the {@code asked} parts of {@code stage}, in the order of the request. */
    private static List<Acquisition> acquisitions(@Nullable Part head, int stage, int asked) {
        Acquisition[] acquisitions = new Acquisition[asked];
        int k = 0;
        for (Part p = head; p != null; p = p.next) {
            if (p.stage == stage) {
                acquisitions[k++] = p.acquisition();
            }
        }
        return Arrays.asList(acquisitions);
    }

    /** Gives each part of {@code stage} its decision from {@code joint}, asked in {@link #acquisitions} order. */
    private static void answer(@Nullable Part head, int stage, JointDecision joint) {
        int q = 0;
        for (Part p = head; p != null; p = p.next) {
            if (p.stage == stage) {
                p.decision = joint.decision(q++);
            }
        }
    }

    /** The part of each of {@code slots} slots, from a bit per slot whose part is the next one from {@code head}. */
    private static @Nullable Part[] bySlot(@Nullable Part head, int fresh, int slots) {
        @Nullable Part[] bySlot = new Part[slots];
        Part p = head;
        for (int f = fresh; f != 0 && p != null; f &= f - 1, p = p.next) {
            bySlot[Integer.numberOfTrailingZeros(f)] = p;
        }
        return bySlot;
    }

    /**
     * The part of counter {@code key} of {@code limit} among the parts from {@code head}, or null. A counter key names
     * its rule and the limit's index in it ({@link Plan}), and a descriptor matches one rule, so parts of another limit
     * never have this key: they are passed over without comparing characters.
     */
    @SuppressWarnings("ReferenceEquality") // a rule's limit is one object in an engine
    private static @Nullable Part find(@Nullable Part head, String key, Limit limit) {
        for (Part p = head; p != null; p = p.next) {
            if (p.limit == limit && p.key.equals(key)) {
                return p;
            }
        }
        return null;
    }

    /** The names of the limits that matched limits of the request replace. */
    private static Set<String> replaced(Decided request, int descriptors) {
        Set<String> replaced = new HashSet<>();
        for (int i = 0; i < descriptors; i++) {
            Plan p = request.resolution(i).plan;
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
            return new Resolution(d, null, null);
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
        r = new Resolution(d, dom, node == null ? null : dom.plans.get(node));
        if (chars(d) <= MAX_CACHED_CHARS) {
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
        int h = d.hashCode() * 31 + dom.hash;
        return (h ^ (h >>> 16)) & (slots - 1);
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
