package dev.sluice.http;

import dev.sluice.policy.DescriptorVerdict;
import dev.sluice.policy.Limit;
import dev.sluice.policy.LimitVerdict;
import dev.sluice.policy.Mode;
import dev.sluice.policy.Outcome;
import dev.sluice.policy.Rule;
import dev.sluice.policy.Verdict;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The rate-limit response fields of one {@link Verdict}, as draft-ietf-httpapi-ratelimit-headers-10 defines them:
 * one quota policy item per advertised limit in {@code RateLimit-Policy}, and one service limit item per advertised
 * limit whose count is known in {@code RateLimit}. Immutable.
 */
final class RateLimitFields {

    /**
     * One advertised limit.
     *
     * @param name      the policy name, printable ASCII
     * @param quota     {@code q}
     * @param window    {@code w}, whole seconds rounded up, at least 1
     * @param remaining {@code r}; -1 when not known (not asked, or answered by a failure policy)
     * @param reset     {@code t}, whole seconds rounded up; -1 when not known
     * @param denied    this limit refused the request
     */
    record Item(String name, long quota, long window, long remaining, long reset, boolean denied) {}

    private final List<Item> items;
    private final long retryAfter;

    private RateLimitFields(List<Item> items, long retryAfter) {
        this.items = List.copyOf(items);
        this.retryAfter = retryAfter;
    }

    /*
     * Which limits are advertised, and why.
     *
     * Every limited limit of a rule in force (enforce mode) is advertised: allowed, denied, or not counted because
     * another limit refused the request (all or nothing); its RateLimit item only when its count is known. Unlimited
     * and replaced limits have no quota and are left out.
     *
     * Shadow-ban limits never are: a caller that saw r=0 on a 200 would know it had been shadow-banned, which is the
     * one thing a shadow ban must not tell. Dry-run limits (mode: dry_run, or the limiter's global dry run) are not
     * by default: a dry run is how a limit is tried before it is decided, often lowered step by step, and a client
     * that honours RateLimit would slow down under a limit that is not in force, skewing the "would deny" counts the
     * dry run exists to measure. advertiseDryRun shows them, with their real counts, for a rollout step that warns
     * clients before enforcing.
     *
     * A limit answered by the domain's on_store_failure (LimitVerdict.failed) keeps its policy item, which is
     * configuration, but gets no RateLimit item and no part in Retry-After: the store gave no count and no time.
     *
     * t: for a limit that refused (or would have), the time until the same request could pass (retryAfter); for
     * one that allowed, the time until it is back to full (resetAfter), which for a fixed window is the time until more
     * quota arrives and for the other algorithms is no earlier than it. Both are rounded up to whole seconds, so a
     * client that waits t is never early. Retry-After is the longest t of the limits that refused, and at least 1.
     *
     * Worked example: 5 per second and 1000 per day on client "big" (a rule with two unnamed limits), the sixth request
     * of a second at 10:00:00.250: RateLimit-Policy: "client_id_big#0";q=5;w=1, "client_id_big#1";q=1000;w=86400
     * and RateLimit: "client_id_big#0";r=0;t=1, "client_id_big#1";r=995;t=50400 (the day limit was not counted: the
     * request was refused whole), Retry-After: 1.
     */
    static RateLimitFields of(Verdict verdict, boolean globalDryRun, boolean advertiseDryRun) {
        List<Item> items = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (DescriptorVerdict d : verdict.descriptors()) {
            Rule rule = d.rule().orElse(null);
            if (rule == null) {
                continue;
            }
            Mode mode = globalDryRun ? Mode.DRY_RUN : rule.mode();
            if (mode == Mode.SHADOW_BAN || (mode == Mode.DRY_RUN && !advertiseDryRun)) {
                continue;
            }
            List<LimitVerdict> limits = d.limits();
            for (int j = 0; j < limits.size(); j++) {
                LimitVerdict lv = limits.get(j);
                Outcome o = lv.outcome();
                if (o == Outcome.UNLIMITED || o == Outcome.REPLACED || o == Outcome.NO_LIMIT) {
                    continue;
                }
                Limit limit = lv.limit();
                Duration window = Objects.requireNonNull(limit.window(), "a limited limit has a window");
                String name = unique(policyName(rule, limit, j), names);
                boolean known = lv.remaining() >= 0 && !lv.failed();
                long remaining = known ? lv.remaining() : -1;
                long reset = -1;
                if (known) {
                    long nanos = lv.refused() ? lv.retryAfterNanos() : lv.resetAfterNanos();
                    if (nanos > 0 && nanos != Long.MAX_VALUE) {
                        reset = ceilSeconds(nanos);
                    }
                }
                items.add(new Item(
                        name,
                        limit.requestsPerUnit(),
                        Math.max(1, ceilSeconds(window)),
                        remaining,
                        reset,
                        o == Outcome.DENIED));
            }
        }
        long retryAfter = -1;
        if (!verdict.allowed()) {
            retryAfter = 1;
            boolean never = true;
            for (DescriptorVerdict d : verdict.descriptors()) {
                for (LimitVerdict lv : d.limits()) {
                    if (lv.outcome() == Outcome.DENIED && !lv.failed() && lv.retryAfterNanos() != Long.MAX_VALUE) {
                        never = false;
                        retryAfter = Math.max(retryAfter, ceilSeconds(lv.retryAfterNanos()));
                    }
                }
            }
            if (never) {
                retryAfter = -1; // e.g. more hits than the limit allows, or a store down: no wait is known to help
            }
        }
        return new RateLimitFields(items, retryAfter);
    }

