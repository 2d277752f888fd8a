package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.policy.Descriptor;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.testkit.ManualClock;
import jakarta.servlet.Filter;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The filter in a real servlet container, called over HTTP: the fields of allowed and refused responses parsed as
 * structured fields and checked one by one, on a hand-moved clock so every count and reset is exact.
 */
class SluiceFilterTest {

    static final String POLICY =
            """
            domain: oauth-token
            descriptors:
              - key: client_id                  # every client: 3 a minute
                rate_limit: {unit: minute, requests_per_unit: 3}
                descriptors:
                  - key: username               # every user of a client: 2 a minute
                    rate_limit: {unit: minute, requests_per_unit: 2}
              - key: client_id
                value: big                      # two limits, both must pass
                rate_limits:
                  - {unit: second, requests_per_unit: 5, name: per-second}
                  - {unit: day, requests_per_unit: 7, name: per-day}
              - key: client_id
                value: trial                    # being rolled out
                rate_limit: {unit: minute, requests_per_unit: 2}
                mode: dry_run
              - key: client_id
                value: spammer
                rate_limit: {unit: minute, requests_per_unit: 1}
                mode: shadow_ban
              - key: client_id
                value: trusted
                rate_limit: {unlimited: true}
              - key: remote_address             # requests that name no client
                rate_limit: {unit: minute, requests_per_unit: 1}
            """;

    /** 10:00:00.250 UTC: every window up to a day is 250 ms into its current period. */
    final ManualClock clock = new ManualClock(Instant.parse("2026-03-02T10:00:00.250Z"));

    PolicyLimiter limiter;
    TokenServer server;

    @BeforeEach
    void start() throws Exception {
        limiter = PolicyLimiter.builder(Policies.parse("oauth-token.yaml", POLICY))
                .clock(clock)
                .build();
        Map<String, Filter> filters = new LinkedHashMap<>();
        filters.put(
                "/token", SluiceFilter.builder(limiter).domain("oauth-token").build());
        filters.put(
                "/legacy/token",
                SluiceFilter.builder(limiter)
                        .domain("oauth-token")
                        .legacyHeaders(true)
                        .advertiseDryRun(true)
                        .build());
        filters.put(
                "/unidentified/token",
                SluiceFilter.builder(limiter)
                        .domain("oauth-token")
                        .extractor(OAuthTokenExtractor.builder()
                                .unidentified(r -> Descriptor.of("remote_address", r.getRemoteAddr()))
                                .build())
                        .build());
        server = new TokenServer(filters);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        limiter.close();
    }

    /** The single item of a one-item list field. */
    static StructuredFields.Item only(HttpResponse<?> r, String field) {
        List<StructuredFields.Item> items = items(r, field);
        assertEquals(1, items.size(), field + ": " + items);
        return items.get(0);
    }

    /** The items of a list field, its lines combined as RFC 9110 §5.3 says. */
    static List<StructuredFields.Item> items(HttpResponse<?> r, String field) {
        List<String> lines = r.headers().allValues(field);
        assertFalse(lines.isEmpty(), "no " + field + " field");
        return StructuredFields.parseItems(String.join(", ", lines));
    }

    static void assertPolicy(StructuredFields.Item item, String name, long q, long w) {
        assertEquals(name, item.value(), "the policy's name, an sf-string");
        assertEquals(q, item.param("q"), "q of " + name);
        assertEquals(w, item.param("w"), "w of " + name);
        assertEquals(2, item.params().size(), "only q and w: " + item);
    }

    static void assertService(StructuredFields.Item item, String name, long r, long t) {
        assertEquals(name, item.value(), "the service limit's policy name");
        assertEquals(r, item.param("r"), "r of " + name);
        assertEquals(t, item.param("t"), "t of " + name);
        assertEquals(2, item.params().size(), "only r and t: " + item);
    }

