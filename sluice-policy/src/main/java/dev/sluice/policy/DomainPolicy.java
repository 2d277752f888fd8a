package dev.sluice.policy;

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

    /** The rule {@code d} matches and the wildcard pattern of each entry matched by a shared threshold, or null. */
    @Nullable
    Match match(Descriptor d) {
        List<Descriptor.Entry> entries = d.entries();
        Level level = top;
        @Nullable String @Nullable [] shared = null;
        for (int i = 0; i < entries.size(); i++) {
            Descriptor.Entry e = entries.get(i);
            Node node = level == null ? null : level.find(e);
            if (node == null) {
                return null;
            }
            if (node.shareThreshold && node.pattern != null) {
                if (shared == null) {
                    shared = new String[entries.size()];
                }
                shared[i] = node.value;
            }
            if (i == entries.size() - 1) {
                return node.rule == null ? null : new Match(node.rule, shared);
            }
            if (node.children == null) {
                return null;
            }
            level = node.children;
        }
        return null;
    }

    /**
     * A matched rule.
     *
     * @param rule   the rule
     * @param shared per entry, the wildcard pattern that stands for the value in the counter key (a shared
     *               threshold), or null; the array itself is null when no entry shares
     */
    @SuppressWarnings("ArrayRecordComponent") // never compared or hashed: a sparse per-entry array for counterKey
    record Match(Rule rule, @Nullable String @Nullable [] shared) {}

    /** One level of rules: the children of a rule, or a domain's top level. */
    static final class Level {
        private final Map<String, Map<String, Node>> exact = new HashMap<>();
        private final Map<String, List<Node>> wildcards = new HashMap<>();
        private final Map<String, Node> keyOnly = new HashMap<>();
        private final List<Node> all = new java.util.ArrayList<>();

        /** Adds a node; false if a node of the same key and value is already there. Only while building. */
        boolean add(Node n) {
            if (n.value == null) {
                if (keyOnly.putIfAbsent(n.key, n) != null) {
                    return false;
                }
            } else if (exact.computeIfAbsent(n.key, k -> new HashMap<>()).putIfAbsent(n.value, n) != null) {
                return false;
            }
            if (n.pattern != null) {
                wildcards
                        .computeIfAbsent(n.key, k -> new java.util.ArrayList<>())
                        .add(n);
            }
            all.add(n);
            return true;
        }

        /** Every node of this level, in file order. */
        List<Node> nodes() {
            return all;
        }

        @Nullable
        Node find(Descriptor.Entry e) {
            Map<String, Node> byValue = exact.get(e.key());
            if (byValue != null) {
                Node n = byValue.get(e.value());
                if (n != null) {
                    return n;
                }
            }
            List<Node> wild = wildcards.get(e.key());
            if (wild != null) {
                for (Node n : wild) {
                    String[] pattern = Objects.requireNonNull(n.pattern, "add() puts only nodes with a pattern here");
                    if (Wildcard.matches(pattern, e.value())) {
                        return n;
                    }
                }
            }
            return keyOnly.get(e.key());
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
