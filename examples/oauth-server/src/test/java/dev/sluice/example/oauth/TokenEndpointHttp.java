package dev.sluice.example.oauth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spring.boot.SluiceAutoConfiguration;
import dev.sluice.testkit.ManualClock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.CookieManager;
import java.net.CookiePolicy;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

/**
 * The example server as its clients meet it, over HTTP with {@link HttpClient}: token requests with HTTP Basic client
 * authentication, and a browser's authorization-code flow (login form, consent, the code from the redirect, the token
 * exchange) with cookies and no automatic redirects. The limiter's time is a hand-moved clock frozen at
 * {@link #START}, so a window never turns during a test and every count is exact.
 */
abstract class TokenEndpointHttp {

    static final Instant START = Instant.parse("2026-01-05T10:00:00.250Z");
    static final String REDIRECT_URI = "http://127.0.0.1:8080/authorized";

    /** The limiter's clock, frozen until a test moves it. */
    @TestConfiguration(proxyBeanMethods = false)
    static class FrozenClock {
        @Bean(SluiceAutoConfiguration.CLOCK_BEAN)
        ManualClock sluiceClock() {
            return new ManualClock(START);
        }
    }

    /** The client of the token endpoint: no cookies, no redirects followed. */
    static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();

    @LocalServerPort
    int port;

    URI uri(String pathAndQuery) {
        return URI.create(pathAndQuery.startsWith("http") ? pathAndQuery : "http://localhost:" + port + pathAndQuery);
    }

