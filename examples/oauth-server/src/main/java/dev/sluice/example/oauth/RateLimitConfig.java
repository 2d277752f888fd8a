package dev.sluice.example.oauth;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.http.AuthenticationFailureFilter;
import dev.sluice.http.DescriptorExtractor;
import dev.sluice.http.OAuthTokenExtractor;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spring.boot.SluiceAutoConfiguration;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Clock;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.security.SecurityProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.oauth2.server.authorization.OAuth2AuthorizationService;
import org.springframework.security.oauth2.server.authorization.authentication.OAuth2ClientAuthenticationToken;

/**
 * What the starter cannot know about this server: when a client is authenticated, who the user of a token request
 * is, and how many failed authentications to let through.
 *
 * <p><b>Only authenticated clients are counted.</b> A token request names its client (HTTP Basic, or the
 * {@code client_id} parameter), but the name proves nothing until the secret is checked: counted before that, ten
 * requests with a wrong secret would spend the real client's limit and lock it out. So the starter's filter is not
 * registered before Spring Security ({@code sluice.filter.register: false}); {@link AuthorizationServerConfig} puts it
 * in the authorization server's chain, after client authentication, and the extractor here reads the client id of the
 * authenticated client ({@link OAuthTokenExtractor.Builder#authenticatedClient(java.util.function.Function)}): a
 * principal that is Spring Authorization Server's {@code OAuth2ClientAuthenticationToken}, not a user's login
 * session. A request whose client did not authenticate is not counted against any client; Spring Security refuses
 * it.
 *
 * <p><b>Failed authentications have limits of their own</b>, so guessing secrets is limited too: 5 a minute per
 * client id from one address, 20 a minute per address whatever client it names ({@link AuthenticationFailureFilter}).
 * That filter runs before Spring Security, reserves a failure for every token request, and gives it back when the
 * answer is not a {@code 401}: successes cost nothing, and a guess past the limit is refused before its secret is
 * checked. Its limits live in the starter's store (in memory here, Redis or another shared store in production), so
 * every instance counts the same failures. They are not policies: the global dry run does not switch them off.
 *
 * <p><b>The user of a user grant.</b> A {@code client_credentials} request is limited per client. An
 * {@code authorization_code} or {@code refresh_token} request names no user: only the code or refresh token does,
 * through the authorization the server stored when the user consented. So the extractor looks the code or refresh
 * token up in the server's own {@link OAuth2AuthorizationService} ({@link TokenRequestUsers}), before the token
 * endpoint runs, and the request is limited as {@code [client_id, username]} under the {@code per-user} rule. The user
 * comes from the server's record, not from anything the caller chose, so a client cannot escape the limit by naming
 * another user; a code or refresh token that is unknown (expired, forged) has no user and is limited per client, and
 * the endpoint refuses it anyway.
 *
 * <p>Why before the token endpoint, and not inside it (an {@code AuthenticationProvider} that wraps the code provider,
 * an {@code OAuth2TokenCustomizer}): by the time those know the user, the provider has redeemed the code and is
 * minting tokens. A refusal there throws the tokens away and, for a code, may leave the user with a spent one; and
 * Spring Authorization Server answers its exceptions with a {@code 400} error body, not a {@code 429} with
 * {@code Retry-After}. Checked between client authentication and the endpoint, a refused request has consumed
 * nothing: the code is still good after {@code Retry-After}. The price is one more lookup of the authorization per
 * user-grant request, the lookup the token endpoint makes itself a moment later (with the JDBC authorization service:
 * one indexed query).
 */
@Configuration(proxyBeanMethods = false)
public class RateLimitConfig {

    /** The starter's OAuth extractor, on the authenticated client, told how to find the user of a code or token. */
    @Bean
    public DescriptorExtractor tokenRequestDescriptors(OAuth2AuthorizationService authorizations) {
        return OAuthTokenExtractor.builder()
                .authenticatedClient(RateLimitConfig::authenticatedClient)
                .username(new TokenRequestUsers(authorizations))
                .build();
    }

    /**
     * The id of the client Spring Authorization Server authenticated; empty ("not authenticated") for any other
     * principal, such as the login session of a user whose browser posts to the token endpoint.
     */
    static String authenticatedClient(HttpServletRequest request) {
        return request.getUserPrincipal() instanceof OAuth2ClientAuthenticationToken client && client.isAuthenticated()
                ? client.getName()
                : "";
    }

    /** The limits of failed client authentications, on the token endpoint, before Spring Security's chain. */
    @Bean
    public FilterRegistrationBean<AuthenticationFailureFilter> authenticationFailureLimits(
            RateLimitStore store, @Qualifier(SluiceAutoConfiguration.CLOCK_BEAN) ObjectProvider<Clock> clock) {
        Clock time = clock.getIfAvailable(Clock::systemUTC);
        AuthenticationFailureFilter failures = AuthenticationFailureFilter.builder()
                .perClient(RateLimiter.builder(Algorithm.SLIDING_TAIL)
                        .limit(5, Duration.ofMinutes(1))
                        .store(store)
                        .clock(time)
                        .build())
                .perAddress(RateLimiter.builder(Algorithm.SLIDING_TAIL)
                        .limit(20, Duration.ofMinutes(1))
                        .store(store)
                        .clock(time)
                        .build())
                .build();
        FilterRegistrationBean<AuthenticationFailureFilter> registration = new FilterRegistrationBean<>(failures);
        registration.addUrlPatterns("/oauth2/token");
        registration.setOrder(SecurityProperties.DEFAULT_FILTER_ORDER - 10);
        return registration;
    }
}
