package dev.sluice.policy;

import java.util.List;
import java.util.Objects;

/**
 * The OAuth key scheme of the Allegro write-up: a token request as descriptors. A client acting for itself
 * ({@code client_credentials}) is limited per client; a grant on behalf of a user ({@code authorization_code},
 * {@code refresh_token}, {@code password}, the device code, token exchange, JWT and SAML bearer …) per client and
 * per user of that client.
 *
 * <pre>{@code
 * limiter.check("oauth-token", OAuthDescriptors.forTokenRequest(grantType, clientId, username), 1);
 * }</pre>
 *
 * With the configuration of {@code docs/policies.md}: {@code [client_id]} matches the per-client rule and
 * {@code [client_id, username]} the per-user rule nested under it.
 */
public final class OAuthDescriptors {

    /** The descriptor key of the client. */
    public static final String CLIENT_ID = "client_id";
    /** The descriptor key of the user. */
    public static final String USERNAME = "username";
    /** The grant by which a client acts for itself. */
    public static final String CLIENT_CREDENTIALS = "client_credentials";

    private OAuthDescriptors() {}

    /**
     * The descriptors of a token request: {@code [client_id]} for {@code client_credentials}, {@code [client_id,
     * username]} for a user grant, as one descriptor (the per-user rule nests under the per-client one).
     *
     * @param grantType the {@code grant_type}; a user grant is any grant but {@code client_credentials}
     * @param clientId  the client, not empty
     * @param username  the user; required (not null or empty) for a user grant, ignored for
     *                  {@code client_credentials}
     * @throws IllegalArgumentException if the client is empty, or a user grant has no username
     */
    public static List<Descriptor> forTokenRequest(String grantType, String clientId, String username) {
        Objects.requireNonNull(grantType, "grantType must not be null");
        Objects.requireNonNull(clientId, "clientId must not be null");
        if (clientId.isEmpty()) {
            throw new IllegalArgumentException("clientId must not be empty");
        }
        if (grantType.isEmpty()) {
            throw new IllegalArgumentException("grantType must not be empty");
        }
        if (CLIENT_CREDENTIALS.equals(grantType)) {
            return List.of(Descriptor.of(CLIENT_ID, clientId));
        }
        if (username == null || username.isEmpty()) {
            throw new IllegalArgumentException("grant_type " + grantType + " acts for a user and is limited per "
                    + "client and user: a username is required, was " + (username == null ? "null" : "empty"));
        }
        return List.of(Descriptor.of(CLIENT_ID, clientId, USERNAME, username));
    }
}