    static HttpResponse<String> send(HttpClient client, HttpRequest request) {
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static String form(String... keysAndValues) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            if (b.length() > 0) {
                b.append('&');
            }
            b.append(URLEncoder.encode(keysAndValues[i], StandardCharsets.UTF_8))
                    .append('=')
                    .append(URLEncoder.encode(keysAndValues[i + 1], StandardCharsets.UTF_8));
        }
        return b.toString();
    }

    static String basic(String clientId, String secret) {
        return "Basic "
                + Base64.getEncoder().encodeToString((clientId + ":" + secret).getBytes(StandardCharsets.UTF_8));
    }

    /** A token request of a confidential client. */
    HttpResponse<String> token(String clientId, String secret, String... formFields) {
        return send(
                HTTP,
                HttpRequest.newBuilder(uri("/oauth2/token"))
                        .header("Authorization", basic(clientId, secret))
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString(form(formFields)))
                        .build());
    }

    /** {@code n} client-credentials requests of one client, in order. */
    List<HttpResponse<String>> clientCredentials(String clientId, String secret, int n) {
        List<HttpResponse<String>> responses = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            responses.add(token(clientId, secret, "grant_type", "client_credentials", "scope", "read"));
        }
        return responses;
    }

    /** A refresh-token request of {@code web-app}. */
    HttpResponse<String> refresh(String refreshToken) {
        return token("web-app", "web-app-secret", "grant_type", "refresh_token", "refresh_token", refreshToken);
    }

    /**
     * A browser of {@code user} through the authorization-code flow of {@code web-app}: the authorization request sends
     * it to the login form, the login back to the authorization request, which asks for consent; the consent redirects
     * to the client with a code; the client exchanges the code for tokens. Returns the token response.
     */
    HttpResponse<String> authorizationCodeFlow(String user, String password) {
        HttpClient browser = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .cookieHandler(new CookieManager(null, CookiePolicy.ACCEPT_ALL))
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
        String authorize = "/oauth2/authorize?"
                + form(
                        "response_type",
                        "code",
                        "client_id",
                        "web-app",
                        "scope",
                        "read",
                        "state",
                        "client-state",
                        "redirect_uri",
                        REDIRECT_URI);
        HttpResponse<String> toLogin = browse(browser, authorize, null);
        assertEquals(302, toLogin.statusCode(), toLogin.body());
        assertEquals(uri("/login").toString(), location(toLogin));

        HttpResponse<String> loginPage = browse(browser, "/login", null);
        String csrf = find(loginPage.body(), "name=\"_csrf\" type=\"hidden\" value=\"([^\"]+)\"");
        HttpResponse<String> loggedIn =
                browse(browser, "/login", form("username", user, "password", password, "_csrf", csrf));
        assertEquals(302, loggedIn.statusCode(), loggedIn.body());
        assertTrue(location(loggedIn).contains("/oauth2/authorize?"), location(loggedIn));

        HttpResponse<String> consentPage = browse(browser, location(loggedIn), null);
        assertEquals(200, consentPage.statusCode(), consentPage.body());
        String consentState = find(consentPage.body(), "name=\"state\" value=\"([^\"]+)\"");
        HttpResponse<String> consented = browse(
                browser, "/oauth2/authorize", form("client_id", "web-app", "state", consentState, "scope", "read"));
        assertEquals(302, consented.statusCode(), consented.body());
        String redirect = location(consented);
        assertTrue(redirect.startsWith(REDIRECT_URI + "?"), redirect);
        Map<String, String> query = query(URI.create(redirect));
        assertEquals("client-state", query.get("state"));

        return token(
                "web-app",
                "web-app-secret",
                "grant_type",
                "authorization_code",
                "code",
                query.get("code"),
                "redirect_uri",
                REDIRECT_URI);
    }

    /** A browser's GET, or its form POST when {@code form} is given. */
    HttpResponse<String> browse(HttpClient browser, String pathOrUri, String form) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(pathOrUri)).header("Accept", "text/html");
        if (form != null) {
            b.header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString(form));
        }
        return send(browser, b.build());
    }

    static String location(HttpResponse<?> r) {
        return header(r, "Location");
    }

    static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElseThrow(() -> new AssertionError("no " + name + " in " + r.headers()));
    }

    static String find(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        assertTrue(m.find(), "no " + regex + " in " + text);
        return m.group(1);
    }

    static Map<String, String> query(URI uri) {
        Map<String, String> q = new LinkedHashMap<>();
        for (String pair : uri.getRawQuery().split("&")) {
            int eq = pair.indexOf('=');
            q.put(
                    URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                    URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
        }
        return q;
    }

    /** A JSON string member of a token response, e.g. {@code refresh_token}. */
    static String member(String json, String name) {
        return find(json, "\"" + name + "\"\\s*:\\s*\"([^\"]+)\"");
    }

    /** The {@code t} of the only item of a {@code RateLimit} field named {@code name}, checking its {@code r}. */
    static long t(HttpResponse<?> r, String name, long remaining) {
        String field = header(r, "RateLimit");
        Matcher m = Pattern.compile("^\"" + name + "\";r=" + remaining + ";t=(\\d+)$")
                .matcher(field);
        assertTrue(m.matches(), "RateLimit: " + field + ", expected " + name + " with r=" + remaining);
        return Long.parseLong(m.group(1));
    }

    /**
     * The counters {@code sluice_policy_requests_detailed_total} of the Prometheus page, by their {@code value} (the
     * client, or client/user) and {@code outcome} tags: {@code "partner would_deny" -> 2}.
     */
    Map<String, Long> detailedCounts() {
        HttpResponse<String> page = send(
                HTTP,
                HttpRequest.newBuilder(uri("/actuator/prometheus"))
                        .header("Authorization", basic("ops", "ops-password"))
                        .build());
        assertEquals(200, page.statusCode(), page.body());
        Map<String, Long> counts = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?m)^sluice_policy_requests_detailed_total\\{([^}]*)} (\\S+)$")
                .matcher(page.body());
        while (m.find()) {
            String tags = m.group(1);
            counts.put(find(tags, "value=\"([^\"]*)\"") + " " + find(tags, "outcome=\"([^\"]*)\""), (long)
                    Double.parseDouble(m.group(2)));
        }
        return counts;
    }
}
