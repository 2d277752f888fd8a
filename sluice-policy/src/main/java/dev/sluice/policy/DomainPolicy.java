package dev.sluice.policy;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One domain's rules as a tree, ready to match: the immutable model a file becomes once it is valid.
 *
 * <p>Matching follows envoyproxy/ratelimit level by level. At each level the entry's key and value are looked up as
 * an exact {@code key: value} rule first, then against the wildcard rules of that key in file order, then as a
 * key-only rule. A match with children moves one level down; the rule that applies is the one reached at the
 * descriptor's last entry, and only if it has limits. A descriptor with more entries than the tree is deep, or an
 * entry with no rule at its level, matches nothing.
 */
final class DomainPolicy {

    private final String domain;
    private final String file;
    private final Level top;
    private final OnStoreFailure onStoreFailure;

    DomainPolicy(String domain, String file, Level top, OnStoreFailure onStoreFailure) {
        this.domain = domain;
        this.file = file;
        this.top = top;
        this.onStoreFailure = onStoreFailure;
    }

    String domain() {
        return domain;
    }

    String file() {
        return file;
    }

    /** The top level of rules. */
    Level top() {
        return top;
    }

    OnStoreFailure onStoreFailure() {
        return onStoreFailure;
    }

    /** Every rule with limits, depth first, in file order. */
    List<Rule> rules() {
        List<Rule> out = new java.util.ArrayList<>();
        top.collect(out);
        return out;
    }

    /**
     * The entry of the configuration {@code d} matches, as envoyproxy/ratelimit matches it: the node reached at the
     * descriptor's last entry, if it has a rule; else null. The one matcher of the policy layer: {@link Policies#match}
     * and the engine both ask it.
     */
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
                return node.rule == null ? null : node;
            }
            Level children = node.children;
            if (children == null) {
                return null;
            }
            level = children;
        }
    }

    /**
     * One level of rules: the children of a rule, or a domain's top level. Filled by the parser, then only read: per
     * descriptor key, everything that key can match here, so that finding an entry's rule is one lookup by key.
     */
    static final class Level {
        private final Map<String, KeyRules> byKey = new HashMap<>();
        private final List<Node> all = new java.util.ArrayList<>();

        /** Adds a node; false if a node of the same key and value is already there. Only while building. */
        boolean add(Node n) {
            KeyRules k = byKey.computeIfAbsent(n.key, x -> new KeyRules());
            if (n.value == null) {
                if (k.keyOnly != null) {
                    return false;
                }
                k.keyOnly = n;
            } else {
                if (k.exact.putIfAbsent(n.value, n) != null) {
                    return false;
                }
                if (n.pattern != null) {
                    Node[] wild = Arrays.copyOf(k.wildcards, k.wildcards.length + 1);
                    wild[k.wildcards.length] = n;
                    k.wildcards = wild;
                }
            }
            all.add(n);
            return true;
        }

        /** Every node of this level, in file order. */
        List<Node> nodes() {
            return all;
        }

        /** The node of {@code e} here: its exact value, else the first wildcard (in file order) that matches, else its key alone. */
        @Nullable
        Node find(Descriptor.Entry e) {
            KeyRules k = byKey.get(e.key());
            if (k == null) {
                return null;
            }
            Node n = k.exact.get(e.value());
            if (n != null) {
                return n;
            }
            for (Node w : k.wildcards) {
                if (Wildcard.matches(Objects.requireNonNull(w.pattern, "only wildcard nodes here"), e.value())) {
                    return w;
                }
            }
            return k.keyOnly;
        }

        private void collect(List<Rule> out) {
            for (Node n : all) {
                if (n.rule != null) {
                    out.add(n.rule);
                }
                if (n.children != null) {
                    n.children.collect(out);
                }
            }
        }
    }

    /** What one descriptor key matches at one level. Filled while building only. */
    private static final class KeyRules {
        /** By value, the wildcard values included (they match as themselves first). */
        final Map<String, Node> exact = new HashMap<>(4);

        /** The nodes whose value has a {@code *}, in file order. */
        Node[] wildcards = new Node[0];

        @Nullable
        Node keyOnly;
    }

    /** One descriptor entry of the configuration. */
    static final class Node {
        final String key;
        /** Null for a key-only rule. */
        final @Nullable String value;
        /** The value split at each {@code *}; null when the value has none. */
        final String @Nullable [] pattern;

        final boolean shareThreshold;
        /** Null when the entry has no limits. */
        final @Nullable Rule rule;
        /** Null when the entry has no nested descriptors. */
        final @Nullable Level children;

        Node(
                String key,
                @Nullable String value,
                boolean shareThreshold,
                @Nullable Rule rule,
                @Nullable Level children) {
            this.key = key;
            this.value = value;
            this.pattern = value != null && value.indexOf('*') >= 0 ? Wildcard.split(value) : null;
            this.shareThreshold = shareThreshold;
            this.rule = rule;
            this.children = children;
        }
    }
}
