package dev.sluice.policy;

import java.util.Locale;

/**
 * What a domain answers when the store fails or times out ({@code on_store_failure} in its file): the limits of such
 * a request report {@link LimitVerdict#failed()} and {@link Verdict#storeFailed()} is true; a service in front of
 * the limiter reads this to answer. The limiter itself decides by its store's {@link dev.sluice.FailurePolicy}.
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
