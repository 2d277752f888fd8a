package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.UInt64Value;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Malformed requests, over gRPC and HTTP, each answered with a clear error naming the problem ({@code
 * INVALID_ARGUMENT} / 400, or the size limit), and the service still serving after all of them.
 */
class BadInputIT {
    static ServerProcess server;

    @BeforeAll
    static void start() {
        server = ServerProcess.serve();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            try {
                // Still serving after everything below.
                assertEquals(
                        Code.OK,
                        server.shouldRateLimit(request("oauth-token", descriptor("client_id", "after")))
                                .getOverallCode());
                assertEquals(200, server.get("/healthcheck").statusCode());
            } finally {
                server.close();
            }
        }
    }

    static Stream<Arguments> grpc() {
        RateLimitRequest ok = request("oauth-token", descriptor("client_id", "abc"));
        return Stream.of(
                Arguments.of("empty domain", ok.toBuilder().setDomain("").build(), "domain must not be empty"),
                Arguments.of(
                        "no descriptors",
                        ok.toBuilder().clearDescriptors().build(),
                        "descriptor list must not be empty"),
                Arguments.of(
                        "a descriptor without entries",
                        ok.toBuilder()
                                .addDescriptors(RateLimitDescriptor.getDefaultInstance())
                                .build(),
                        "descriptors[1] has no entries"),
                Arguments.of(
                        "an empty key",
                        request("oauth-token", descriptor("client_id", "abc", "", "x")),
                        "descriptors[0].entries[1].key must not be empty"),
                Arguments.of(
                        "hits_addend 0 on a descriptor",
                        request(
                                "oauth-token",
                                descriptor("client_id", "abc").toBuilder()
                                        .setHitsAddend(UInt64Value.of(0))
                                        .build()),
                        "descriptors[0].hits_addend is 0"),
                Arguments.of(
                        "a limit override",
                        request(
                                "oauth-token",
                                descriptor("client_id", "abc").toBuilder()
                                        .setLimit(RateLimitDescriptor.RateLimitOverride.newBuilder()
                                                .setRequestsPerUnit(5))
                                        .build()),
                        "descriptors[0].limit: limit overrides in the request are not supported"));
    }

    @ParameterizedTest(name = "gRPC: {0}")
    @MethodSource
    void grpc(String what, RateLimitRequest request, String message) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> server.shouldRateLimit(request));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), what);
        assertTrue(
                String.valueOf(e.getStatus().getDescription()).contains(message),
                e.getStatus().toString());

        // The same request as proto3 JSON over HTTP: 400 with the same message.
        HttpResponse<String> http = server.post("/json", ServerProcess.json(request));
        assertEquals(400, http.statusCode(), http.body());
        assertEquals(
                "application/json", http.headers().firstValue("Content-Type").orElse(""));
        assertTrue(http.body().startsWith("{\"error\":\"") && http.body().contains(message), http.body());
    }

    @Test
    void grpcMessageOverTheSizeLimit() {
        RateLimitRequest huge = request("oauth-token", descriptor("client_id", "x".repeat(2 << 20)));
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> server.shouldRateLimit(huge));
        assertEquals(
                Status.Code.RESOURCE_EXHAUSTED,
                e.getStatus().getCode(),
                e.getStatus().toString());
    }

    static Stream<Arguments> http() {
        return Stream.of(
                Arguments.of("broken JSON", "{\"domain\": \"oauth-token\", \"descriptors\": [", 400, "proto3 JSON"),
                Arguments.of("not JSON", "domain=oauth-token", 400, "proto3 JSON"),
                Arguments.of("empty body", "", 400, "proto3 JSON"),
                Arguments.of(
                        "descriptors of the wrong type",
                        "{\"domain\": \"oauth-token\", \"descriptors\": \"client_id=abc\"}",
                        400,
                        "proto3 JSON"),
                Arguments.of(
                        "hitsAddend of the wrong type",
                        "{\"domain\": \"oauth-token\", \"hitsAddend\": \"many\","
                                + " \"descriptors\": [{\"entries\": [{\"key\": \"client_id\", \"value\": \"a\"}]}]}",
                        400,
                        "proto3 JSON"),
                Arguments.of(
                        "an entry of the wrong type",
                        "{\"domain\": \"oauth-token\", \"descriptors\": [{\"entries\": [[\"client_id\", \"a\"]]}]}",
                        400,
                        "proto3 JSON"),
                Arguments.of(
                        "an unknown field",
                        "{\"domain\": \"oauth-token\", \"descriptor\": [{\"entries\": []}]}",
                        400,
                        "Cannot find field: descriptor"),
                Arguments.of(
                        "a 10 MB body",
                        "{\"domain\": \"" + "x".repeat(10 << 20) + "\"}",
                        413,
                        "larger than the limit of 1048576 bytes"));
    }

    @ParameterizedTest(name = "HTTP: {0}")
    @MethodSource
    void http(String what, String body, int status, String message) {
        HttpResponse<String> r = server.post("/json", body);
        assertEquals(status, r.statusCode(), what + ": " + r.body());
        assertTrue(r.body().contains(message), what + ": " + r.body());
    }

    @Test
    void wrongMethodsAndPaths() {
        HttpResponse<String> get = server.get("/json");
        assertEquals(405, get.statusCode());
        assertEquals("POST", get.headers().firstValue("Allow").orElse(""));
        HttpResponse<String> put = server.send(HttpRequest.newBuilder(server.uri("/healthcheck"))
                .PUT(HttpRequest.BodyPublishers.ofString("x"))
                .build());
        assertEquals(405, put.statusCode());
        assertEquals(404, server.get("/nope").statusCode());
        // Admin endpoints are off without SLUICE_ADMIN_TOKEN.
        HttpResponse<String> config = server.get("/rlconfig");
        assertEquals(404, config.statusCode());
        assertTrue(config.body().contains("SLUICE_ADMIN_TOKEN"), config.body());
    }

    @Test
    void anEmptyValueIsAValueAsInEnvoy() {
        assertEquals(
                Code.OK,
                server.shouldRateLimit(request("oauth-token", descriptor("client_id", "")))
                        .getOverallCode());
    }
}
