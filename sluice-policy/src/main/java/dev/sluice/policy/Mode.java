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
    SHADOW_BAN;

    /** The name used in configuration files: {@code enforce}, {@code dry_run}, {@code shadow_ban}. */
    public String configName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
