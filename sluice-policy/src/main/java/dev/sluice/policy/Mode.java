package dev.sluice.policy;

/** What a rule does when one of its limits refuses a request. */
public enum Mode {
    /** Refuse the request: the caller gets {@link Verdict#allowed()} {@code false}. */
    ENFORCE,
    /**
     * Allow it and count a "would have denied" ({@code shadow_mode: true} in envoyproxy/ratelimit): for rolling a
     * limit out before it bites.
     */
    DRY_RUN,
    /**
     * Allow it as far as the caller can tell, and tell the application to drop the work quietly
     * ({@link Verdict#shadowBanned()}).
     */
    SHADOW_BAN,
    /**
     * {@code quota_mode: true} in envoyproxy/ratelimit: each limit in this mode is counted on its own, and reported
     * over its limit when it is, but the request is refused only when every limit of it in this mode is over
     * ({@link Outcome#OVER_QUOTA} otherwise). Example: a request under two quota limits, one of them over: allowed,
     * the one over reported {@code OVER_LIMIT}; both over: refused.
     */
    QUOTA;

    /** The name used in configuration files: {@code enforce}, {@code dry_run}, {@code shadow_ban}. */
    public String configName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
