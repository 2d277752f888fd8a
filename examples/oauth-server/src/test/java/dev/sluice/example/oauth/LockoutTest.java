package dev.sluice.example.oauth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.http.AuthenticationFailureFilter;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;

/**
 * Someone who knows a client id and not its secret: the wrong secrets cost the real client nothing, and guessing is
 * limited per client id from one address (5 a minute) and per address across client ids (20 a minute). The server
 * reads the client's address from {@code X-Forwarded-For}, as behind a proxy, so the test can speak from several.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = {OAuthServerApplication.class, TokenEndpointHttp.FrozenClock.class},
        properties = "server.forward-headers-strategy=native")
@ActiveProfiles("enforce")
class LockoutTest extends TokenEndpointHttp {

    static final String ATTACKER = "203.0.113.7";
    static final String REAL_CLIENT = "198.51.100.20";

    /** A client-credentials request from {@code address}, with HTTP Basic when {@code secret} is given. */
    HttpResponse<String> tokenFrom(String address, String clientId, String secret) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri("/oauth2/token"))
                .header("X-Forwarded-For", address)
                .header("Content-Type", "application/x-www-form-urlencoded");
        if (secret == null) {
            b.POST(HttpRequest.BodyPublishers.ofString(
                    form("grant_type", "client_credentials", "client_id", clientId, "scope", "read")));
        } else {
            b.header("Authorization", basic(clientId, secret))
                    .POST(HttpRequest.BodyPublishers.ofString(
                            form("grant_type", "client_credentials", "scope", "read")));
        }
        return send(HTTP, b.build());
    }

    static void refusedAsGuessing(HttpResponse<String> r, String limit) {
        assertEquals(429, r.statusCode(), r.body());
        assertEquals("application/problem+json", header(r, "Content-Type"));
        assertTrue(r.body().contains("\"violated-policies\":[\"" + limit + "\"]"), r.body());
        assertTrue(Long.parseLong(header(r, "Retry-After")) >= 1);
        assertTrue(r.headers().firstValue("RateLimit").isEmpty(), "no client limit was checked: " + r.headers());
    }

    @Test
    void wrongSecretsCostTheRealClientNothingAndGuessingOneClientIsLimited() {
        for (int i = 0; i < 3; i++) {
            // No secret at all: not authenticated (this server sends it to its login page), and no guess either.
            HttpResponse<String> none = tokenFrom(ATTACKER, "partner", null);
            assertEquals(302, none.statusCode(), "no secret: " + none.body());
            assertTrue(none.headers().firstValue("RateLimit").isEmpty(), "not counted for partner");
        }
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> wrong = tokenFrom(ATTACKER, "partner", "guess-" + i);
            assertEquals(401, wrong.statusCode(), wrong.body());
            assertTrue(wrong.headers().firstValue("RateLimit").isEmpty(), "not counted for partner");
        }
        for (int i = 5; i < 10; i++) {
            refusedAsGuessing(tokenFrom(ATTACKER, "partner", "guess-" + i), AuthenticationFailureFilter.PER_CLIENT);
        }
        refusedAsGuessing(tokenFrom(ATTACKER, "partner", "partner-secret"), AuthenticationFailureFilter.PER_CLIENT);

        for (int i = 0; i < 5; i++) {
            HttpResponse<String> ok = tokenFrom(REAL_CLIENT, "partner", "partner-secret");
            assertEquals(200, ok.statusCode(), "request " + (i + 1) + ": " + ok.body());
            t(ok, "per-client", 4 - i);
        }
        HttpResponse<String> sixth = tokenFrom(REAL_CLIENT, "partner", "partner-secret");
        assertEquals(429, sixth.statusCode(), "its own sixth request meets its own limit");
        assertTrue(sixth.body().contains("\"violated-policies\":[\"per-client\"]"), sixth.body());
    }

    @Test
    void oneAddressGuessingAcrossManyClientIdsIsLimited() {
        String stuffer = "203.0.113.99";
        for (int i = 0; i < 20; i++) {
            HttpResponse<String> wrong = tokenFrom(stuffer, "client-" + i, "guess");
            assertEquals(401, wrong.statusCode(), "guess " + (i + 1) + ": " + wrong.body());
        }
        for (int i = 20; i < 25; i++) {
            refusedAsGuessing(tokenFrom(stuffer, "client-" + i, "guess"), AuthenticationFailureFilter.PER_ADDRESS);
        }
        refusedAsGuessing(
                tokenFrom(stuffer, "trusted-backend", "trusted-secret"), AuthenticationFailureFilter.PER_ADDRESS);

        HttpResponse<String> elsewhere = tokenFrom(REAL_CLIENT, "trusted-backend", "trusted-secret");
        assertEquals(200, elsewhere.statusCode(), "another address is not held back: " + elsewhere.body());
    }
}
