package dev.sluice.example.oauth;

import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.proc.SecurityContext;
import dev.sluice.http.SluiceFilter;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.security.interfaces.RSAPrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.util.UUID;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.http.MediaType;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.oauth2.core.AuthorizationGrantType;
import org.springframework.security.oauth2.core.ClientAuthenticationMethod;
import org.springframework.security.oauth2.server.authorization.InMemoryOAuth2AuthorizationService;
import org.springframework.security.oauth2.server.authorization.OAuth2AuthorizationService;
import org.springframework.security.oauth2.server.authorization.client.InMemoryRegisteredClientRepository;
import org.springframework.security.oauth2.server.authorization.client.RegisteredClient;
import org.springframework.security.oauth2.server.authorization.client.RegisteredClientRepository;
import org.springframework.security.oauth2.server.authorization.config.annotation.web.configurers.OAuth2AuthorizationServerConfigurer;
import org.springframework.security.oauth2.server.authorization.settings.AuthorizationServerSettings;
import org.springframework.security.oauth2.server.authorization.settings.ClientSettings;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.access.intercept.AuthorizationFilter;
import org.springframework.security.web.authentication.LoginUrlAuthenticationEntryPoint;
import org.springframework.security.web.util.matcher.MediaTypeRequestMatcher;

/**
 * A plain Spring Authorization Server: its endpoints, form login, clients and users in memory. One line here knows of
 * rate limits: the starter's filter is placed in the authorization server's chain, after client authentication.
 *
 * <p>Clients: {@code partner} ({@code client_credentials}, limited per client), {@code trusted-backend}
 * ({@code client_credentials}, unlimited by the policy), {@code web-app} ({@code authorization_code} and
 * {@code refresh_token} with consent, limited per user). Users: {@code alice}, {@code bob}; {@code ops} reads the
 * Actuator endpoints.
 *
 * <p>Secrets and passwords are stored plain ({@code {noop}}), and kept so ({@link #passwordEncoder()}), so that the
 * example starts with no setup and its tests' hundreds of token requests cost no password hashing. A real server stores them hashed ({@code {bcrypt}}, the
 * default of {@code PasswordEncoderFactories}) and its clients in a database ({@code JdbcRegisteredClientRepository}).
 */
@Configuration(proxyBeanMethods = false)
@EnableWebSecurity
public class AuthorizationServerConfig {

    /**
     * The authorization server's endpoints; a browser that is not logged in is sent to the login page. The rate limit
     * ({@link RateLimitConfig}) runs after client authentication and before the token endpoint: only a client that
     * proved its secret is counted.
     */
    @Bean
    @Order(1)
    public SecurityFilterChain authorizationServerChain(
            HttpSecurity http, FilterRegistrationBean<SluiceFilter> sluiceFilterRegistration) throws Exception {
        OAuth2AuthorizationServerConfigurer server = OAuth2AuthorizationServerConfigurer.authorizationServer();
        http.securityMatcher(server.getEndpointsMatcher())
                .with(server, Customizer.withDefaults())
                .addFilterBefore(sluiceFilterRegistration.getFilter(), AuthorizationFilter.class)
                .authorizeHttpRequests(requests -> requests.anyRequest().authenticated())
                .exceptionHandling(exceptions -> exceptions.defaultAuthenticationEntryPointFor(
                        new LoginUrlAuthenticationEntryPoint("/login"),
                        new MediaTypeRequestMatcher(MediaType.TEXT_HTML)));
        return http.build();
    }

    /** Everything else: form login for users; Actuator (but health) for {@code ops}, with HTTP Basic. */
    @Bean
    @Order(2)
    public SecurityFilterChain applicationChain(HttpSecurity http) throws Exception {
        http.authorizeHttpRequests(requests -> requests.requestMatchers("/actuator/health")
                        .permitAll()
                        .requestMatchers("/actuator/**")
                        .hasRole("OPS")
                        .anyRequest()
                        .authenticated())
                .formLogin(Customizer.withDefaults())
                .httpBasic(Customizer.withDefaults());
        return http.build();
    }

