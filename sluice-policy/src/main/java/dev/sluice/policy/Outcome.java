package dev.sluice.policy;

/**
 * What became of one limit of a request, or of a descriptor as a whole (its most telling limit). Declared from the
 * most to the least telling: a descriptor's outcome is the first of its limits' outcomes in this order.
 */
public enum Outcome {
    /** An enforced limit refused the request, which is refused. Nothing was counted anywhere. */
    DENIED,
    /** A {@link Mode#SHADOW_BAN} limit refused: the caller is answered OK and the work should be dropped quietly. */
    SHADOW_BANNED,
    /**
     * A {@link Mode#QUOTA} limit over its limit while another quota limit of the request had room: reported over its
     * limit, the request allowed. Nothing was counted on it.
     */
    OVER_QUOTA,
    /** A {@link Mode#DRY_RUN} limit would have refused: the request is allowed, and counted as a "would deny". */
    WOULD_DENY,
    /** The limit allowed the request and counted it. */
    ALLOWED,
    /**
     * The limit was not counted: it had room but another limit refused the request (all or nothing), or a refusal
     * before it meant it was not asked.
     */
    NOT_COUNTED,
    /** {@code unlimited: true}: allowed without asking the store. */
    UNLIMITED,
    /** The limit was dropped by another limit of the same request that {@code replaces} it. */
    REPLACED,
    /** No rule applies to the descriptor: allowed, no limit ("OK, no limit" in envoyproxy/ratelimit). */
    NO_LIMIT;

    /** The lowercase name used as the {@code outcome} tag of metrics: {@code would_deny}, {@code shadow_banned} … */
    public String tag() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
