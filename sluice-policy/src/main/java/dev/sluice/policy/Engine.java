package dev.sluice.policy;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import org.jspecify.annotations.Nullable;

/**
 * One loaded configuration made ready to decide: the policies and one {@link RateLimiter} per distinct limit shape
 * (algorithm, limit, window), built once. Immutable after construction; swapped whole on reload.
 *
 * <p>How a request is decided. Every descriptor is matched to its rule; limits named in another matched limit's
 * {@code replaces} are dropped; unlimited limits are answered at once. The remaining limits are taken in three
 * stages, each all or nothing through {@link RateLimiter#tryAcquireAll}: the enforced limits, then the shadow-ban
 * limits, then the dry-run limits. A stage runs only if every stage before it passed, so a refused request consumes
 * from no limit at all, and a dry-run limit counts exactly the requests that would reach it if it were enforced.
 * Example: a request under an enforced 10/s and a dry-run 5/s, the sixth in a second: the enforced stage passes and
 * counts; the dry-run stage refuses and counts nothing, so the request is allowed and counted as a "would deny"; an
 * eleventh request is refused by the enforced stage and the dry-run stage never runs.
 *
 * <p>Counter keys: {@code domain|key=value|key=value#i}, {@code i} the limit's index in its rule, with {@code |},
 * {@code =}, {@code ~}, {@code #} and {@code \} escaped; an entry matched by a shared-threshold wildcard is written
 * {@code key~pattern}, so every value it matches shares one counter. The entries name the rule path (one descriptor
 * shape matches one rule) and the values the counter under it.
 *
 * <p>Closing: a check holds the engine ({@link #retain(int)}) while it runs. A replaced engine is retired; its limiters
 * are closed when the last check holding it is done, never under a running check.
 */
final class Engine {

    /** Shape of a limiter: the limits sharing it share the limiter, under different keys. */
    record Shape(Algorithm algorithm, long limit, Duration window) {}

    final Policies policies;
    final long version;
    private final Map<Shape, RateLimiter> limiters;
    private final IdentityHashMap<Limit, RateLimiter> byLimit;
    /** Per domain, its rules compiled for {@link #decideOne}. */
    private final Map<String, RuleTree> trees;

    private final RuleTree.Budget budget = new RuleTree.Budget(RuleTree.MAX_CACHED);
    private final Clock clock;
    private final boolean dryRun;

    /**
     * In-flight checks, counted in {@value #STRIPES} stripes {@value #PAD} longs apart (a cache line or two each), so
     * checks on different threads write different lines; a check increments and decrements the stripe of its thread.
     */
    private final AtomicLongArray holds = new AtomicLongArray(STRIPES * PAD);

    private static final int STRIPES = 16;
    private static final int PAD = 16;

    private volatile boolean retired;
    private final AtomicBoolean closed = new AtomicBoolean();

