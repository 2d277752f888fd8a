package dev.sluice.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.testkit.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The starter in a real application: embedded Tomcat on a random port, called over HTTP. The policy file is watched:
 * a change is in force without a restart, a broken file is refused and shown at the Actuator endpoint. Each test uses
 * its own client ids, so the tests share one application.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = SluiceStarterWebTest.TokenApp.class,
        properties = {
            "sluice.policies.watch-interval=100ms",
            "sluice.filter.legacy-headers=true",
            "management.endpoints.web.exposure.include=sluice,metrics"
        })
class SluiceStarterWebTest {

    /** Three token requests a day per client; {@code trusted} unlimited. */
    static final String POLICY = policy(3);

    static final Path DIR = tempDir();
    static final Path FILE = DIR.resolve("token-policy.yaml");

    static final HttpClient HTTP = HttpClient.newHttpClient();
    static final ObjectMapper JSON = new ObjectMapper();

    @LocalServerPort
    int port;

    @Autowired
    PolicyLimiter limiter;

    static String policy(int perDay) {
        return """
                domain: oauth-token
                descriptors:
                  - key: client_id
                    rate_limit: {unit: day, requests_per_unit: %d}
                  - key: client_id
                    value: trusted
                    rate_limit: {unlimited: true}
                """
                .formatted(perDay);
    }