    /**
     * The name of a limit in the fields: its {@code name} in the configuration; else the path of its rule
     * ({@code client_id}, {@code client_id.username}, {@code client_id_big-partner}); else, for a rule of several
     * limits, the path and the limit's index ({@code client_id_big-partner#1}).
     */
    static String policyName(Rule rule, Limit limit, int index) {
        String name;
        if (!limit.name().isEmpty()) {
            name = limit.name();
        } else if (rule.limits().size() == 1) {
            name = rule.path();
        } else {
            name = rule.path() + "#" + index;
        }
        return printable(name);
    }

    /** A second limit of the same name in one response gets {@code #2}, and so on. */
    private static String unique(String name, Set<String> names) {
        String n = name;
        for (int i = 2; !names.add(n); i++) {
            n = name + "#" + i;
        }
        return n;
    }

    /** An sf-string holds printable ASCII only: every other character is percent-encoded as UTF-8. */
    static String printable(String s) {
        StringBuilder sb = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0x7f) {
                if (sb != null) {
                    sb.append(c);
                }
                continue;
            }
            if (sb == null) {
                sb = new StringBuilder(s.length() + 16).append(s, 0, i);
            }
            int end = Character.isHighSurrogate(c) && i + 1 < s.length() ? i + 2 : i + 1;
            for (byte b : s.substring(i, end).getBytes(StandardCharsets.UTF_8)) {
                sb.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xf, 16)));
                sb.append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)));
            }
            i = end - 1;
        }
        return sb == null ? s : sb.toString();
    }

    static long ceilSeconds(long nanos) {
        return nanos / 1_000_000_000L + (nanos % 1_000_000_000L == 0 ? 0 : 1);
    }

    static long ceilSeconds(Duration d) {
        return d.getSeconds() + (d.getNano() == 0 ? 0 : 1);
    }

    /** The advertised limits, in the order of the request's descriptors and of each rule's limits. */
    List<Item> items() {
        return items;
    }

    /** The {@code RateLimit-Policy} field value; null when no limit is advertised. */
    @Nullable
    String policyField() {
        if (items.isEmpty()) {
            return null;
        }
        StringBuilder sb = new StringBuilder();
        for (Item i : items) {
            if (sb.length() > 0) {
                sb.append(", ");
            }
            string(sb, i.name).append(";q=").append(i.quota).append(";w=").append(i.window);
        }
        return sb.toString();
    }

    /** The {@code RateLimit} field value; null when no advertised limit has a known count. */
    @Nullable
    String rateLimitField() {
        StringBuilder sb = new StringBuilder();
        for (Item i : items) {
            if (i.remaining < 0) {
                continue;
            }
            if (sb.length() > 0) {
                sb.append(", ");
            }
            string(sb, i.name).append(";r=").append(i.remaining);
            if (i.reset >= 0) {
                sb.append(";t=").append(i.reset);
            }
        }
        return sb.length() == 0 ? null : sb.toString();
    }

    /** {@code Retry-After} in seconds when the request is refused; -1 when it is not, or when no wait will help. */
    long retryAfter() {
        return retryAfter;
    }

    /** The names of the limits that refused the request. */
    List<String> violated() {
        List<String> names = new ArrayList<>();
        for (Item i : items) {
            if (i.denied) {
                names.add(i.name);
            }
        }
        return names;
    }

    /**
     * The limit the legacy {@code X-RateLimit-*} fields describe: the refusing one that asks for the longest wait,
     * else the one with the fewest left (the longer reset on a tie); null when no count is known.
     */
    @Nullable
    Item decisive() {
        Item best = null;
        for (Item i : items) {
            if (i.remaining < 0) {
                continue;
            }
            if (best == null
                    || (i.denied && (!best.denied || i.reset > best.reset))
                    || (!best.denied
                            && (i.remaining < best.remaining
                                    || (i.remaining == best.remaining && i.reset > best.reset)))) {
                best = i;
            }
        }
        return best;
    }

    /** Appends {@code s} as an sf-string (RFC 8941 §4.1.6): quoted, with {@code "} and {@code \} escaped. */
    private static StringBuilder string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\');
            }
            sb.append(c);
        }
        return sb.append('"');
    }
}
