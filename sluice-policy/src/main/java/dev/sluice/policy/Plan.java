package dev.sluice.policy;

import dev.sluice.RateLimiter;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * One rule made ready to decide under one {@link Engine}: the limiter of each of its limits, the stage its mode puts it
 * in, and the counter key of each limit. Immutable.
 *
 * <p>Counter keys: {@code domain|key=value|key=value#i}, {@code i} the limit's index in its rule, with {@code |},
 * {@code =}, {@code ~}, {@code #} and {@code \} escaped; an entry matched by a shared-threshold wildcard is written
 * {@code key~pattern}, so every value it matches shares one counter. The entries name the rule path (one descriptor
 * shape matches one rule) and the values the counter under it. {@link #keys} is the one place they are built: the
 * parts that do not depend on the request ({@code |client_id=mobile-app}, {@code |file~te*}) are written once here, the
 * others are the prefix {@code |key=} and the request's value.
 */
final class Plan {

    /** The stages of a request, in the order they are asked (see {@link Engine}). */
    static final int ENFORCE = 0;

    static final int QUOTA = 1;
    static final int SHADOW_BAN = 2;
    static final int DRY_RUN = 3;

    final Rule rule;
    final Limit[] limits;
    /** Per limit; null for an unlimited limit or a limit of 0. */
    final @Nullable RateLimiter[] limiters;
    /** The stage of the rule's mode ({@link #ENFORCE}, {@link #QUOTA}, {@link #SHADOW_BAN}, {@link #DRY_RUN}). */
    final int stage;
    /** Whether a limit of the rule names limits it replaces. */
    final boolean replaces;

    private final String escapedDomain;
    /** Per entry of the rule's path: its part of the key when it is the same for every request it matches, else null. */
    private final @Nullable String[] fixed;
    /** Per entry: {@code |key=}, escaped, which the request's value follows where {@link #fixed} is null. */
    private final String[] prefixes;
    /** The keys when no part depends on the request; else null. */
    private final @Nullable String @Nullable [] constant;

    /**
     * @param domain   the rule's domain
     * @param path     the entries of the configuration from the top level to the rule's, which the rule's requests
     *                 match one by one
     * @param limiters the limiter of each limit; null for an unlimited limit or a limit of 0
     * @param dryRun   every rule runs as {@link Mode#DRY_RUN}
     */
    Plan(String domain, List<DomainPolicy.Node> path, Function<Limit, @Nullable RateLimiter> limiters, boolean dryRun) {
        DomainPolicy.Node leaf = path.get(path.size() - 1);
        this.rule = Objects.requireNonNull(leaf.rule, "a plan is made for a rule");
        this.limits = rule.limits().toArray(new Limit[0]);
        this.limiters = new RateLimiter[limits.length];
        boolean replaces = false;
        for (int j = 0; j < limits.length; j++) {
            this.limiters[j] = limiters.apply(limits[j]);
            replaces |= !limits[j].replaces().isEmpty();
        }
        this.replaces = replaces;
        this.stage = dryRun ? DRY_RUN : stage(rule.mode());
        this.escapedDomain = escape(new StringBuilder(), domain).toString();
        this.fixed = new String[path.size()];
        this.prefixes = new String[path.size()];
        boolean variable = false;
        for (int i = 0; i < path.size(); i++) {
            DomainPolicy.Node n = path.get(i);
            StringBuilder sb = escape(new StringBuilder().append('|'), n.key);
            prefixes[i] = sb + "=";
            if (n.value != null && n.pattern != null && n.shareThreshold) {
                fixed[i] = escape(sb.append('~'), n.value).toString();
            } else if (n.value != null && n.pattern == null) {
                fixed[i] = escape(sb.append('='), n.value).toString();
            } else {
                variable = true;
            }
        }
        this.constant = variable ? null : keys(null, new StringBuilder(64));
    }

    private static int stage(Mode mode) {
        return switch (mode) {
            case ENFORCE -> ENFORCE;
            case SHADOW_BAN -> SHADOW_BAN;
            case DRY_RUN -> DRY_RUN;
            case QUOTA -> QUOTA;
        };
    }

    /** The counter key of each limit for {@code d}, a descriptor this rule matched; null for an unlimited limit. */
    @Nullable
    String[] keys(Descriptor d) {
        @Nullable String[] keys = constant;
        return keys != null ? keys : keys(d, new StringBuilder(64));
    }

    /** The keys of {@code d} (null: no part depends on it), built in {@code sb}: the base, then each limit's suffix. */
    private @Nullable String[] keys(@Nullable Descriptor d, StringBuilder sb) {
        sb.append(escapedDomain);
        for (int i = 0; i < fixed.length; i++) {
            String part = fixed[i];
            if (part != null) {
                sb.append(part);
            } else {
                escape(
                        sb.append(prefixes[i]),
                        Objects.requireNonNull(d, "a variable part has its request")
                                .entries()
                                .get(i)
                                .value());
            }
        }
        int base = sb.length();
        @Nullable String[] keys = new String[limits.length];
        for (int j = 0; j < keys.length; j++) {
            if (!limits[j].unlimited()) {
                sb.setLength(base);
                keys[j] = sb.append('#').append(j).toString();
            }
        }
        return keys;
    }

    private static StringBuilder escape(StringBuilder sb, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '|' || c == '=' || c == '~' || c == '#' || c == '\\') {
                sb.append('\\');
            }
            sb.append(c);
        }
        return sb;
    }
}