    static Path tempDir() {
        try {
            Path dir = Files.createTempDirectory("sluice-starter");
            Files.writeString(dir.resolve("token-policy.yaml"), policy(3));
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @DynamicPropertySource
    static void policyLocation(DynamicPropertyRegistry registry) {
        registry.add("sluice.policies.location", FILE::toString);
    }

    @AfterAll
    static void deleteDir() throws IOException {
        try (var files = Files.list(DIR)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.delete(f);
            }
        }
        Files.delete(DIR);
    }

    /** A token endpoint that answers every request it is let through. */
    @SpringBootApplication
    @RestController
    static class TokenApp {
        @PostMapping("/oauth2/token")
        String token() {
            return "token";
        }
    }

    static HttpResponse<String> send(HttpRequest request) {
        try {
            return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    HttpResponse<String> token(String clientId) {
        return send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/oauth2/token"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("grant_type=client_credentials&client_id=" + clientId))
                .build());
    }

    JsonNode get(String path) {
        HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .build());
        assertEquals(200, r.statusCode(), path + ": " + r.body());
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElseThrow(() -> new AssertionError("no " + name + " in " + r.headers()));
    }

    /** The {@code t} of a {@code RateLimit} field of one item named {@code client_id}. */
    static long t(HttpResponse<?> r) {
        Matcher m = Pattern.compile("^\"client_id\";r=(\\d+);t=(\\d+)$").matcher(header(r, "RateLimit"));
        assertTrue(m.matches(), header(r, "RateLimit"));
        return Long.parseLong(m.group(2));
    }

    /** Replaces the policy file in one step, as a deployment does. */
    static void publish(String yaml) throws IOException {
        Path tmp = DIR.resolve(".next.tmp");
        Files.writeString(tmp, yaml);
        Files.move(tmp, FILE, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void allowedAndRefusedResponsesCarryTheStandardFields() {
        for (int i = 1; i <= 3; i++) {
            HttpResponse<String> ok = token("fields");
            assertEquals(200, ok.statusCode());
            assertEquals("token", ok.body());
            assertEquals("\"client_id\";q=3;w=86400", header(ok, "RateLimit-Policy"));
            assertTrue(
                    header(ok, "RateLimit").startsWith("\"client_id\";r=" + (3 - i) + ";t="), header(ok, "RateLimit"));
            assertEquals("3", header(ok, "X-RateLimit-Limit"));
            assertEquals(Integer.toString(3 - i), header(ok, "X-RateLimit-Remaining"));
        }
        double deniedBefore = deniedCount();
        HttpResponse<String> refused = token("fields");
        assertEquals(429, refused.statusCode());
        assertEquals("application/problem+json", header(refused, "Content-Type"));
        assertEquals("\"client_id\";q=3;w=86400", header(refused, "RateLimit-Policy"));
        long t = t(refused);
        assertTrue(t >= 1 && t <= 86_400, "t=" + t);
        assertTrue(Long.parseLong(header(refused, "Retry-After")) >= t, "Retry-After never earlier than t");
        assertTrue(refused.body().contains("\"violated-policies\":[\"client_id\"]"), refused.body());

        HttpResponse<String> trusted = token("trusted");
        assertEquals(200, trusted.statusCode());
        assertTrue(trusted.headers().firstValue("RateLimit").isEmpty(), "an unlimited client has no count");

        assertEquals(deniedBefore + 1, deniedCount(), "the refusal counted on the application's registry");
    }

    /** {@code sluice.policy.requests{outcome=denied, rule=client_id}}, through the Actuator metrics endpoint. */
    double deniedCount() {
        HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create("http://localhost:" + port
                        + "/actuator/metrics/sluice.policy.requests?tag=outcome:denied&tag=rule:client_id"))
                .build());
        if (r.statusCode() == 404) {
            return 0; // not counted yet: the meter is made at the first denial
        }
        try {
            return JSON.readTree(r.body()).at("/measurements/0/value").asDouble();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void aChangedPolicyFileIsInForceWithoutRestartAndABrokenOneIsRefusedVisibly() throws IOException {
        long before = limiter.version();
        try {
            publish(policy(5));
            Await.until("the new policy in force", Await.GENEROUS, () -> limiter.version() == before + 1);
            for (int i = 1; i <= 5; i++) {
                HttpResponse<String> ok = token("reload");
                assertEquals(200, ok.statusCode(), "request " + i + " of 5");
                assertEquals("\"client_id\";q=5;w=86400", header(ok, "RateLimit-Policy"));
            }
            assertEquals(429, token("reload").statusCode());

            JsonNode reloaded = get("/actuator/sluice");
            assertEquals(before + 1, reloaded.get("version").asLong());
            assertTrue(reloaded.at("/lastReload/succeeded").asBoolean());
            assertEquals(FILE.toString(), reloaded.at("/lastReload/source").asText());
            assertEquals(
                    5,
                    reloaded.at("/domains/oauth-token/0/limits/0/requestsPerUnit")
                            .asLong());

            publish("domain: oauth-token\ndescriptors:\n  - key: client_id\n    rate_limit: {unit: fortnight}\n");
            Await.until("the broken file to be reported", Await.GENEROUS, () -> !get("/actuator/sluice")
                    .at("/lastReload/succeeded")
                    .asBoolean());
            JsonNode refused = get("/actuator/sluice");
            assertEquals(before + 1, refused.get("version").asLong(), "the last good policy stays");
            String message = refused.at("/lastReload/message").asText();
            assertTrue(message.contains(FILE + ":4:24: descriptors[0].rate_limit.unit"), message);
            assertEquals(429, token("reload").statusCode(), "the limit of 5 still holds");
        } finally {
            long last = limiter.version();
            publish(POLICY);
            Await.until("the original policy back", Await.GENEROUS, () -> limiter.version() == last + 1);
        }
    }

    @Test
    void theActuatorEndpointShowsThePoliciesInForce() {
        JsonNode report = get("/actuator/sluice");
        assertEquals(FILE.toString(), report.get("source").asText());
        assertTrue(report.get("watched").asBoolean());
        assertFalse(report.get("dryRun").asBoolean());
        JsonNode rules = report.at("/domains/oauth-token");
        assertEquals(2, rules.size(), rules.toString());

        JsonNode perClient = rules.get(0);
        assertEquals("client_id", perClient.get("path").asText());
        assertEquals("enforce", perClient.get("mode").asText());
        assertEquals(FILE + ":3:5", perClient.get("source").asText());
        JsonNode limit = perClient.at("/limits/0");
        assertEquals(3, limit.get("requestsPerUnit").asLong());
        assertEquals("day", limit.get("unit").asText());
        assertEquals("PT24H", limit.get("window").asText());
        assertEquals("fixed_window", limit.get("algorithm").asText());
        assertFalse(limit.get("unlimited").asBoolean());

        JsonNode trusted = rules.get(1);
        assertEquals("client_id_trusted", trusted.get("path").asText());
        assertTrue(trusted.at("/limits/0/unlimited").asBoolean());
        assertNull(trusted.at("/limits/0/window").textValue());
    }
}
