package dev.sluice.http;

import dev.sluice.policy.Descriptor;
import dev.sluice.policy.OAuthDescriptors;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The descriptors of an OAuth 2.0 token request (RFC 6749 §4), as {@link OAuthDescriptors#forTokenRequest} defines
 * them: {@code [client_id]} for {@code client_credentials}, {@code [client_id, username]} for a grant on behalf of a
 * user. Thread-safe and immutable.
 *
 * <ul>
 *   <li>{@code grant_type} is the request parameter.
 *   <li>{@code client_id}: by default the client the request names, from HTTP Basic authentication when the request
 *       has it ({@code Authorization: Basic base64(client_id:secret)}, the id form-urlencoded as RFC 6749 §2.3.1 says,
 *       so {@code my%3Aapp} is {@code my:app}), else from the {@code client_id} parameter (public clients,
 *       {@code client_secret_post}). The name is not proof: before the client is authenticated, anyone who knows a
 *       client id can spend its limit. With {@link Builder#authenticatedClient()} the client id is the authenticated
 *       principal's name instead, for a filter that runs after client authentication: then only requests of the
 *       real client count against its limit.
 *   <li>The user: the {@code username} parameter of a {@code password} grant. The other user grants
 *       ({@code authorization_code}, {@code refresh_token}, the device code …) do not name their user in the request;
 *       they are limited per client ({@code [client_id]}) unless {@link Builder#username(Function)} says how to find
 *       the user. A {@code username} parameter on those grants is ignored: the caller chooses it freely, and a limit
 *       keyed on it could be escaped by changing it.
 *   <li>A request with no {@code grant_type} or no client id is <em>unidentified</em>: by default not limited (the
 *       token endpoint refuses it anyway, {@code invalid_request} or {@code invalid_client}), or limited under the
 *       descriptor {@link Builder#unidentified(Function)} gives, such as one per remote address.
 * </ul>
 *
 * Parameters are read with {@link HttpServletRequest#getParameter(String)}, which parses an
 * {@code application/x-www-form-urlencoded} body and keeps it for the servlet behind the filter. The cost is one hit.
 */
public final class OAuthTokenExtractor implements DescriptorExtractor {

    private final Function<? super HttpServletRequest, @Nullable String> username;
    private final @Nullable Function<? super HttpServletRequest, Descriptor> unidentified;
    private final @Nullable Function<? super HttpServletRequest, @Nullable String> authenticatedClient;

    private OAuthTokenExtractor(Builder b) {
        this.username = b.username;
        this.unidentified = b.unidentified;
        this.authenticatedClient = b.authenticatedClient;
    }

    /** The extractor with its defaults: users of {@code password} grants only; unidentified requests not limited. */
    public static OAuthTokenExtractor create() {
        return builder().build();
    }

    /** A builder with the defaults of {@link #create()}. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public Optional<Extraction> extract(HttpServletRequest request) {
        String grantType = request.getParameter("grant_type");
        String clientId = authenticatedClient == null ? requestedClientId(request) : authenticatedClient.apply(request);
        if (grantType == null || grantType.isEmpty() || clientId == null || clientId.isEmpty()) {
            return unidentified(request);
        }
        if (OAuthDescriptors.CLIENT_CREDENTIALS.equals(grantType)) {
            return Optional.of(Extraction.of(OAuthDescriptors.forTokenRequest(grantType, clientId, "")));
        }
        String user = username.apply(request);
        if (user == null || user.isEmpty()) {
            return Optional.of(Extraction.of(Descriptor.of(OAuthDescriptors.CLIENT_ID, clientId)));
        }
        return Optional.of(Extraction.of(OAuthDescriptors.forTokenRequest(grantType, clientId, user)));
    }

    /** Whether the client id is the authenticated principal's ({@link Builder#authenticatedClient()}). */
    public boolean readsAuthenticatedClient() {
        return authenticatedClient != null;
    }

    private Optional<Extraction> unidentified(HttpServletRequest request) {
        return unidentified == null ? Optional.empty() : Optional.of(Extraction.of(unidentified.apply(request)));
    }

    /**
     * The client id a token request names, authenticated or not: from HTTP Basic credentials when it has them (null if
     * they are malformed), else its {@code client_id} parameter.
     */
    static @Nullable String requestedClientId(HttpServletRequest request) {
        String authorization = request.getHeader("Authorization");
        if (authorization != null && authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
            return basicClientId(authorization.substring(6).trim());
        }
        return request.getParameter(OAuthDescriptors.CLIENT_ID);
    }

    /** The client id of HTTP Basic credentials; null if they are malformed. */
    static @Nullable String basicClientId(String credentials) {
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(credentials), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
        int colon = decoded.indexOf(':');
        if (colon < 0) {
            return null;
        }
        try {
            return URLDecoder.decode(decoded.substring(0, colon), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) { // a bad %-escape
            return null;
        }
    }

    /** The user of a {@code password} grant: its {@code username} parameter. */
    private static @Nullable String passwordGrantUser(HttpServletRequest request) {
        return "password".equals(request.getParameter("grant_type")) ? request.getParameter("username") : null;
    }

    /** Builds an {@link OAuthTokenExtractor}. Not thread-safe. */
    public static final class Builder {

        private Function<? super HttpServletRequest, @Nullable String> username =
                OAuthTokenExtractor::passwordGrantUser;
        private @Nullable Function<? super HttpServletRequest, Descriptor> unidentified;
        private @Nullable Function<? super HttpServletRequest, @Nullable String> authenticatedClient;

        private Builder() {}

        /**
         * Counts a token request against its client's limit only once the client is authenticated: the client id is
         * the name of {@link HttpServletRequest#getUserPrincipal()}, and a request without a principal is unidentified.
         * For a filter placed after client authentication (in Spring Authorization Server: in its security chain,
         * after {@code OAuth2ClientAuthenticationFilter}), so that requests with a wrong secret, or none, cost the
         * client nothing. Failed authentications are then limited apart, by {@link AuthenticationFailureFilter}.
         */
        public Builder authenticatedClient() {
            return authenticatedClient(RequestEntry::principalName);
        }

        /**
         * As {@link #authenticatedClient()}, with the authenticated client's id read by {@code client} (null or empty
         * when the request's client is not authenticated): for an application whose principal can be something else
         * than a client, such as a user's login session, and that tells them apart.
         */
        public Builder authenticatedClient(Function<? super HttpServletRequest, @Nullable String> client) {
            this.authenticatedClient = Objects.requireNonNull(client, "client must not be null");
            return this;
        }

        /**
         * How the user of a user grant is found; null or empty for "not known", and the request is limited per client.
         * Called for every grant but {@code client_credentials}. The default reads the {@code username} parameter of
         * a {@code password} grant and knows no user for the others; an application that can resolve an
         * authorization code or refresh token to its user cheaply can say so here.
         */
        public Builder username(Function<? super HttpServletRequest, @Nullable String> username) {
            this.username = Objects.requireNonNull(username, "username must not be null");
            return this;
        }

        /**
         * Limits requests with no {@code grant_type} or no client id under the descriptor {@code descriptor} returns
         * for them, e.g. {@code r -> Descriptor.of("remote_address", r.getRemoteAddr())}; by default they are not
         * limited.
         */
        public Builder unidentified(Function<? super HttpServletRequest, Descriptor> descriptor) {
            this.unidentified = Objects.requireNonNull(descriptor, "descriptor must not be null");
            return this;
        }

        /** Builds the extractor. */
        public OAuthTokenExtractor build() {
            return new OAuthTokenExtractor(this);
        }
    }

    @Override
    public String toString() {
        return "OAuthTokenExtractor"
                + (authenticatedClient == null ? "" : "[authenticated client]")
                + (unidentified == null ? "" : "[unidentified limited]");
    }
}