    /** The three clients. */
    @Bean
    public RegisteredClientRepository registeredClients() {
        RegisteredClient partner = RegisteredClient.withId(UUID.randomUUID().toString())
                .clientId("partner")
                .clientSecret("{noop}partner-secret")
                .clientAuthenticationMethod(ClientAuthenticationMethod.CLIENT_SECRET_BASIC)
                .authorizationGrantType(AuthorizationGrantType.CLIENT_CREDENTIALS)
                .scope("read")
                .build();
        RegisteredClient trusted = RegisteredClient.withId(UUID.randomUUID().toString())
                .clientId("trusted-backend")
                .clientSecret("{noop}trusted-secret")
                .clientAuthenticationMethod(ClientAuthenticationMethod.CLIENT_SECRET_BASIC)
                .authorizationGrantType(AuthorizationGrantType.CLIENT_CREDENTIALS)
                .scope("read")
                .build();
        RegisteredClient webApp = RegisteredClient.withId(UUID.randomUUID().toString())
                .clientId("web-app")
                .clientSecret("{noop}web-app-secret")
                .clientAuthenticationMethod(ClientAuthenticationMethod.CLIENT_SECRET_BASIC)
                .authorizationGrantType(AuthorizationGrantType.AUTHORIZATION_CODE)
                .authorizationGrantType(AuthorizationGrantType.REFRESH_TOKEN)
                .redirectUri("http://127.0.0.1:8080/authorized")
                .scope("read")
                .clientSettings(ClientSettings.builder()
                        .requireAuthorizationConsent(true)
                        .build())
                .build();
        return new InMemoryRegisteredClientRepository(partner, trusted, webApp);
    }

    /**
     * The authorizations (codes, tokens, consents' results): a bean of its own so that the rate limit's extractor
     * ({@link RateLimitConfig}) reads the same ones as the token endpoint.
     */
    @Bean
    public OAuth2AuthorizationService authorizationService() {
        return new InMemoryOAuth2AuthorizationService();
    }

    /**
     * The encoder of the secrets and passwords: Spring Security's delegating one ({@code {noop}}, {@code {bcrypt}}, ...),
     * except that it never upgrades a stored one. The default would: Spring Authorization Server re-encodes a client's
     * plain secret with bcrypt at its first use, as form login does a user's password, and every later request would
     * then pay for a bcrypt match. A real server, whose secrets are hashed already, keeps the default.
     */
    @Bean
    public PasswordEncoder passwordEncoder() {
        PasswordEncoder encoder = PasswordEncoderFactories.createDelegatingPasswordEncoder();
        return new PasswordEncoder() {
            @Override
            public String encode(CharSequence rawPassword) {
                return encoder.encode(rawPassword);
            }

            @Override
            public boolean matches(CharSequence rawPassword, String encodedPassword) {
                return encoder.matches(rawPassword, encodedPassword);
            }

            @Override
            public boolean upgradeEncoding(String encodedPassword) {
                return false;
            }
        };
    }

    /** Two users and an operator. */
    @Bean
    public UserDetailsService users() {
        return new InMemoryUserDetailsManager(
                User.withUsername("alice")
                        .password("{noop}alice-password")
                        .roles("USER")
                        .build(),
                User.withUsername("bob")
                        .password("{noop}bob-password")
                        .roles("USER")
                        .build(),
                User.withUsername("ops")
                        .password("{noop}ops-password")
                        .roles("OPS")
                        .build());
    }

    /** The endpoints' paths and the issuer: the defaults ({@code /oauth2/token} …). */
    @Bean
    public AuthorizationServerSettings authorizationServerSettings() {
        return AuthorizationServerSettings.builder().build();
    }

    /** The key the tokens are signed with, new at each start. */
    @Bean
    public JWKSource<SecurityContext> jwkSource() {
        KeyPair pair;
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            pair = generator.generateKeyPair();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("RSA is required of every Java platform", e);
        }
        RSAKey key = new RSAKey.Builder((RSAPublicKey) pair.getPublic())
                .privateKey((RSAPrivateKey) pair.getPrivate())
                .keyID(UUID.randomUUID().toString())
                .build();
        return new ImmutableJWKSet<>(new JWKSet(key));
    }
}
