package dev.sluice.example.oauth;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Objects;
import java.util.function.Function;
import org.springframework.security.oauth2.core.AuthorizationGrantType;
import org.springframework.security.oauth2.core.endpoint.OAuth2ParameterNames;
import org.springframework.security.oauth2.server.authorization.OAuth2Authorization;
import org.springframework.security.oauth2.server.authorization.OAuth2AuthorizationService;
import org.springframework.security.oauth2.server.authorization.OAuth2TokenType;

/**
 * The user of a token request: the principal of the authorization its {@code code} ({@code authorization_code}) or
 * {@code refresh_token} ({@code refresh_token}) belongs to, looked up in the server's authorizations; empty ("not
 * known", limited per client) for other grants, and for a code or refresh token the server does not know. Reads request parameters only, as the filter's
 * extractor must. Thread-safe if the authorization service is.
 */
final class TokenRequestUsers implements Function<HttpServletRequest, String> {

    /** No user: the extractor limits the request per client. */
    private static final String NOT_KNOWN = "";

    private static final OAuth2TokenType CODE = new OAuth2TokenType(OAuth2ParameterNames.CODE);

    private final OAuth2AuthorizationService authorizations;

    TokenRequestUsers(OAuth2AuthorizationService authorizations) {
        this.authorizations = Objects.requireNonNull(authorizations, "authorizations must not be null");
    }

    @Override
    public String apply(HttpServletRequest request) {
        String grantType = request.getParameter(OAuth2ParameterNames.GRANT_TYPE);
        String token;
        OAuth2TokenType type;
        if (AuthorizationGrantType.AUTHORIZATION_CODE.getValue().equals(grantType)) {
            token = request.getParameter(OAuth2ParameterNames.CODE);
            type = CODE;
        } else if (AuthorizationGrantType.REFRESH_TOKEN.getValue().equals(grantType)) {
            token = request.getParameter(OAuth2ParameterNames.REFRESH_TOKEN);
            type = OAuth2TokenType.REFRESH_TOKEN;
        } else {
            return NOT_KNOWN;
        }
        if (token == null || token.isEmpty()) {
            return NOT_KNOWN;
        }
        OAuth2Authorization authorization = authorizations.findByToken(token, type);
        return authorization == null ? NOT_KNOWN : authorization.getPrincipalName();
    }
}
