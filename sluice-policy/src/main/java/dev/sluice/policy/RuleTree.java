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
 *       keys, {@code oauth-token|client_id=abc|username=bob#0}, whose hash the store computed once.</li>
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

    private RuleTree(String escapedDomain, Level top, Budget budget) {
        this.escapedDomain = escapedDomain;
        this.top = top;
        this.budget = budget;
    }

    /**
     * Compiles {@code policy}.
     *
     * @param limiters the limiter of each limit; null for an unlimited limit or a limit of 0
     * @param dryRun   every rule runs as {@link Mode#DRY_RUN}
     * @param budget   the engine's bound on cached keys, shared by all its trees
     */
    static RuleTree compile(
            DomainPolicy policy, Function<Limit, @Nullable RateLimiter> limiters, boolean dryRun, Budget budget) {
        StringBuilder sb = new StringBuilder();
        Engine.escape(sb, policy.domain());
        String domain = sb.toString();
        return new RuleTree(domain, level(policy.top(), null, domain, limiters, dryRun, budget), budget);
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
     * The counter key of each limit of the rule of {@code node}, which {@code d} matched; null for an unlimited
     * limit. Cached (see the class comment); the caller must not change the array.
     */
    @Nullable
    String[] keys(Node node, Descriptor d) {
        Plan plan = Objects.requireNonNull(node.plan, "a matched node has a rule");
        @Nullable String[] constant = plan.constantKeys;
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
                        return castKeys(next);
                    }
                    @Nullable String[] keys = build(node, d);
                    if (budget.take(1)) {
                        map.putIfAbsent(value, keys);
                    }
                    return keys;
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

    private static @Nullable String[] castKeys(Object o) {
        return (@Nullable String[]) o;
    }

    /** The keys of the rule of {@code node} for {@code d}, built. */
    private @Nullable String[] build(Node node, Descriptor d) {
        StringBuilder sb = new StringBuilder(64).append(escapedDomain);
        append(sb, node, d.entries(), d.entries().size() - 1);
        return keysOf(sb.toString(), Objects.requireNonNull(node.plan, "a matched node has a rule"));
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

    private static Level level(
            DomainPolicy.Level source,
            @Nullable Node parent,
            String domain,
            Function<Limit, @Nullable RateLimiter> limiters,
            boolean dryRun,
            Budget budget) {
        Map<String, KeyRules> byKey = new HashMap<>();
        for (DomainPolicy.Node s : source.nodes()) {
            Node n = node(s, parent, domain, limiters, dryRun, budget);
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

    private static Node node(
            DomainPolicy.Node s,
            @Nullable Node parent,
            String domain,
            Function<Limit, @Nullable RateLimiter> limiters,
            boolean dryRun,
            Budget budget) {
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
            n.plan = new Plan(rule, limiters, dryRun, variables);
            if (variables > 0) {
                budget.plans.add(n.plan);
            }
        }
        if (s.children != null) {
            n.children = level(s.children, n, domain, limiters, dryRun, budget);
        }
        if (n.plan != null && variables == 0) {
            StringBuilder key = new StringBuilder();
            for (Node p = n; p != null; p = p.parent) {
                key.insert(0, Objects.requireNonNull(p.segment, "no variable entry on the path"));
            }
            n.plan.constantKeys = keysOf(domain + key, n.plan);
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
        /** The keys when they depend on no value of the request; else null. Set while compiling only. */
        @Nullable
        String @Nullable [] constantKeys;

        /** Keys by the request's values (see the class comment). Replaced whole when the budget is spent. */
        volatile ConcurrentHashMap<String, Object> cache = new ConcurrentHashMap<>();

        Plan(Rule rule, Function<Limit, @Nullable RateLimiter> limiters, boolean dryRun, int variables) {
            this.rule = rule;
            this.limits = rule.limits().toArray(new Limit[0]);
            this.limiters = new RateLimiter[limits.length];
            boolean replaces = false;
            for (int j = 0; j < limits.length; j++) {
                this.limiters[j] = limiters.apply(limits[j]);
                replaces |= !limits[j].replaces().isEmpty();
            }
            this.replaces = replaces;
            this.stage = Engine.stage(rule.mode(), dryRun);
            this.variables = variables;
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
