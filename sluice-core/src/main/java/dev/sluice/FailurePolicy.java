package dev.sluice;

/**
 * What a limiter on a shared store answers when the store fails or does not answer within its timeout.
 * Whatever the policy, the failure is counted and reported to the store's failure listener; a raw driver
 * exception never reaches the caller.
 */
public enum FailurePolicy {
    /** Allow the request: availability first. The right choice for most API limits; the default. */
    FAIL_OPEN,
    /**
     * Deny the request, telling the caller to retry after the store's configured back-off. The right choice
     * where a limit guards against abuse, such as failed logins.
     */
    FAIL_CLOSED,
    /** Throw a {@link SluiceException} that carries the store's failure as its cause. */
    THROW
}
