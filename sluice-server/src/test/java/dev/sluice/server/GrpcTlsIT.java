package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.server.Certificates;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * gRPC over TLS and mutual TLS, with certificates made here by {@code openssl}: a TLS client is answered and a
 * plaintext one refused; with a client CA, a client without a certificate, or with one another CA signed, is refused
 * and one the CA signed is answered. One server per case set; mutual TLS is configured as Envoy Gateway configures
 * envoyproxy/ratelimit, through the environment.
 */
class GrpcTlsIT {
    @TempDir
    static Path dir;

    private static Path config;

    @BeforeAll
    static void certificates() throws IOException {
        Certificates certs = new Certificates(dir);
        certs.ca("ca");
        certs.ca("other-ca");
        certs.signed("server", "ca", "subjectAltName=DNS:localhost,IP:127.0.0.1");
        certs.signed("client", "ca", "extendedKeyUsage=clientAuth");
        certs.signed("stranger", "other-ca", "extendedKeyUsage=clientAuth");
        config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(
                config.resolve("edge.yaml"),
                """
                domain: edge
                descriptors:
                  - key: remote_address
                    rate_limit:
                      unit: second
                      requests_per_unit: 1000000
                """);
    }

    @Test
    void tlsAnswersTlsClientsOnly() throws IOException {
        try (ServerProcess server = ServerProcess.serve(
                "--config", config.toString(),
                "--grpc-tls-cert", file("server.crt"),
                "--grpc-tls-key", file("server.key"),
                "--grpc-max-connection-age", "1h",
                "--grpc-max-connection-age-grace", "1m")) {
            assertAnswered(tls(server, null));
            assertRefused(plaintext(server));
        }
    }

    @Test
    void mutualTlsAsEnvoyGatewaySetsIt() throws IOException {
        Map<String, String> env = Map.of(
                "GRPC_SERVER_USE_TLS",
                "true",
                "GRPC_SERVER_TLS_CERT",
                file("server.crt"),
                "GRPC_SERVER_TLS_KEY",
                file("server.key"),
                "GRPC_CLIENT_TLS_CACERT",
                file("ca.crt"),
                "GRPC_MAX_CONNECTION_AGE",
                "24h",
                "GRPC_MAX_CONNECTION_AGE_GRACE",
                "1h");
        try (ServerProcess server = ServerProcess.serve(env, "--config", config.toString())) {
            assertAnswered(tls(server, "client"));
            assertRefused(tls(server, null));
            assertRefused(tls(server, "stranger"));
            assertRefused(plaintext(server));
        }
    }

    /** A key that is not one stops the start with status 3 and a message naming the file, never its content. */
    @Test
    void anUnusableKeyStopsTheStartNamingIt() throws IOException {
        Path key = Files.writeString(dir.resolve("bad.key"), "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWJ5dGVz\n");
        ServerProcess.Result r = ServerProcess.run(
                "serve",
                "--grpc-port",
                "0",
                "--http-port",
                "0",
                "--grpc-tls-cert",
                file("server.crt"),
                "--grpc-tls-key",
                key.toString());
        assertEquals(3, r.status(), r.err());
        assertTrue(r.err().contains("sluice: cannot start: the gRPC TLS key (--grpc-tls-key) " + key), r.err());
        assertFalse(r.err().contains("c2VjcmV0"), r.err());
    }

    private static void assertAnswered(ManagedChannel channel) {
        try {
            RateLimitResponse r = RateLimitServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(30, TimeUnit.SECONDS)
                    .shouldRateLimit(ServerProcess.request("edge", ServerProcess.descriptor("remote_address", "a")));
            assertEquals(RateLimitResponse.Code.OK, r.getOverallCode());
        } finally {
            channel.shutdownNow();
        }
    }

    private static void assertRefused(ManagedChannel channel) {
        try {
            StatusRuntimeException e =
                    assertThrows(StatusRuntimeException.class, () -> RateLimitServiceGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(30, TimeUnit.SECONDS)
                            .shouldRateLimit(
                                    ServerProcess.request("edge", ServerProcess.descriptor("remote_address", "a"))));
            assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
        } finally {
            channel.shutdownNow();
        }
    }

    private static ManagedChannel plaintext(ServerProcess server) {
        return NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort())
                .usePlaintext()
                .build();
    }

    /** A TLS client trusting the test CA, presenting the certificate {@code name} (none if null). */
    private static ManagedChannel tls(ServerProcess server, String name) throws IOException {
        SslContextBuilder ssl =
                GrpcSslContexts.forClient().trustManager(dir.resolve("ca.crt").toFile());
        if (name != null) {
            ssl.keyManager(
                    dir.resolve(name + ".crt").toFile(),
                    dir.resolve(name + ".key").toFile());
        }
        return NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort())
                .sslContext(ssl.build())
                .build();
    }

    private static String file(String name) {
        return dir.resolve(name).toString();
    }
}