    static long retryAfter(HttpResponse<?> r) {
        return Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow());
    }

    @Test
    void allowedAndRefusedResponsesCarryTheFields() throws Exception {
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> r = server.clientCredentials("/token", "app");
            assertEquals(200, r.statusCode());
            assertPolicy(only(r, "RateLimit-Policy"), "client_id", 3, 60);
            assertService(only(r, "RateLimit"), "client_id", 2 - i, 60); // 59.75 s left, rounded up
            assertTrue(r.headers().firstValue("Retry-After").isEmpty(), "no Retry-After when allowed");
            assertTrue(r.headers().firstValue("X-RateLimit-Remaining").isEmpty(), "legacy fields off by default");
        }
        clock.advance(Duration.ofMillis(20_400)); // 10:00:20.650: 39.35 s to the next minute

        HttpResponse<String> refused = server.clientCredentials("/token", "app");
        assertEquals(429, refused.statusCode());
        assertPolicy(only(refused, "RateLimit-Policy"), "client_id", 3, 60);
        assertService(only(refused, "RateLimit"), "client_id", 0, 40);
        assertEquals(40, retryAfter(refused), "39.35 s rounded up, as t");
        assertEquals(3, server.served.get(), "the refused request never reached the servlet");

        assertEquals(
                "application/problem+json",
                refused.headers().firstValue("Content-Type").orElseThrow());
        Map<String, Object> problem = Json.parseObject(refused.body());
        assertEquals("https://iana.org/assignments/http-problem-types#quota-exceeded", problem.get("type"));
        assertEquals("Request cannot be satisfied as assigned quota has been exceeded", problem.get("title"));
        assertEquals(429L, problem.get("status"));
        assertEquals("3 requests per 60 s allowed by \"client_id\"; retry in 40 s.", problem.get("detail"));
        assertEquals(List.of("client_id"), problem.get("violated-policies"));
        assertEquals(5, problem.size(), "type, title, status, detail, violated-policies: " + problem);

        clock.advance(Duration.ofMillis(39_349)); // 1 ms before the minute ends: still refused, t = 1
        HttpResponse<String> early = server.clientCredentials("/token", "app");
        assertEquals(429, early.statusCode());
        assertService(only(early, "RateLimit"), "client_id", 0, 1);
        assertEquals(1, retryAfter(early));

        clock.advance(Duration.ofMillis(1)); // the next minute: a client that waited t is let in
        HttpResponse<String> again = server.clientCredentials("/token", "app");
        assertEquals(200, again.statusCode());
        assertService(only(again, "RateLimit"), "client_id", 2, 60);
        assertEquals(4, server.served.get());
    }

    @Test
    void twoLimitsOnAClientAreTwoItemsAndTheOneThatRefusesIsNamed() throws Exception {
        // HTTP Basic this time: the client id comes from the Authorization field, not the form.
        Map<String, String> form = TokenServer.form("grant_type", "client_credentials");
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> r = server.post("/token", form, "big");
            assertEquals(200, r.statusCode());
            List<StructuredFields.Item> policies = items(r, "RateLimit-Policy");
            assertEquals(2, policies.size(), "one item per limit");
            assertPolicy(policies.get(0), "per-second", 5, 1);
            assertPolicy(policies.get(1), "per-day", 7, 86400);
            List<StructuredFields.Item> limits = items(r, "RateLimit");
            assertEquals(2, limits.size());
            assertService(limits.get(0), "per-second", 4 - i, 1);
            assertService(limits.get(1), "per-day", 6 - i, 50400); // 13 h 59 min 59.75 s to midnight UTC
        }
        HttpResponse<String> sixth = server.post("/token", form, "big");
        assertEquals(429, sixth.statusCode());
        List<StructuredFields.Item> limits = items(sixth, "RateLimit");
        assertService(limits.get(0), "per-second", 0, 1);
        assertEquals(1, retryAfter(sixth));
        assertEquals(List.of("per-second"), Json.parseObject(sixth.body()).get("violated-policies"));

        clock.advance(Duration.ofSeconds(1));
        for (int i = 0; i < 2; i++) {
            assertEquals(200, server.post("/token", form, "big").statusCode());
        }
        HttpResponse<String> overDay = server.post("/token", form, "big");
        assertEquals(429, overDay.statusCode());
        limits = items(overDay, "RateLimit");
        assertEquals(2, limits.size());
        assertEquals(0L, limits.get(1).param("r"));
        assertEquals(50399L, limits.get(1).param("t"), "13 h 59 min 58.75 s to midnight, rounded up");
        assertEquals(50399, retryAfter(overDay), "Retry-After is the refusing limit's t");
        assertEquals(List.of("per-day"), Json.parseObject(overDay.body()).get("violated-policies"));
        assertEquals(7, server.served.get());
    }

    @Test
    void retryAfterIsNeverEarlierThanTheRefusingLimitsReset() throws Exception {
        // Sweep a minute in uneven steps: whenever the request is refused, Retry-After >= t >= the true wait.
        int refusals = 0;
        for (int step = 0; step < 40; step++) {
            HttpResponse<String> r = server.clientCredentials("/token", "sweep");
            if (r.statusCode() == 429) {
                refusals++;
                long t = (Long) only(r, "RateLimit").param("t");
                long retry = retryAfter(r);
                assertTrue(retry >= t, "Retry-After " + retry + " < t " + t);
                Instant minute = clock.instant().truncatedTo(java.time.temporal.ChronoUnit.MINUTES);
                Duration trueWait = Duration.between(clock.instant(), minute.plusSeconds(60));
                assertTrue(Duration.ofSeconds(t).compareTo(trueWait) >= 0, "t " + t + " earlier than " + trueWait);
                assertTrue(Duration.ofSeconds(t - 1).compareTo(trueWait) < 0, "t " + t + " more than a second late");
            } else {
                assertEquals(200, r.statusCode());
            }
            clock.advance(Duration.ofMillis(3_217));
        }
        assertTrue(refusals > 20, "the sweep met refusals: " + refusals);
    }

    @Test
    void theFormBodyIsLeftForTheServlet() throws Exception {
        HttpResponse<String> r = server.clientCredentials("/token", "app");
        assertEquals(200, r.statusCode());
        assertEquals("grant_type=client_credentials\nscope=read\nshadowBan=null\n", r.body());
    }

    @Test
    void httpBasicClientIdsArePercentDecoded() throws Exception {
        // RFC 6749 2.3.1: "my:app" is sent as my%3Aapp. Its own counter, apart from "my" (what a naive split gives).
        Map<String, String> form = TokenServer.form("grant_type", "client_credentials");
        for (int i = 0; i < 3; i++) {
            assertEquals(200, server.post("/token", form, "my%3Aapp").statusCode());
        }
        assertEquals(429, server.post("/token", form, "my%3Aapp").statusCode());
        assertEquals(200, server.clientCredentials("/token", "my").statusCode(), "\"my\" is another client");
        assertEquals(429, server.clientCredentials("/token", "my:app").statusCode(), "the same client in the form");
    }

    @Test
    void userGrantsAreLimitedPerUserOfAClient() throws Exception {
        for (String user : List.of("alice", "bob")) {
            for (int i = 0; i < 2; i++) {
                HttpResponse<String> r = server.post(
                        "/token",
                        TokenServer.form("grant_type", "password", "username", user, "password", "pw"),
                        "app");
                assertEquals(200, r.statusCode());
                assertPolicy(only(r, "RateLimit-Policy"), "client_id.username", 2, 60);
                assertService(only(r, "RateLimit"), "client_id.username", 1 - i, 60);
            }
        }
        HttpResponse<String> third = server.post(
                "/token", TokenServer.form("grant_type", "password", "username", "alice", "password", "pw"), "app");
        assertEquals(429, third.statusCode());
        assertEquals(
                List.of("client_id.username"), Json.parseObject(third.body()).get("violated-policies"));

        // An authorization code names no user: limited per client, and a username parameter is not trusted.
        HttpResponse<String> code = server.post(
                "/token", TokenServer.form("grant_type", "authorization_code", "code", "xyz", "username", "x"), "app");
        assertEquals(200, code.statusCode());
        assertService(only(code, "RateLimit"), "client_id", 2, 60);
    }

    @Test
    void dryRunPassesAndCountsWithoutTellingTheClient() throws Exception {
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> r = server.clientCredentials("/token", "trial");
            assertEquals(200, r.statusCode(), "a dry-run limit never refuses");
            assertTrue(r.headers().firstValue("RateLimit").isEmpty(), "not advertised by default");
            assertTrue(r.headers().firstValue("RateLimit-Policy").isEmpty());
        }
        assertEquals(5, server.served.get());
        // The same limiter seen through the filter that advertises dry runs: it counted 2 and would deny the rest.
        HttpResponse<String> advertised = server.clientCredentials("/legacy/token", "trial");
        assertEquals(200, advertised.statusCode());
        assertPolicy(only(advertised, "RateLimit-Policy"), "client_id_trial", 2, 60);
        assertService(only(advertised, "RateLimit"), "client_id_trial", 0, 60);
        assertTrue(advertised.headers().firstValue("Retry-After").isEmpty(), "allowed: no Retry-After");
        assertEquals(
                "0", advertised.headers().firstValue("X-RateLimit-Remaining").orElseThrow());
    }

    @Test
    void shadowBanPassesAndMarksTheRequestForTheApplication() throws Exception {
        HttpResponse<String> first = server.clientCredentials("/token", "spammer");
        assertEquals(200, first.statusCode());
        assertTrue(first.body().contains("shadowBan=null"), first.body());
        HttpResponse<String> second = server.clientCredentials("/token", "spammer");
        assertEquals(200, second.statusCode(), "the caller sees success");
        assertTrue(second.body().contains("shadowBan=client_id_spammer\n"), second.body());
        for (HttpResponse<String> r : List.of(first, second)) {
            assertTrue(r.headers().firstValue("RateLimit").isEmpty(), "a shadow ban is never advertised");
            assertTrue(r.headers().firstValue("RateLimit-Policy").isEmpty());
        }
        assertEquals(2, server.served.get());
    }

    @Test
    void legacyFieldsDescribeTheDecisiveLimit() throws Exception {
        Map<String, String> form = TokenServer.form("grant_type", "client_credentials");
        HttpResponse<String> r = server.post("/legacy/token", form, "big");
        assertEquals("5", r.headers().firstValue("X-RateLimit-Limit").orElseThrow(), "per-second: fewest left");
        assertEquals("4", r.headers().firstValue("X-RateLimit-Remaining").orElseThrow());
        assertEquals("1", r.headers().firstValue("X-RateLimit-Reset").orElseThrow(), "seconds, not a time");
        for (int i = 0; i < 4; i++) {
            server.post("/legacy/token", form, "big");
        }
        HttpResponse<String> refused = server.post("/legacy/token", form, "big");
        assertEquals(429, refused.statusCode());
        assertEquals("0", refused.headers().firstValue("X-RateLimit-Remaining").orElseThrow());
        assertEquals("1", refused.headers().firstValue("X-RateLimit-Reset").orElseThrow());
        assertEquals(2, items(refused, "RateLimit-Policy").size(), "the IETF fields are there too");
    }

    @Test
    void unidentifiedRequestsPassUnlimitedOrUnderTheirFallback() throws Exception {
        Map<String, String> noClient = TokenServer.form("grant_type", "client_credentials");
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> r = server.post("/token", noClient, null);
            assertEquals(200, r.statusCode(), "by default a request naming no client is not limited");
            assertTrue(r.headers().firstValue("RateLimit").isEmpty());
        }
        HttpResponse<String> first = server.post("/unidentified/token", noClient, null);
        assertEquals(200, first.statusCode());
        assertPolicy(only(first, "RateLimit-Policy"), "remote_address", 1, 60);
        assertEquals(429, server.post("/unidentified/token", noClient, null).statusCode(), "1 a minute per address");
        assertEquals(
                429,
                server.post("/unidentified/token", TokenServer.form("client_id", "app"), null)
                        .statusCode(),
                "no grant_type is unidentified too");
        HttpResponse<String> badBasic = server.post("/unidentified/token", noClient, "Basic !!not-base64!!");
        assertEquals(429, badBasic.statusCode(), "malformed Basic credentials are unidentified");
    }

    @Test
    void unlimitedClientsGetNoFields() throws Exception {
        for (int i = 0; i < 10; i++) {
            HttpResponse<String> r = server.clientCredentials("/token", "trusted");
            assertEquals(200, r.statusCode());
            assertTrue(r.headers().firstValue("RateLimit").isEmpty());
            assertTrue(r.headers().firstValue("RateLimit-Policy").isEmpty());
        }
    }

    @Test
    void aLimiterThatFailsNeverMakesA500() throws Exception {
        limiter.close(); // check() now throws IllegalStateException
        HttpResponse<String> r = server.clientCredentials("/token", "app");
        assertEquals(200, r.statusCode(), "the request passes unlimited");
        assertTrue(r.headers().firstValue("RateLimit").isEmpty());
        assertEquals(1, server.served.get());
    }

    /**
     * The responses docs/http.md shows, as the container sent them: the fifth and sixth requests of a second of the
     * client with two limits. Written to {@code target/http-examples.txt}.
     */
    @Test
    void recordTheExamplesOfTheDocs() throws Exception {
        Map<String, String> form = TokenServer.form("grant_type", "client_credentials");
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            HttpResponse<String> r = server.post("/legacy/token", form, "big");
            if (i >= 4) {
                out.append("HTTP/1.1 ").append(r.statusCode()).append('\n');
                r.headers().map().forEach((k, v) -> {
                    if (!k.equals("date") && !k.equals("server")) {
                        v.forEach(value ->
                                out.append(k).append(": ").append(value).append('\n'));
                    }
                });
                out.append('\n').append(r.body()).append("\n\n");
            }
            if (i == 5) {
                List<StructuredFields.Item> limits = items(r, "RateLimit");
                assertService(limits.get(0), "per-second", 0, 1);
                assertService(limits.get(1), "per-day", 2, 50400);
            }
        }
        java.nio.file.Files.writeString(java.nio.file.Path.of("target", "http-examples.txt"), out);
    }
}
