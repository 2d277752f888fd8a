package dev.sluice.policy;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The answer to {@link PolicyLimiter#check}: whether the request may proceed, and what each descriptor's limits
 * answered. The whole answer, at every front door: when the store fails, {@link #allowed()} is already the domain's
 * {@code on_store_failure} ({@link #storeFailure()}). Immutable.
 */
public final class Verdict {

    private final boolean allowed;
    /** Null unless a shadow-ban limit refused the request. */
    private final @Nullable Rule shadowBan;
    /** The domain's {@code on_store_failure} that answered; null when the store answered every limit it was asked. */
    private final @Nullable OnStoreFailure storeFailure;

    private final boolean storeTimedOut;
    /** Whether no limit refused the request, nor would have ({@link #refusedNothing()}). */
    private final boolean refusedNothing;
    /** What the engine decided, from which {@link #descriptors} are built when first read; null when given built. */
    private final Engine.@Nullable Decided decided;
    /**
     * The verdict per descriptor, once built. Written without a lock: every thread that reads it null builds an equal
     * list from {@link #decided}, which no one changes after the verdict is made, and the list and the verdicts in it
     * are immutable (final fields only), so a thread sees null or a whole list.
     */
    private @Nullable List<DescriptorVerdict> descriptors;

    Verdict(
            boolean allowed,
            @Nullable Rule shadowBan,
            @Nullable OnStoreFailure storeFailure,
            boolean storeTimedOut,
            List<DescriptorVerdict> descriptors) {
        this.allowed = allowed;
        this.shadowBan = shadowBan;
        this.storeFailure = storeFailure;
        this.storeTimedOut = storeTimedOut;
        this.decided = null;
        this.descriptors = List.copyOf(descriptors);
        boolean none = true;
        for (DescriptorVerdict d : this.descriptors) {
            for (LimitVerdict l : d.limits()) {
                none &= !l.refused();
            }
        }
        this.refusedNothing = none;
    }

    /**
     * A verdict whose per-descriptor answers are built from {@code decided} when first read.
     *
     * @param refusedNothing whether no limit of {@code decided} refused, as {@link #refusedNothing()} says
     */
    Verdict(
            boolean allowed,
            @Nullable Rule shadowBan,
            @Nullable OnStoreFailure storeFailure,
            boolean storeTimedOut,
            boolean refusedNothing,
            Engine.Decided decided) {
        this.allowed = allowed;
        this.shadowBan = shadowBan;
        this.storeFailure = storeFailure;
        this.storeTimedOut = storeTimedOut;
        this.refusedNothing = refusedNothing;
        this.decided = decided;
    }

    /**
     * Whether the request may proceed: no enforced limit refused it, and, where the store failed, the domain's
     * {@code on_store_failure} is {@code allow}. Limits in {@link Mode#DRY_RUN} and {@link Mode#SHADOW_BAN} never make
     * this false.
     */
    public boolean allowed() {
        return allowed;
    }

    /**
     * Whether a {@link Mode#SHADOW_BAN} limit refused the request: answer the caller as if it passed, and drop the
     * work. Only when {@link #allowed()}.
     */
    public boolean shadowBanned() {
        return shadowBan != null;
    }

    /** The rule whose limit shadow-banned the request, for the {@code x-sluice-shadow-ban} header. */
    public Optional<Rule> shadowBanRule() {
        return Optional.ofNullable(shadowBan);
    }

    /**
     * Whether the store failed or did not answer in time on a limit of the request, so that the domain's
     * {@code on_store_failure} answered for it ({@link #storeFailure()}).
     */
    public boolean storeFailed() {
        return storeFailure != null;
    }

    /**
     * The domain's {@code on_store_failure} (of the configuration that decided the request) when it answered because
     * the store failed or did not answer in time: {@link OnStoreFailure#ALLOW} let the limits it answered pass,
     * {@link OnStoreFailure#DENY} refused them (and so the request, for an enforced limit); {@link #allowed()} is
     * already that answer. Empty when the store answered.
     */
    public Optional<OnStoreFailure> storeFailure() {
        return Optional.ofNullable(storeFailure);
    }

    /**
     * Whether the store failure was a timeout: the check was not decided within the limiter's deadline
     * ({@link PolicyLimiter.Builder#deadline}), so that {@code on_store_failure} answered every limit, or the store's
     * own timeout ended a call ({@link dev.sluice.Decision#timedOut()}); implies {@link #storeFailed()} when a limit was
     * asked. False for a store that failed otherwise (an error, a refused connection).
     */
    public boolean storeTimedOut() {
        return storeTimedOut;
    }

    /**
     * Whether no limit refused the request, nor would have: no {@link LimitVerdict#refused()} among
     * {@link #descriptors()} (no {@link Outcome#DENIED}, {@link Outcome#SHADOW_BANNED}, {@link Outcome#OVER_QUOTA} or
     * {@link Outcome#WOULD_DENY}), answered without building them. Implies {@link #allowed()}; a request of dry-run
     * limits that all had room refused nothing, one a dry-run limit would have refused did.
     */
    public boolean refusedNothing() {
        return refusedNothing;
    }

    /**
     * How many limits of the request a store's over-limit cache refused without a store call
     * ({@link dev.sluice.Decision#cached()}); for the metrics.
     */
    int cachedRefusals() {
        Engine.Decided d = decided;
        return d == null ? 0 : d.cachedRefusals;
    }

    /** One verdict per descriptor, in the order of the request. */
    public List<DescriptorVerdict> descriptors() {
        List<DescriptorVerdict> d = descriptors;
        if (d == null) {
            d = Objects.requireNonNull(decided, "a verdict is given its descriptors or what decided them")
                    .descriptors();
            descriptors = d;
        }
        return d;
    }

    /** The verdict of the {@code i}-th descriptor. */
    public DescriptorVerdict descriptor(int i) {
        return descriptors().get(i);
    }

    /** When refused, the longest wait any refusing limit asks for; zero when allowed. */
    public Duration retryAfter() {
        long max = 0;
        if (!allowed) {
            for (DescriptorVerdict d : descriptors()) {
                for (LimitVerdict l : d.limits()) {
                    if (l.outcome() == Outcome.DENIED) {
                        max = Math.max(max, l.retryAfterNanos());
                    }
                }
            }
        }
        return Duration.ofNanos(max);
    }

    /** The fewest permits left under any descriptor; {@link Long#MAX_VALUE} when no limit applied. */
    public long remaining() {
        long min = Long.MAX_VALUE;
        for (DescriptorVerdict d : descriptors()) {
            long r = d.remaining();
            if (r >= 0) {
                min = Math.min(min, r);
            }
        }
        return min;
    }

    @Override
    public String toString() {
        return "Verdict[" + (allowed ? "allowed" : "denied")
                + (shadowBan == null ? "" : ", shadow-banned by " + shadowBan.path()) + ", " + descriptors() + "]";
    }
}