    Engine(
            Policies policies,
            long version,
            RateLimitStore store,
            Clock clock,
            RateLimitListener listener,
            boolean dryRun) {
        this.policies = policies;
        this.version = version;
        this.clock = clock;
        this.dryRun = dryRun;
        Map<Shape, RateLimiter> built = new HashMap<>();
        IdentityHashMap<Limit, RateLimiter> map = new IdentityHashMap<>();
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
                        RateLimiter limiter;
                        try {
                            limiter = built.computeIfAbsent(s, k -> RateLimiter.builder(k.algorithm())
                                    .limit(k.limit(), k.window())
                                    .clock(clock)
                                    .store(store)
                                    .listener(listener)
                                    .build());
                        } catch (IllegalArgumentException e) {
                            // synchronized and leased mode keep only the algorithms whose state is counts per frame
                            refused.add(rule.error("rule " + rule.path() + ", limit " + l + ": the store refuses it: "
                                    + e.getMessage()));
                            continue;
                        }
                        map.put(l, limiter);
                    }
                }
            }
            if (!refused.isEmpty()) {
                throw new PolicyException(refused);
            }
        } catch (RuntimeException e) {
            built.values().forEach(RateLimiter::close);
            throw e;
        }
        this.limiters = Map.copyOf(built);
        this.byLimit = map;
        Map<String, RuleTree> compiled = new HashMap<>();
        for (String domain : policies.domains()) {
            DomainPolicy p = Objects.requireNonNull(policies.domainPolicy(domain), "a domain listed has a policy");
            // interned, as the descriptor keys and values of the trees are: a caller that names them with literals
            // (check("oauth-token", Descriptor.of("client_id", id))) passes these very strings, which a lookup then
            // matches by identity instead of comparing their characters
            compiled.put(domain.intern(), RuleTree.compile(p, map::get, dryRun, budget, this));
        }
        this.trees = compiled;
    }

    int limiterCount() {
        return limiters.size();
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
     * written is zero only when every check that saw the engine in force is done.
     */
    boolean retain(int stripe) {
        holds.getAndIncrement(stripe);
        if (retired) {
            release(stripe);
            return false;
        }
        return true;
    }

    void release(int stripe) {
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
            limiters.values().forEach(RateLimiter::close);
        }
    }

    boolean closed() {
        return closed.get();
    }

    /** One limit of the request, and then its answer. */
    private static final class Slot {
        final Limit limit;
        final int stage;
        /** Null when the limit asks no limiter: replaced, unlimited, or a limit of 0. */
        final @Nullable RateLimiter limiter;
        /** Null for a replaced or unlimited limit, which has its outcome at once. */
        @Nullable
        Part part;
        /** Set at once for a replaced or unlimited limit; null for the others, answered by their part. */
        @Nullable
        Outcome outcome;

        Slot(Limit limit, int stage, @Nullable RateLimiter limiter) {
            this.limit = limit;
            this.stage = stage;
            this.limiter = limiter;
        }
    }

    /** What is taken from one limiter and key: the costs of every slot naming them, added. */
    private static final class Part {
        /** Null for a limit of 0, which is impossible and never asks. */
        final @Nullable RateLimiter limiter;

        final String key;
        final Limit limit;
        long cost;
        /** Null until its stage runs; stays null if an earlier stage refused, or its own was impossible. */
        @Nullable
        Decision decision;
        /** Refused without asking the store: a limit of 0, or a cost above the limit. */
        boolean impossible;

        Part(@Nullable RateLimiter limiter, String key, Limit limit) {
            this.limiter = limiter;
            this.key = key;
            this.limit = limit;
        }
    }

    private static final int ENFORCE = 0;
    private static final int SHADOW_BAN = 1;
    private static final int DRY_RUN = 2;

    static int stage(Mode mode, boolean dryRun) {
        return dryRun ? DRY_RUN : mode == Mode.ENFORCE ? ENFORCE : mode == Mode.SHADOW_BAN ? SHADOW_BAN : DRY_RUN;
    }

    /** Decides a request: {@link #decideOne} when it can, else {@link #decideAny}. */
    Verdict decide(String domain, List<Descriptor> descriptors, long hits) {
        if (descriptors.size() == 1) {
            Verdict v = decideOne(domain, descriptors.get(0), hits);
            if (v != null) {
                return v;
            }
        }
        return decideAny(domain, descriptors, hits);
    }

    /**
     * Decides a request of one descriptor whose rule replaces nothing, the common case, as {@link #decideAny} does,
     * with what {@link RuleTree} made ready: no map of parts, no stage lists (one rule is one stage), the rule and
     * counter keys resolved once per descriptor value and kept in the descriptor, and one limit asked with
     * {@link RateLimiter#tryAcquire(String, long)}, which is {@link RateLimiter#tryAcquireAll} of one part. Null
     * when the rule replaces limits: {@link #decideAny} then.
     */
    @Nullable
    Verdict decideOne(String domain, Descriptor d, long hits) {
        Objects.requireNonNull(d, "descriptor must not be null");
        RuleTree.Resolved r = d.resolved;
        if (r == null || r.engine != this || !r.domain.equals(domain)) {
            RuleTree tree = trees.get(domain);
            r = tree == null ? null : tree.resolve(d);
            if (r != null) {
                d.resolved = r;
            }
        }
        RuleTree.Plan plan = r == null ? null : r.plan;
        if (r == null || plan == null) {
            return new Verdict(true, null, List.of(new DescriptorVerdict(d, null, List.of())));
        }
        if (plan.replaces) {
            return null;
        }
        Limit[] limits = plan.limits;
        int stage = plan.stage;
        boolean impossible = hits > plan.smallest;
        @Nullable String[] keys = r.keys;
        if (limits.length == 1 && plan.asked == 1 && !impossible) { // one limit: its verdicts are built when read
            RateLimiter limiter = Objects.requireNonNull(plan.limiters[0], "a limit above 0 has a limiter");
            Decision one = limiter.tryAcquire(Objects.requireNonNull(Objects.requireNonNull(keys)[0]), hits);
            Outcome o = one.allowed() ? Outcome.ALLOWED : refusal(stage);
            return new Verdict(
                    o != Outcome.DENIED,
                    o == Outcome.SHADOW_BANNED ? plan.rule : null,
                    d,
                    plan.rule,
                    limits[0],
                    o,
                    one);
        }
        int asked = plan.asked;
        Decision one = null;
        JointDecision joint = null;
        boolean refused = impossible;
        if (asked == 1 && !impossible) {
            int only = plan.lastAsked;
            RateLimiter limiter = Objects.requireNonNull(plan.limiters[only], "a limit above 0 has a limiter");
            one = limiter.tryAcquire(Objects.requireNonNull(Objects.requireNonNull(keys)[only]), hits);
            refused = !one.allowed();
        } else if (asked > 1 && !impossible) {
            Acquisition[] parts = new Acquisition[asked];
            int k = 0;
            for (int j = 0; j < limits.length; j++) {
                if (!limits[j].unlimited()) {
                    RateLimiter limiter = Objects.requireNonNull(plan.limiters[j], "a limit above 0 has a limiter");
                    parts[k++] =
                            new Acquisition(limiter, Objects.requireNonNull(Objects.requireNonNull(keys)[j]), hits);
                }
            }
            joint = RateLimiter.tryAcquireAll(Arrays.asList(parts));
            refused = !joint.allowed();
        }
        LimitVerdict first = null;
        LimitVerdict[] out = limits.length == 1 ? null : new LimitVerdict[limits.length];
        boolean banned = false;
        int k = 0;
        long nowNanos = -1;
        for (int j = 0; j < limits.length; j++) {
            Limit l = limits[j];
            LimitVerdict v;
            if (l.unlimited()) {
                v = new LimitVerdict(l, Outcome.UNLIMITED, Long.MAX_VALUE, 0, 0, false);
            } else if (impossible) {
                if (l.requestsPerUnit() == 0 || hits > l.requestsPerUnit()) {
                    if (nowNanos < 0) {
                        nowNanos = clock.millis() * 1_000_000L;
                    }
                    v = impossible(l, stage, nowNanos);
                } else {
                    v = new LimitVerdict(l, Outcome.NOT_COUNTED, -1, 0, 0, false);
                }
            } else {
                Decision dec = joint != null ? joint.decision(k++) : Objects.requireNonNull(one);
                Outcome o = !refused ? Outcome.ALLOWED : dec.allowed() ? Outcome.NOT_COUNTED : refusal(stage);
                v = new LimitVerdict(l, o, dec.remaining(), dec.resetAfterNanos(), dec.retryAfterNanos(), dec.failed());
            }
            banned |= v.outcome() == Outcome.SHADOW_BANNED;
            if (out == null) {
                first = v;
            } else {
                out[j] = v;
            }
        }
        List<LimitVerdict> verdicts = out == null ? List.of(Objects.requireNonNull(first)) : List.of(out);
        return new Verdict(
                !(refused && stage == ENFORCE),
                banned ? plan.rule : null,
                List.of(new DescriptorVerdict(d, plan.rule, verdicts)));
    }

    /**
     * The counter keys {@link #decideOne} uses for {@code d}, resolved by its tree (not taken from the descriptor);
     * null when no rule applies.
     */
    @Nullable
    String @Nullable [] keysForTest(String domain, Descriptor d) {
        RuleTree tree = trees.get(domain);
        return tree == null ? null : tree.resolve(d).keys;
    }

    int cachedKeysForTest() {
        return budget.used();
    }

    /** A limit refused without asking the store: a limit of 0, or a cost above the limit. */
    private static LimitVerdict impossible(Limit l, int stage, long nowNanos) {
        long w = Objects.requireNonNull(l.window(), "a limited Limit has one").toNanos();
        long reset = w - Math.floorMod(nowNanos, w);
        return new LimitVerdict(l, refusal(stage), 0, reset, l.requestsPerUnit() == 0 ? reset : Long.MAX_VALUE, false);
    }

    /** Decides any request: several descriptors, limits that replace others. */
    Verdict decideAny(String domain, List<Descriptor> descriptors, long hits) {
        int n = descriptors.size();
        DomainPolicy.@Nullable Match[] matches = new DomainPolicy.@Nullable Match[n];
        Set<String> replaced = null;
        for (int i = 0; i < n; i++) {
            DomainPolicy.Match m = policies.matchFull(domain, descriptors.get(i));
            matches[i] = m;
            if (m != null) {
                for (Limit l : m.rule().limits()) {
                    if (!l.replaces().isEmpty()) {
                        if (replaced == null) {
                            replaced = new HashSet<>();
                        }
                        replaced.addAll(l.replaces());
                    }
                }
            }
        }
        List<List<Slot>> slots = new ArrayList<>(n);
        Map<String, Part> parts = new HashMap<>();
        List<List<Part>> stages = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        for (int i = 0; i < n; i++) {
            DomainPolicy.Match m = matches[i];
            if (m == null) {
                slots.add(List.of());
                continue;
            }
            Rule rule = m.rule();
            List<Limit> limits = rule.limits();
            List<Slot> mine = new ArrayList<>(limits.size());
            String base = null;
            int stage = stage(rule.mode(), dryRun);
            for (int j = 0; j < limits.size(); j++) {
                Limit l = limits.get(j);
                if (replaced != null && !l.name().isEmpty() && replaced.contains(l.name())) {
                    Slot s = new Slot(l, stage, null);
                    s.outcome = Outcome.REPLACED;
                    mine.add(s);
                } else if (l.unlimited()) {
                    Slot s = new Slot(l, stage, null);
                    s.outcome = Outcome.UNLIMITED;
                    mine.add(s);
                } else {
                    if (base == null) {
                        base = counterKey(domain, descriptors.get(i), m.shared());
                    }
                    String key = base + "#" + j;
                    Slot s = new Slot(l, stage, byLimit.get(l));
                    Part p = parts.get(key);
                    if (p == null || p.limiter != s.limiter) {
                        p = new Part(s.limiter, key, l);
                        parts.put(key, p);
                        stages.get(stage).add(p);
                    }
                    p.cost += hits;
                    s.part = p;
                    mine.add(s);
                }
            }
            slots.add(mine);
        }

        int refusedStage = -1;
        for (int stage = ENFORCE; stage <= DRY_RUN && refusedStage < 0; stage++) {
            List<Part> list = stages.get(stage);
            if (list.isEmpty()) {
                continue;
            }
            boolean impossible = false;
            for (Part p : list) {
                if (p.limit.requestsPerUnit() == 0 || p.cost > p.limit.requestsPerUnit()) {
                    p.impossible = true;
                    impossible = true;
                }
            }
            if (impossible) {
                refusedStage = stage;
                continue;
            }
            List<Acquisition> acquisitions = new ArrayList<>(list.size());
            for (Part p : list) {
                RateLimiter limiter = Objects.requireNonNull(p.limiter, "a limit of 0 has none, and is impossible");
                acquisitions.add(new Acquisition(limiter, p.key, p.cost));
            }
            JointDecision jd = RateLimiter.tryAcquireAll(acquisitions);
            for (int k = 0; k < list.size(); k++) {
                list.get(k).decision = jd.decision(k);
            }
            if (!jd.allowed()) {
                refusedStage = stage;
            }
        }

        long nowNanos = -1;
        Rule shadowBan = null;
        List<DescriptorVerdict> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            DomainPolicy.Match m = matches[i];
            Rule rule = m == null ? null : m.rule();
            List<Slot> mine = slots.get(i);
            List<LimitVerdict> verdicts = new ArrayList<>(mine.size());
            for (Slot s : mine) {
                if (s.outcome == Outcome.REPLACED || s.outcome == Outcome.UNLIMITED) {
                    verdicts.add(new LimitVerdict(s.limit, s.outcome, Long.MAX_VALUE, 0, 0, false));
                    continue;
                }
                Part p = Objects.requireNonNull(s.part, "a slot neither replaced nor unlimited has its part");
                if (p.impossible) {
                    if (nowNanos < 0) {
                        nowNanos = clock.millis() * 1_000_000L;
                    }
                    verdicts.add(impossible(s.limit, s.stage, nowNanos));
                } else if (p.decision == null) {
                    verdicts.add(new LimitVerdict(s.limit, Outcome.NOT_COUNTED, -1, 0, 0, false));
                } else {
                    Decision d = p.decision;
                    Outcome o;
                    if (s.stage != refusedStage) {
                        o = Outcome.ALLOWED;
                    } else {
                        o = d.allowed() ? Outcome.NOT_COUNTED : refusal(s.stage);
                    }
                    verdicts.add(new LimitVerdict(
                            s.limit, o, d.remaining(), d.resetAfterNanos(), d.retryAfterNanos(), d.failed()));
                }
                if (s.stage == SHADOW_BAN
                        && s.stage == refusedStage
                        && shadowBan == null
                        && verdicts.get(verdicts.size() - 1).outcome() == Outcome.SHADOW_BANNED) {
                    shadowBan = rule;
                }
            }
            out.add(new DescriptorVerdict(descriptors.get(i), rule, verdicts));
        }
        return new Verdict(refusedStage != ENFORCE, shadowBan, out);
    }

    private static Outcome refusal(int stage) {
        return stage == ENFORCE ? Outcome.DENIED : stage == SHADOW_BAN ? Outcome.SHADOW_BANNED : Outcome.WOULD_DENY;
    }

    static String counterKey(String domain, Descriptor d, @Nullable String @Nullable [] shared) {
        StringBuilder sb = new StringBuilder(64);
        escape(sb, domain);
        List<Descriptor.Entry> entries = d.entries();
        for (int i = 0; i < entries.size(); i++) {
            Descriptor.Entry e = entries.get(i);
            sb.append('|');
            escape(sb, e.key());
            String pattern = shared == null ? null : shared[i];
            if (pattern != null) {
                sb.append('~');
                escape(sb, pattern);
            } else {
                sb.append('=');
                escape(sb, e.value());
            }
        }
        return sb.toString();
    }

    static void escape(StringBuilder sb, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '|' || c == '=' || c == '~' || c == '#' || c == '\\') {
                sb.append('\\');
            }
            sb.append(c);
        }
    }
}
