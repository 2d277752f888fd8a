package dev.sluice.example.oauth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.ManualClock;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.oauth2.server.authorization.client.RegisteredClientRepository;
import org.springframework.test.context.ActiveProfiles;

/**
 * The limits enforced (profile {@code enforce}), as {@code config/oauth-token.yaml} ships them: 5 token requests a
 * second per client, 3 a minute per user of a client, {@code trusted-backend} unlimited.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = {OAuthServerApplication.class, TokenEndpointHttp.FrozenClock.class})
@ActiveProfiles("enforce")
class EnforceModeTest extends TokenEndpointHttp {

    @Autowired
    ManualClock clock;

    @Autowired
    RegisteredClientRepository clients;

    @Autowired
    UserDetailsService users;

    @Test
    void aClientHammeringTheTokenEndpointIsRefusedAtItsLimitWhileATrustedClientAtTenTimesItsTrafficIsNot() {
        List<HttpResponse<String>> partner = clientCredentials("partner", "partner-secret", 7);
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> ok = partner.get(i);
            assertEquals(200, ok.statusCode(), "request " + (i + 1) + ": " + ok.body());
            assertTrue(member(ok.body(), "access_token").length() > 20);
            assertEquals("\"per-client\";q=5;w=1", header(ok, "RateLimit-Policy"));
            t(ok, "per-client", 4 - i);
        }
        long retryAfter = 0;
        for (int i = 5; i < 7; i++) {
            HttpResponse<String> refused = partner.get(i);
            assertEquals(429, refused.statusCode(), "request " + (i + 1));
            assertEquals("application/problem+json", header(refused, "Content-Type"));
            assertTrue(refused.body().contains("\"violated-policies\":[\"per-client\"]"), refused.body());
            long t = t(refused, "per-client", 0);
            retryAfter = Long.parseLong(header(refused, "Retry-After"));
            assertTrue(t >= 1, "t=" + t);
            assertTrue(retryAfter >= t, "Retry-After " + retryAfter + " is never earlier than t=" + t);
        }

        List<HttpResponse<String>> trusted = clientCredentials("trusted-backend", "trusted-secret", 70);
        for (HttpResponse<String> ok : trusted) {
            assertEquals(200, ok.statusCode(), ok.body());
            assertTrue(ok.headers().firstValue("RateLimit").isEmpty(), "an unlimited client is not counted");
        }

        clock.advance(Duration.ofSeconds(retryAfter));
        HttpResponse<String> afterWaiting = token("partner", "partner-secret", "grant_type", "client_credentials");
        assertEquals(200, afterWaiting.statusCode(), "a client that waited Retry-After is let through");
        assertEquals(
                "{noop}partner-secret",
                clients.findByClientId("partner").getClientSecret(),
                "the secret stays plain after use: no request pays for a bcrypt match");
    }

    @Test
    void oneUserOfAClientIsLimitedWhileAnotherUserOfTheSameClientIsNot() {
        HttpResponse<String> alice = authorizationCodeFlow("alice", "alice-password");
        assertEquals(200, alice.statusCode(), alice.body());
        assertEquals("\"per-user\";q=3;w=60", header(alice, "RateLimit-Policy"));
        t(alice, "per-user", 2);
        String aliceRefresh = member(alice.body(), "refresh_token");
        for (int i = 1; i >= 0; i--) {
            HttpResponse<String> ok = refresh(aliceRefresh);
            assertEquals(200, ok.statusCode(), ok.body());
            t(ok, "per-user", i);
        }
        HttpResponse<String> refused = refresh(aliceRefresh);
        assertEquals(429, refused.statusCode(), refused.body());
        assertTrue(refused.body().contains("\"violated-policies\":[\"per-user\"]"), refused.body());
        assertTrue(Long.parseLong(header(refused, "Retry-After")) >= t(refused, "per-user", 0));

        HttpResponse<String> bob = authorizationCodeFlow("bob", "bob-password");
        assertEquals(200, bob.statusCode(), "bob, another user of web-app: " + bob.body());
        t(bob, "per-user", 2);
        HttpResponse<String> bobRefreshed = refresh(member(bob.body(), "refresh_token"));
        assertEquals(200, bobRefreshed.statusCode(), bobRefreshed.body());
        t(bobRefreshed, "per-user", 1);
        assertEquals(
                "{noop}alice-password",
                users.loadUserByUsername("alice").getPassword(),
                "the password stays plain after a login");
        assertEquals("{noop}web-app-secret", clients.findByClientId("web-app").getClientSecret());
    }
}
