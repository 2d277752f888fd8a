package dev.sluice.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.ManualClock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The starter on an ordinary API, from properties alone: {@code /api/*} limited per API key (a header) and per remote
 * address, as two descriptors checked together, on a frozen clock so every count is exact.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        classes = SluiceApiDescriptorsTest.Api.class,
        properties = {
            "sluice.filter.url-patterns=/api/*",
            "sluice.filter.descriptors[0].entries[0].key=api_key",
            "sluice.filter.descriptors[0].entries[0].source=header",
            "sluice.filter.descriptors[0].entries[0].header=X-Api-Key",
            "sluice.filter.descriptors[1].entries[0].key=remote_address",
            "sluice.filter.descriptors[1].entries[0].source=remote-address"
        })
class SluiceApiDescriptorsTest {

    static final String POLICY =
            """
            domain: api
            descriptors:
              - key: api_key
                rate_limit: {unit: day, requests_per_unit: 2, name: per-key}
              - key: remote_address
                rate_limit: {unit: day, requests_per_unit: 5, name: per-address}
            """;

    /** 10:00 UTC: a day window has 14 hours left. */
    static final Instant START = Instant.parse("2026-01-05T10:00:00Z");

    static final HttpClient HTTP = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void policy(DynamicPropertyRegistry registry) {
        registry.add("sluice.policies.inline[0]", () -> POLICY);
    }

    /** An API with no notion of rate limits, and a page outside the filter's patterns. */
    @SpringBootApplication
    @RestController
    static class Api {
        @GetMapping("/api/orders")
        String orders() {
            return "orders";
        }

        @GetMapping("/about")
        String about() {
            return "about";
        }

        @Bean(SluiceAutoConfiguration.CLOCK_BEAN)
        ManualClock sluiceClock() {
            return new ManualClock(START);
        }
    }

    HttpResponse<String> get(String path, Optional<String> apiKey) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path));
        apiKey.ifPresent(k -> b.header("X-Api-Key", k));
        try {
            return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElseThrow(() -> new AssertionError("no " + name + " in " + r.headers()));
    }

    static void served(HttpResponse<String> r, String policy, String rateLimit) {
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("orders", r.body());
        assertEquals(policy, header(r, "RateLimit-Policy"));
        assertEquals(rateLimit, header(r, "RateLimit"));
    }

    static void refused(HttpResponse<String> r, String violated) {
        assertEquals(429, r.statusCode(), r.body());
        assertEquals("application/problem+json", header(r, "Content-Type"));
        assertTrue(r.body().contains("\"violated-policies\":[\"" + violated + "\"]"), r.body());
        assertEquals("50400", header(r, "Retry-After"));
    }

    @Test
    void requestsAreLimitedPerApiKeyAndPerRemoteAddress() {
        String both = "\"per-key\";q=2;w=86400, \"per-address\";q=5;w=86400";
        Optional<String> k1 = Optional.of("key-1");
        Optional<String> k2 = Optional.of("key-2");
        served(get("/api/orders", k1), both, "\"per-key\";r=1;t=50400, \"per-address\";r=4;t=50400");
        served(get("/api/orders", k1), both, "\"per-key\";r=0;t=50400, \"per-address\";r=3;t=50400");
        refused(get("/api/orders", k1), "per-key");
        served(get("/api/orders", k2), both, "\"per-key\";r=1;t=50400, \"per-address\";r=2;t=50400");

        // No API key: that descriptor is left out, the address still counts.
        String address = "\"per-address\";q=5;w=86400";
        served(get("/api/orders", Optional.empty()), address, "\"per-address\";r=1;t=50400");
        served(get("/api/orders", Optional.empty()), address, "\"per-address\";r=0;t=50400");
        refused(get("/api/orders", Optional.empty()), "per-address");
        refused(get("/api/orders", k2), "per-address");

        HttpResponse<String> outside = get("/about", Optional.empty());
        assertEquals(200, outside.statusCode());
        assertTrue(outside.headers().firstValue("RateLimit").isEmpty(), "not under /api/*");
    }
}
