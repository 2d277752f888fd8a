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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The rate-limit response fields of one {@link Verdict}, as draft-ietf-httpapi-ratelimit-headers-10 defines them:
 * one quota policy item per advertised limit in {@code RateLimit-Policy}, and one service limit item per advertised
 * limit whose count is known in {@code RateLimit}; and the legacy three-number fields ({@code X-RateLimit-Limit},
 * {@code -Remaining}, {@code -Reset}) of one decisive limit. Immutable.
 *
 * <p>This class uses no servlet type: the {@link SluiceFilter} and the rate-limit service (which answers Envoy with
 * the fields of the descriptor closest to its limit, {@link #of(DescriptorVerdict)}) both format through it, so a
 * limit is named, counted and timed alike at every front door.
 */
public final class RateLimitFields {

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
    public record Item(String name, long quota, long window, long remaining, long reset, boolean denied) {}

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
    /**
     * The fields of {@code verdict}: every advertised limit of every descriptor, in order.
     *
     * @param globalDryRun    the limiter's global dry run ({@link dev.sluice.policy.PolicyLimiter#dryRun()})
     * @param advertiseDryRun whether dry-run limits are advertised
     */
    public static RateLimitFields of(Verdict verdict, boolean globalDryRun, boolean advertiseDryRun) {
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
                items.add(item(unique(policyName(rule, lv.limit(), j), names), lv));
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
     * The fields of one descriptor's deciding limit ({@link DescriptorVerdict#limit()}), whatever its mode: what the
     * rate-limit service advertises for the descriptor closest to its limit. No item when no limit applied, or the
     * limit was unlimited or replaced.
     */
    public static RateLimitFields of(DescriptorVerdict descriptor) {
        Rule rule = descriptor.rule().orElse(null);
        LimitVerdict lv = descriptor.limit().orElse(null);
        if (rule == null || lv == null) {
            return new RateLimitFields(List.of(), -1);
        }
        Outcome o = lv.outcome();
        if (o == Outcome.UNLIMITED || o == Outcome.REPLACED || o == Outcome.NO_LIMIT) {
            return new RateLimitFields(List.of(), -1);
        }
        int index = descriptor.limits().indexOf(lv);
        Item item = item(policyName(rule, lv.limit(), Math.max(0, index)), lv);
        long retryAfter = o == Outcome.DENIED && lv.retryAfterNanos() != Long.MAX_VALUE
                ? Math.max(1, ceilSeconds(lv.retryAfterNanos()))
                : -1;
        return new RateLimitFields(List.of(item), retryAfter);
    }

    /** One limited limit's item, named {@code name}. */
    private static Item item(String name, LimitVerdict lv) {
        Limit limit = lv.limit();
        Duration window = Objects.requireNonNull(limit.window(), "a limited limit has a window");
        long remaining = lv.reportedRemaining();
        boolean known = remaining >= 0;
        long reset = -1;
        if (known) {
            long nanos = lv.refused() ? lv.retryAfterNanos() : lv.resetAfterNanos();
            if (nanos > 0 && nanos != Long.MAX_VALUE) {
                reset = ceilSeconds(nanos);
            }
        }
        return new Item(
                name,
                limit.requestsPerUnit(),
                Math.max(1, ceilSeconds(window)),
                remaining,
                reset,
                lv.outcome() == Outcome.DENIED);
    }

    /**
     * The name of a limit in the fields: its {@code name} in the configuration; else the path of its rule
     * ({@code client_id}, {@code client_id.username}, {@code client_id_big-partner}); else, for a rule of several
     * limits, the path and the limit's index ({@code client_id_big-partner#1}).
     */
    public static String policyName(Rule rule, Limit limit, int index) {
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
    public List<Item> items() {
        return items;
    }

    /** The {@code RateLimit-Policy} field value; null when no limit is advertised. */
    public @Nullable String policyField() {
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
    public @Nullable String rateLimitField() {
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
    public long retryAfter() {
        return retryAfter;
    }

    /** The names of the limits that refused the request. */
    public List<String> violated() {
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
    public @Nullable Item decisive() {
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

    /**
     * The three-number fields of the {@link #decisive()} limit, in order, each name {@code prefix} followed by
     * {@code Limit}, {@code Remaining} and {@code Reset} (seconds until reset, not a time; left out when not known):
     * {@code X-RateLimit-} for the legacy fields, {@code RateLimit-} for draft 03's. Empty when no count is known.
     */
    public Map<String, String> threeNumberFields(String prefix) {
        Item d = decisive();
        if (d == null) {
            return Map.of();
        }
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put(prefix + "Limit", Long.toString(d.quota()));
        fields.put(prefix + "Remaining", Long.toString(d.remaining()));
        if (d.reset() >= 0) {
            fields.put(prefix + "Reset", Long.toString(d.reset()));
        }
        return fields;
    }

    /**
     * One sentence on the first refusing limit, for a refusal's problem body: {@code 5 requests per 1 s allowed by
     * "client_id"; retry in 1 s.}
     */
    public String refusalDetail() {
        String retry = retryAfter >= 0 ? "; retry in " + retryAfter + " s." : ".";
        for (Item i : items) {
            if (i.denied()) {
                return i.quota() + " requests per " + i.window() + " s allowed by \"" + i.name() + "\"" + retry;
            }
        }
        return "The request was refused by a rate limit" + retry;
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
