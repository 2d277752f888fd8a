package dev.sluice.example.oauth;

import dev.sluice.http.DescriptorExtractor;
import dev.sluice.http.OAuthTokenExtractor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.oauth2.server.authorization.OAuth2AuthorizationService;

/**
 * What the starter cannot know about this server: who the user of a token request is.
 *
 * <p>A {@code client_credentials} request names its client, and the starter's default extractor limits it per client.
 * An {@code authorization_code} or {@code refresh_token} request names no user: only the code or refresh token does,
 * through the authorization the server stored when the user consented. So the extractor here looks the code or refresh
 * token up in the server's own {@link OAuth2AuthorizationService} ({@link TokenRequestUsers}), before the token
 * endpoint runs, and the request is
 * limited as {@code [client_id, username]} under the {@code per-user} rule. The user comes from the server's record,
 * not from anything the caller chose, so a client cannot escape the limit by naming another user; a code or refresh
 * token that is unknown (expired, forged) has no user and is limited per client, and the endpoint refuses it anyway.
 *
 * <p>Why here, before the endpoint, and not after authentication (an {@code AuthenticationProvider} that wraps the
 * code provider, an {@code OAuth2TokenCustomizer}): by the time those know the principal, the provider has redeemed
 * the code and is minting tokens. A refusal there throws the tokens away and, for a code, may leave the user with a
 * spent one; and Spring Authorization Server answers its exceptions with a {@code 400} error body, not a {@code 429}
 * with {@code Retry-After}. Looked up here, a refused request has consumed nothing: the code is still good after
 * {@code Retry-After}. The price is one more lookup of the authorization per user-grant request, the lookup the token
 * endpoint makes itself a moment later (with the JDBC authorization service: one indexed query).
 */
@Configuration(proxyBeanMethods = false)
public class RateLimitConfig {

    /** The starter's OAuth extractor, told how to find the user of a code or refresh token. */
    @Bean
    public DescriptorExtractor tokenRequestDescriptors(OAuth2AuthorizationService authorizations) {
        return OAuthTokenExtractor.builder()
                .username(new TokenRequestUsers(authorizations))
                .build();
    }
}
