package dev.sluice.policy;

import java.util.Locale;

/**
 * What a domain answers when the store fails or times out ({@code on_store_failure} in its file). The policy limiter
 * applies it inside the check, from the configuration that decided the request, whatever the store's own
 * {@link dev.sluice.FailurePolicy}: {@link Verdict#allowed()} is already this answer, the limits it answered report
 * {@link LimitVerdict#failed()} and {@link Verdict#storeFailure()} names it. A front door only turns the verdict into
 * its response.
 */
public enum OnStoreFailure {
    /** Let the request through: availability first (the default). */
    ALLOW,
    /** Refuse the request: where the limit guards against abuse. */
    DENY;

    /** The name in the configuration: {@code allow} or {@code deny}. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
