package dev.sluice.http;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.IntPredicate;
import org.jspecify.annotations.Nullable;

/**
 * Limits failed authentications, per remote address and per client id from one address, with the reservation pattern
 * of {@link RateLimiter#reserve}: a failure is reserved before the request is authenticated, and given back when it
 * turns out not to be one. Credential stuffing (many secrets tried for one client id, or many client ids tried from one
 * address) is refused with a {@code 429} before the guess is even checked, while the real client, authenticating
 * from its own address, is never held back by what others send in its name.
 *
 * <pre>{@code
 * AuthenticationFailureFilter failures = AuthenticationFailureFilter.builder()
 *         .perAddress(RateLimiter.builder(Algorithm.SLIDING_TAIL).limit(20, Duration.ofMinutes(1)).store(store).build())
 *         .perClient(RateLimiter.builder(Algorithm.SLIDING_TAIL).limit(5, Duration.ofMinutes(1)).store(store).build())
 *         .build();
 * // mapped to the token endpoint, before client authentication
 * }</pre>
 *
 * <p>For each request: one permit is reserved on the per-address limiter (key: the remote address) and, when the request
 * names a client, one on the per-client limiter (key: the address and the client id). If either refuses, the request
 * is answered {@code 429} with {@code Retry-After} and an {@code application/problem+json} body naming the limit,
 * consumes nothing, and the chain is not called. Otherwise the chain runs; when the response is not a failed
 * authentication ({@link Builder#failedWhen(IntPredicate)}, by default status {@code 401}: RFC 6749's
 * {@code invalid_client}), both permits are given back. So only failures count, and a success costs nothing.
 *
 * <p>Why per client id <em>from one address</em>, not per client id alone: a limit on a client id's failures, whoever
 * sends them, would let anyone who knows the id stop the real client from authenticating, the lockout this filter
 * exists to prevent. An attacker spreading guesses for one client over many addresses meets each address's limit; a
 * client secret of enough entropy makes such guessing hopeless anyway.
 *
 * <p>The client id is the one the request names ({@code client_id} from HTTP Basic or the form, as
 * {@link OAuthTokenExtractor} reads it) unless {@link Builder#clientId(Function)} says otherwise; one longer than
 * {@value #MAX_CLIENT_ID_LENGTH} characters is not used as a key, and the request is limited per address only.
 * Thread-safe and immutable. Requests that are not HTTP pass untouched, and a forward or include of a request this
 * filter has seen is not counted again.
 */
public final class AuthenticationFailureFilter implements Filter {

    /** The longest client id used in a key. */
    public static final int MAX_CLIENT_ID_LENGTH = 256;

    /** The name of the per-address limit in {@code violated-policies}. */
    public static final String PER_ADDRESS = "failed-authentications-per-address";

    /** The name of the per-client limit in {@code violated-policies}. */
    public static final String PER_CLIENT = "failed-authentications-per-client";

    private static final String SEEN_ATTRIBUTE = AuthenticationFailureFilter.class.getName() + ".seen";

    private final @Nullable RateLimiter perAddress;
    private final @Nullable RateLimiter perClient;
    private final Function<? super HttpServletRequest, @Nullable String> clientId;
    private final IntPredicate failed;

    private AuthenticationFailureFilter(Builder b) {
        this.perAddress = b.perAddress;
        this.perClient = b.perClient;
        this.clientId = b.clientId;
        this.failed = b.failed;
    }

    /** A builder; at least one of the two limiters is required. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (!Refusals.taken(request, response, SEEN_ATTRIBUTE)) {
            chain.doFilter(request, response);
            return;
        }
        HttpServletRequest req = (HttpServletRequest) request;
        HttpServletResponse res = (HttpServletResponse) response;
        req.setAttribute(SEEN_ATTRIBUTE, Boolean.TRUE);
        String address = req.getRemoteAddr();
        Reservation byAddress = perAddress == null ? null : perAddress.reserve(address, 1);
        if (byAddress != null && !byAddress.decision().allowed()) {
            refuse(res, PER_ADDRESS, byAddress.decision());
            return;
        }
        String client = clientId.apply(req);
        boolean keyed = client != null && !client.isEmpty() && client.length() <= MAX_CLIENT_ID_LENGTH;
        Reservation byClient = perClient == null || !keyed ? null : perClient.reserve(address + " " + client, 1);
        if (byClient != null && !byClient.decision().allowed()) {
            cancel(byAddress);
            refuse(res, PER_CLIENT, byClient.decision());
            return;
        }
        boolean failure = false;
        try {
            chain.doFilter(request, response);
            failure = failed.test(res.getStatus());
        } finally {
            if (!failure) {
                cancel(byAddress);
                cancel(byClient);
            }
        }
    }

    private static void cancel(@Nullable Reservation r) {
        if (r != null) {
            r.cancel();
        }
    }

    private static void refuse(HttpServletResponse res, String name, Decision d) throws IOException {
        long retryAfter = Math.max(1, RateLimitFields.ceilSeconds(d.retryAfterNanos()));
        String detail = "Too many failed authentications ("
                + (name.equals(PER_ADDRESS) ? "from this address" : "for this client from this address")
                + "); retry in " + retryAfter + " s.";
        Refusals.tooManyRequests(res, retryAfter, ProblemJson.quotaExceeded(detail, List.of(name)));
    }

    @Override
    public String toString() {
        return "AuthenticationFailureFilter[perAddress=" + (perAddress == null ? "none" : perAddress.config())
                + ", perClient=" + (perClient == null ? "none" : perClient.config()) + "]";
    }

    /** Builds an {@link AuthenticationFailureFilter}. Not thread-safe. */
    public static final class Builder {

        private @Nullable RateLimiter perAddress;
        private @Nullable RateLimiter perClient;
        private Function<? super HttpServletRequest, @Nullable String> clientId =
                OAuthTokenExtractor::requestedClientId;
        private IntPredicate failed = status -> status == 401;

        private Builder() {}

        /** The limit of failed authentications from one remote address, whatever client they name. */
        public Builder perAddress(RateLimiter limiter) {
            this.perAddress = Objects.requireNonNull(limiter, "limiter must not be null");
            return this;
        }

        /** The limit of failed authentications of one client id from one remote address. */
        public Builder perClient(RateLimiter limiter) {
            this.perClient = Objects.requireNonNull(limiter, "limiter must not be null");
            return this;
        }

        /**
         * The client id a request names (null or empty for none); by default the OAuth token request's, from HTTP Basic
         * or the {@code client_id} parameter. A login form would read its {@code username} parameter.
         */
        public Builder clientId(Function<? super HttpServletRequest, @Nullable String> clientId) {
            this.clientId = Objects.requireNonNull(clientId, "clientId must not be null");
            return this;
        }

        /**
         * Which response status is a failed authentication; by default {@code 401}, the token endpoint's answer to
         * wrong client credentials ({@code invalid_client}, RFC 6749 §5.2).
         */
        public Builder failedWhen(IntPredicate status) {
            this.failed = Objects.requireNonNull(status, "status must not be null");
            return this;
        }

        /**
         * Builds the filter.
         *
         * @throws IllegalStateException if neither limiter was given
         */
        public AuthenticationFailureFilter build() {
            if (perAddress == null && perClient == null) {
                throw new IllegalStateException("no limit: give perAddress(...), perClient(...) or both");
            }
            return new AuthenticationFailureFilter(this);
        }
    }
}
