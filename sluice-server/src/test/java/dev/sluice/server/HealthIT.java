package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Await;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The gRPC health service ({@code grpc.health.v1.Health}, service names {@code ""} and {@code ratelimit}) and
 * {@code GET /healthcheck} telling the same truth: SERVING once the store answers, NOT_SERVING while it does not and
 * from SIGTERM on. A store that goes down under a running service is {@code StoreOutageIT}'s.
 */
class HealthIT {
    private static final List<String> SERVICES = List.of("", Readiness.GRPC_SERVICE);

    @Test
    void servingOnMemoryUntilSigterm() {
        try (ServerProcess server = ServerProcess.serve()) {
            ManagedChannel channel = channel(server);
            try {
                for (String service : SERVICES) {
                    assertEquals(ServingStatus.SERVING, check(channel, service), "service '" + service + "'");
                }
                assertEquals(200, server.get("/healthcheck").statusCode());

                Iterator<HealthCheckResponse> watch = HealthGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(60, TimeUnit.SECONDS)
                        .watch(HealthCheckRequest.newBuilder().setService("").build());
                assertEquals(ServingStatus.SERVING, watch.next().getStatus());
                server.process().toHandle().destroy(); // SIGTERM
                assertEquals(ServingStatus.NOT_SERVING, watch.next().getStatus(), "told as the graceful stop begins");
            } finally {
                channel.shutdownNow();
            }
        }
    }

    /**
     * Redis down at start: the service starts unready and says so (or, with {@code --require-store}, refuses to
     * start); both ports answer NOT_SERVING until Redis starts, then SERVING. Each of the two processes first waits
     * out the service's start-up budget for the store, so they start together, and Redis starts once both are done.
     */
    @Test
    void storeDownAtStart() {
        try (RedisServer redis = RedisServers.start()) {
            redis.stop();
            CompletableFuture<ServerProcess.Result> refusing = CompletableFuture.supplyAsync(() -> ServerProcess.run(
                    "serve", "--http-port", "0", "--grpc-port", "0", "--store", redis.uri(), "--require-store"));
            try (ServerProcess server = ServerProcess.serve("--store", redis.uri())) {
                assertTrue(
                        String.join("\n", server.stderr()).contains("starting unready"),
                        "said in the log: " + server.stderr());
                ManagedChannel channel = channel(server);
                try {
                    assertEquals(500, server.get("/healthcheck").statusCode());
                    for (String service : SERVICES) {
                        assertEquals(ServingStatus.NOT_SERVING, check(channel, service), "service '" + service + "'");
                    }
                    ServerProcess.Result refused = refusing.join();
                    assertEquals(3, refused.status(), refused.err());
                    assertTrue(refused.err().contains("did not answer"), refused.err());
                    redis.restart();
                    Await.until("ready once Redis answers", Await.GENEROUS, () -> ready(server, channel));
                } finally {
                    channel.shutdownNow();
                }
            }
        }
    }

    /** Whether both ports say SERVING. */
    static boolean ready(ServerProcess server, ManagedChannel channel) {
        boolean http = server.get("/healthcheck").statusCode() == 200;
        boolean grpc = SERVICES.stream().allMatch(s -> check(channel, s) == ServingStatus.SERVING);
        return http && grpc;
    }

    /** Whether both ports say NOT_SERVING. */
    static boolean unready(ServerProcess server, ManagedChannel channel) {
        boolean http = server.get("/healthcheck").statusCode() == 500;
        boolean grpc = SERVICES.stream().allMatch(s -> check(channel, s) == ServingStatus.NOT_SERVING);
        return http && grpc;
    }

    static ManagedChannel channel(ServerProcess server) {
        return NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort())
                .usePlaintext()
                .build();
    }

    static ServingStatus check(ManagedChannel channel, String service) {
        return HealthGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(HealthCheckRequest.newBuilder().setService(service).build())
                .getStatus();
    }
}
