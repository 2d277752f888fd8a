package dev.sluice.policy;

import dev.sluice.RateLimiter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * One domain's rules compiled for one {@link Engine}: the tree of {@link DomainPolicy}, matched the same way, with
 * what a check of a matched rule needs made ready at load time instead of per request.
 *
 * <p>What is precomputed, and why. {@link DomainPolicy} answers {@link Policies#match}; a check needs more: the
 * rule's limiters, the stage its mode puts it in, and a counter key per limit
 * ({@code domain|key=value|key=value#i}, see {@link Engine}). Building those keys per request costs a string per
 * limit and, worse on the in-memory store, the hash of each fresh string when the store looks it up (a 40-character
 * key is a 40-step multiply-add chain). So:
 *
 * <ul>
 *   <li>each level maps a descriptor key to everything that key can match there (the exact values, the wildcards in
 *       file order, the key-only rule): one hash lookup per entry instead of three;</li>
 *   <li>each entry's part of the counter key is written once: whole when it does not depend on the request (a
 *       {@code key: value} rule, or a shared-threshold wildcard, {@code key~pattern}), as its prefix
 *       {@code |key=} when it does (a key-only rule, a wildcard without shared threshold);</li>
 *   <li>a rule whose key depends on no value of the request has its keys built once;</li>
 *   <li>the others cache their keys by the request's values: a map per value entry, nested from the last entry to
 *       the first. Example: {@code client_id} with {@code username} nested under it; {@code [client_id=abc,
 *       username=bob]} finds {@code bob} in the nested rule's cache, then {@code abc} under it, and there the
 *       keys, {@code oauth-token|client_id=abc|username=bob#0}, whose hash the store computed once;</li>
 *   <li>what a descriptor resolves to (the rule's plan and its keys, a {@link Resolved}) is one shared object, which
 *       {@link Engine} also keeps in the descriptor: a caller that checks the same {@link Descriptor} object again
 *       skips the whole walk, as a {@link String} keeps its hash.</li>
 * </ul>
 *
 * <p>The caches are bounded: every key cached by the trees of one engine counts against {@link #MAX_CACHED}; at the
 * bound every cache of the engine starts again empty, so a flood of new client ids costs at most that many entries
 * and the values in use fill the caches again. A request that misses builds its keys as it would without a cache.
 * A hit writes nothing. The caches are thread-safe; losing an entry to a concurrent restart only costs a rebuild.
 */
final class RuleTree {

    /** The most counter-key entries (values and their keys) the trees of one engine cache at once. */
    static final int MAX_CACHED = 8192;

    private static final Node[] NO_NODES = new Node[0];

    private final String escapedDomain;
    private final Level top;
    private final Budget budget;
    /** What a descriptor no rule matches resolves to. */
    private final Resolved noRule;

    private RuleTree(String escapedDomain, Level top, Budget budget, Resolved noRule) {
        this.escapedDomain = escapedDomain;
        this.top = top;
        this.budget = budget;
        this.noRule = noRule;
    }

    /**
     * Compiles {@code policy}.
     *
     * @param limiters the limiter of each limit; null for an unlimited limit or a limit of 0
     * @param dryRun   every rule runs as {@link Mode#DRY_RUN}
     * @param budget   the engine's bound on cached keys, shared by all its trees
     * @param engine   the engine the tree is compiled for, which its {@link Resolved resolutions} name
     */
    static RuleTree compile(
            DomainPolicy policy,
            Function<Limit, @Nullable RateLimiter> limiters,
            boolean dryRun,
            Budget budget,
            Object engine) {
        StringBuilder sb = new StringBuilder();
        Engine.escape(sb, policy.domain());
        String escaped = sb.toString();
        Compiling c = new Compiling(escaped, policy.domain().intern(), engine, limiters, dryRun, budget);
        return new RuleTree(
                escaped, level(policy.top(), null, c), budget, new Resolved(c.engine, c.domain, null, null));
    }

    /** What compiling one tree needs at every node. */
    private record Compiling(
            String escapedDomain,
            String domain,
            Object engine,
            Function<Limit, @Nullable RateLimiter> limiters,
            boolean dryRun,
            Budget budget) {}

    /**
     * The rule {@code d} matches and the counter keys of its limits, {@link #match} and {@link #keys}; a resolution
     * whose plan is null when no rule matches.
     */
    Resolved resolve(Descriptor d) {
        Node node = match(d);
        return node == null ? noRule : keys(node, d);
    }

    /** The node of the rule {@code d} matches, as {@link DomainPolicy#match}; null if none. */
    @Nullable
    Node match(Descriptor d) {
        List<Descriptor.Entry> entries = d.entries();
        Level level = top;
        int last = entries.size() - 1;
        for (int i = 0; ; i++) {
            Node node = level.find(entries.get(i));
            if (node == null) {
                return null;
            }
            if (i == last) {
                return node.plan == null ? null : node;
            }
            Level children = node.children;
            if (children == null) {
                return null;
            }
            level = children;
        }
    }

    /**
     * The counter key of each limit of the rule of {@code node}, which {@code d} matched, with the rule. Cached (see
     * the class comment).
     */
    Resolved keys(Node node, Descriptor d) {
        Plan plan = Objects.requireNonNull(node.plan, "a matched node has a rule");
        Resolved constant = plan.constant;
        if (constant != null) {
            return constant;
        }
        List<Descriptor.Entry> entries = d.entries();
        ConcurrentHashMap<String, Object> map = plan.cache;
        int left = plan.variables;
        Node n = node;
        for (int i = entries.size() - 1; ; i--) {
            if (n.segment == null) {
                String value = entries.get(i).value();
                Object next = map.get(value);
                if (--left == 0) {
                    if (next != null) {
                        return (Resolved) next;
                    }
                    Resolved r = build(node, d);
                    if (budget.take(1)) {
                        map.putIfAbsent(value, r);
                    }
                    return r;
                }
                if (next == null) {
                    if (!budget.take(1)) {
                        return build(node, d);
                    }
                    ConcurrentHashMap<String, Object> fresh = new ConcurrentHashMap<>(4);
                    Object raced = map.putIfAbsent(value, fresh);
                    next = raced != null ? raced : fresh;
                }
                map = castMap(next);
            }
            n = Objects.requireNonNull(n.parent, "a variable entry is left above");
        }
    }

    @SuppressWarnings("unchecked")
    private static ConcurrentHashMap<String, Object> castMap(Object o) {
        return (ConcurrentHashMap<String, Object>) o;
    }

    /** The keys of the rule of {@code node} for {@code d}, built. */
    private Resolved build(Node node, Descriptor d) {
        StringBuilder sb = new StringBuilder(64).append(escapedDomain);
        append(sb, node, d.entries(), d.entries().size() - 1);
        Plan plan = Objects.requireNonNull(node.plan, "a matched node has a rule");
        return new Resolved(noRule.engine, noRule.domain, plan, keysOf(sb.toString(), plan));
    }

    private static void append(StringBuilder sb, Node node, List<Descriptor.Entry> entries, int i) {
        Node parent = node.parent;
        if (parent != null) {
            append(sb, parent, entries, i - 1);
        }
        if (node.segment != null) {
            sb.append(node.segment);
        } else {
            sb.append(node.prefix);
            Engine.escape(sb, entries.get(i).value());
        }
    }

    private static @Nullable String[] keysOf(String base, Plan plan) {
        @Nullable String[] keys = new String[plan.limits.length];
        for (int j = 0; j < keys.length; j++) {
            keys[j] = plan.limits[j].unlimited() ? null : base + "#" + j;
        }
        return keys;
    }

    private static Level level(DomainPolicy.Level source, @Nullable Node parent, Compiling c) {
        Map<String, KeyRules> byKey = new HashMap<>();
        for (DomainPolicy.Node s : source.nodes()) {
            Node n = node(s, parent, c);
            KeyRules k = byKey.computeIfAbsent(s.key.intern(), x -> new KeyRules()); // see Engine's trees
            if (s.value == null) {
                k.keyOnly = n;
            } else {
                if (k.exact == null) {
                    k.exact = new HashMap<>();
                }
                k.exact.put(s.value.intern(), n);
            }
            if (s.pattern != null) {
                List<Node> wild = new ArrayList<>(List.of(k.wildcards));
                wild.add(n);
                k.wildcards = wild.toArray(NO_NODES);
            }
        }
        return new Level(byKey);
    }

    private static Node node(DomainPolicy.Node s, @Nullable Node parent, Compiling c) {
        StringBuilder sb = new StringBuilder().append('|');
        Engine.escape(sb, s.key);
        String segment = null;
        String prefix = sb + "=";
        if (s.value != null && s.pattern != null && s.shareThreshold) {
            sb.append('~');
            Engine.escape(sb, s.value);
            segment = sb.toString();
        } else if (s.value != null && s.pattern == null) {
            sb.append('=');
            Engine.escape(sb, s.value);
            segment = sb.toString();
        }
        int variables = (parent == null ? 0 : parent.variables) + (segment == null ? 1 : 0);
        Node n = new Node(parent, segment, prefix, variables);
        n.pattern = s.pattern;
        Rule rule = s.rule;
        if (rule != null) {
            Plan plan = new Plan(rule, c.limiters(), c.dryRun(), variables);
            n.plan = plan;
            if (plan.asked == 0) { // no limit has a counter: no key to build
                plan.constant = new Resolved(c.engine(), c.domain(), plan, new String[plan.limits.length]);
            } else if (variables == 0) {
                StringBuilder key = new StringBuilder();
                for (Node p = n; p != null; p = p.parent) {
                    key.insert(0, Objects.requireNonNull(p.segment, "no variable entry on the path"));
                }
                plan.constant = new Resolved(c.engine(), c.domain(), plan, keysOf(c.escapedDomain() + key, plan));
            } else {
                c.budget().plans.add(plan);
            }
        }
        if (s.children != null) {
            n.children = level(s.children, n, c);
        }
        return n;
    }

    /** One level of rules: per descriptor key, everything that key matches here. */
    static final class Level {
        private final Map<String, KeyRules> byKey;

        Level(Map<String, KeyRules> byKey) {
            this.byKey = byKey;
        }

        /** As {@link DomainPolicy.Level#find}: the exact value, else the first wildcard that matches, else key-only. */
        @Nullable
        Node find(Descriptor.Entry e) {
            KeyRules k = byKey.get(e.key());
            if (k == null) {
                return null;
            }
            Map<String, Node> exact = k.exact;
            if (exact != null) {
                Node n = exact.get(e.value());
                if (n != null) {
                    return n;
                }
            }
            for (Node n : k.wildcards) {
                String[] pattern = Objects.requireNonNull(n.pattern, "only wildcard nodes here");
                if (Wildcard.matches(pattern, e.value())) {
                    return n;
                }
            }
            return k.keyOnly;
        }
    }

    /** What one descriptor key matches at one level. Filled while compiling only. */
    static final class KeyRules {
        @Nullable
        Map<String, Node> exact;

        Node[] wildcards = NO_NODES;

        @Nullable
        Node keyOnly;
    }

    /** One descriptor entry of the configuration, compiled. Its fields are set while compiling only. */
    static final class Node {
        final @Nullable Node parent;
        /** The entry's part of the counter key when it is the same for every request it matches; else null. */
        final @Nullable String segment;
        /** {@code |key=}, escaped: the part before the request's value when {@link #segment} is null. */
        final String prefix;
        /** Entries from the top to this one whose part of the key is the request's value. */
        final int variables;

        String @Nullable [] pattern;

        @Nullable
        Plan plan;

        @Nullable
        Level children;

        Node(@Nullable Node parent, @Nullable String segment, String prefix, int variables) {
            this.parent = parent;
            this.segment = segment;
            this.prefix = prefix;
            this.variables = variables;
        }
    }

    /** What deciding a rule needs, ready. */
    static final class Plan {
        final Rule rule;
        final Limit[] limits;
        /** Per limit; null for an unlimited limit or a limit of 0. */
        final @Nullable RateLimiter[] limiters;
        /** {@link Engine}'s stage of the rule's mode. */
        final int stage;
        /** Whether a limit of the rule names limits it replaces. */
        final boolean replaces;

        final int variables;
        /** How many limits are not unlimited, so that a request is decided by them. */
        final int asked;
        /** The index of the last of them; -1 when there is none. */
        final int lastAsked;
        /**
         * The smallest of them: a cost above it is refused without asking the store (a limit of 0 refuses every
         * cost); {@link Long#MAX_VALUE} when there is none.
         */
        final long smallest;
        /** The resolution when the keys depend on no value of the request; else null. Set while compiling only. */
        @Nullable
        Resolved constant;

        /** Resolutions by the request's values (see the class comment). Replaced whole when the budget is spent. */
        volatile ConcurrentHashMap<String, Object> cache = new ConcurrentHashMap<>();

        Plan(Rule rule, Function<Limit, @Nullable RateLimiter> limiters, boolean dryRun, int variables) {
            this.rule = rule;
            this.limits = rule.limits().toArray(new Limit[0]);
            this.limiters = new RateLimiter[limits.length];
            boolean replaces = false;
            int asked = 0;
            int lastAsked = -1;
            long smallest = Long.MAX_VALUE;
            for (int j = 0; j < limits.length; j++) {
                this.limiters[j] = limiters.apply(limits[j]);
                replaces |= !limits[j].replaces().isEmpty();
                if (!limits[j].unlimited()) {
                    asked++;
                    lastAsked = j;
                    smallest = Math.min(smallest, limits[j].requestsPerUnit());
                }
            }
            this.replaces = replaces;
            this.asked = asked;
            this.lastAsked = lastAsked;
            this.smallest = smallest;
            this.stage = Engine.stage(rule.mode(), dryRun);
            this.variables = variables;
        }
    }

    /**
     * What a descriptor resolves to under one engine and domain: its rule's plan (null when no rule matches) and the
     * counter key of each limit (null for an unlimited one). Immutable, so that it may be shared: the key caches
     * hold it, and {@link Engine} keeps the last one of each {@link Descriptor} in the descriptor, so that a caller
     * checking the same descriptor object again skips the matching, as a {@link String} keeps its hash.
     */
    static final class Resolved {
        /** The engine it is valid under; any other must resolve again. */
        final Object engine;
        /** The domain it is valid under, interned. */
        final String domain;

        final @Nullable Plan plan;
        final @Nullable String @Nullable [] keys;

        Resolved(Object engine, String domain, @Nullable Plan plan, @Nullable String @Nullable [] keys) {
            this.engine = engine;
            this.domain = domain;
            this.plan = plan;
            this.keys = keys;
        }
    }

    /** The bound on the keys the trees of one engine cache. */
    static final class Budget {
        private final int max;
        private final AtomicInteger used = new AtomicInteger();
        /** The plans with a cache. Filled while compiling only. */
        final List<Plan> plans = new ArrayList<>();

        Budget(int max) {
            this.max = max;
        }

        /**
         * Whether {@code n} more entries may be cached. At the bound every cache starts again empty and the answer is
         * false: the entry that found the bound is not cached.
         */
        boolean take(int n) {
            if (used.addAndGet(n) <= max) {
                return true;
            }
            for (Plan p : plans) {
                p.cache = new ConcurrentHashMap<>();
            }
            used.set(0);
            return false;
        }

        int used() {
            return used.get();
        }
    }
}
