package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The benchmarking aids: the bare endpoints of {@code serve --bench-bare}, off by default, and the load command. */
class BenchAidsIT {
    static final String BODY = "{\"domain\":\"oauth-token\",\"descriptors\":[{\"entries\":[{\"key\":\"client_id\","
            + "\"value\":\"abc\"}]}]}";

    @Test
    void bareEndpointsAnswerOkWithoutDecidingAndTheLoadCommandReportsEveryCall() {
        try (ServerProcess server = ServerProcess.serve("--bench-bare")) {
            HttpResponse<String> bare = server.post("/bench/bare", BODY);
            assertEquals(200, bare.statusCode());
            assertEquals("{\"overallCode\":\"OK\"}", bare.body());
            assertEquals(400, server.post("/bench/bare", "{\"domain\":").statusCode());

            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort())
                    .usePlaintext()
                    .build();
            try {
                RateLimitResponse r = ClientCalls.blockingUnaryCall(
                        channel,
                        BareEndpoint.METHOD,
                        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                        request("oauth-token", descriptor("client_id", "abc")));
                assertEquals(BareEndpoint.OK, r);
            } finally {
                channel.shutdownNow();
            }
            // Nothing was decided: the bare calls left no count.
            assertEquals(
                    0,
                    Metrics.value(
                            server.get("/metrics").body(),
                            "sluice_policy_requests_detailed_total{domain=\"oauth-token\",outcome=\"allowed\","
                                    + "rule=\"client_id\",value=\"abc\"}"),
                    0.0);

            for (boolean bareMethod : new boolean[] {false, true}) {
                List<String> command = new ArrayList<>(List.of(
                        "load",
                        "--target",
                        "127.0.0.1:" + server.grpcPort(),
                        "--streams",
                        "2",
                        "--channels",
                        "1",
                        "--warmup",
                        "1s",
                        "--duration",
                        "1s"));
                if (bareMethod) {
                    command.add("--bare");
                }
                ServerProcess.Result load = ServerProcess.run(command.toArray(String[]::new));
                assertEquals(0, load.status(), load.out() + load.err());
                Matcher m = Pattern.compile(
                                "(\\d+) checks/s, latency ms p50 [\\d.]+ p99 [\\d.]+ p99\\.9 [\\d.]+ max [\\d.]+; "
                                        + "OK (\\d+), OVER_LIMIT (\\d+), errors 0")
                        .matcher(load.out());
                assertTrue(m.find(), load.out());
                assertTrue(Long.parseLong(m.group(2)) > 0, load.out());
                assertTrue(
                        load.out().contains(bareMethod ? "sluice.bench.Bare/ShouldRateLimit" : ": ShouldRateLimit 127"),
                        load.out());
            }
            // The real calls were decided and counted by the service.
            assertTrue(Metrics.value(
                            server.get("/metrics").body(),
                            "sluice_server_requests_total{result=\"ok\",transport=\"grpc\"}")
                    > 0);
        }
    }

    @Test
    void bareEndpointsAreOffByDefault() {
        try (ServerProcess server = ServerProcess.serve()) {
            HttpResponse<String> r = server.post("/bench/bare", BODY);
            assertEquals(404, r.statusCode());
            assertTrue(r.body().contains("serve --bench-bare"), r.body());
        }
    }
}
