package dev.sluice.server;

import com.google.protobuf.UInt64Value;
import dev.sluice.assembly.StoreMode;
import dev.sluice.testkit.FrontDoorContract;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The {@link FrontDoorContract} through the real jar's gRPC {@code ShouldRateLimit} and {@code POST /json}: three
 * {@code serve} processes on a Redis of the test's own, one per mode (exact, synchronized, leased), each asked over
 * gRPC and over {@code /json} on HTTP/1.1 and on HTTP/2 (h2c); the exact one serves the scenarios with a store that
 * answers. The jar's clock cannot be set, so resets are checked within the window.
 */
class FrontDoorsIT extends FrontDoorContract {

    RedisServer redis;
    final Map<StoreMode, ServerProcess> servers = new EnumMap<>(StoreMode.class);

    @BeforeAll
    void start() throws IOException {
        Path dir = Files.createTempDirectory("sluice-front-doors");
        for (Map.Entry<String, String> f : POLICIES.entrySet()) {
            Files.writeString(dir.resolve(f.getKey()), f.getValue());
        }
        redis = RedisServers.start();
        Map<StoreMode, CompletableFuture<ServerProcess>> starting = new EnumMap<>(StoreMode.class);
        for (StoreMode mode : StoreMode.values()) {
            List<String> args = new ArrayList<>(List.of(
                    "--config",
                    dir.toString(),
                    "--store",
                    redis.uri(),
                    // patient, as RedisServeIT: a call slowed by a loaded machine must not become a failure answer
                    "--store-timeout",
                    "2s",
                    "--response-headers",
                    "draft10"));
            if (mode == StoreMode.SYNCHRONIZED) {
                args.addAll(List.of("--sync-interval", "100ms"));
            } else if (mode == StoreMode.LEASED) {
                args.addAll(List.of("--lease-interval", "100ms"));
            }
            starting.put(mode, CompletableFuture.supplyAsync(() -> ServerProcess.serve(args.toArray(String[]::new))));
        }
        starting.forEach((mode, server) -> servers.put(mode, server.join()));
    }

    @AfterAll
    void stop() {
        servers.values().forEach(ServerProcess::close);
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    protected List<FrontDoor> doors() {
        return doorsOn(StoreMode.EXACT);
    }

    @Override
    protected List<FrontDoor> doorsOn(StoreMode mode) {
        ServerProcess server = servers.get(mode);
        String on = " of the jar, " + mode.name().toLowerCase(Locale.ROOT) + " on Redis";
        return List.of(
                new Door("gRPC" + on, server, server::shouldRateLimit),
                new Door("/json" + on, server, request -> json(server.post("/json", ServerProcess.json(request)))),
                new Door(
                        "/json over h2c" + on,
                        server,
                        request -> json(server.postOverHttp2("/json", ServerProcess.json(request)))));
    }

    private static RateLimitResponse json(HttpResponse<String> r) {
        RateLimitResponse response = ServerProcess.parse(r.body());
        int expected = response.getOverallCode() == Code.OVER_LIMIT ? 429 : 200;
        if (r.statusCode() != expected) {
            throw new AssertionError("/json answered " + r.statusCode() + " to " + response);
        }
        return response;
    }

    @Override
    protected void stopTheStore() {
        redis.stop();
    }

    /** One transport of one process: the request in Envoy's terms, the answer back in the contract's. */
    record Door(String name, ServerProcess server, Function<RateLimitRequest, RateLimitResponse> transport)
            implements FrontDoor {

        @Override
        public Answer ask(Request request) {
            RateLimitRequest.Builder r = RateLimitRequest.newBuilder().setDomain(request.domain());
            for (Part p : request.parts()) {
                r.addDescriptors(RateLimitDescriptor.newBuilder()
                        .addEntries(RateLimitDescriptor.Entry.newBuilder()
                                .setKey(p.key())
                                .setValue(p.value()))
                        .setHitsAddend(UInt64Value.of(p.cost())));
            }
            RateLimitResponse response = transport.apply(r.build());
            Map<String, Limit> limits = new LinkedHashMap<>();
            for (DescriptorStatus s : response.getStatusesList()) {
                if (s.hasCurrentLimit()) {
                    long reset = s.getDurationUntilReset().getSeconds()
                            + (s.getDurationUntilReset().getNanos() > 0 ? 1 : 0);
                    limits.put(
                            s.getCurrentLimit().getName(),
                            new Limit(
                                    Integer.toUnsignedLong(s.getCurrentLimit().getRequestsPerUnit()),
                                    seconds(s.getCurrentLimit().getUnit()),
                                    Integer.toUnsignedLong(s.getLimitRemaining()),
                                    reset,
                                    s.getCode() == Code.OVER_LIMIT));
                }
            }
            Map<String, String> fields = new LinkedHashMap<>();
            for (HeaderValue h : response.getResponseHeadersToAddList()) {
                fields.put(h.getKey(), h.getValue());
            }
            Optional<String> shadowBan = Optional.empty();
            for (HeaderValue h : response.getRequestHeadersToAddList()) {
                if (h.getKey().equals(RateLimitAdapter.SHADOW_BAN_HEADER)) {
                    shadowBan = Optional.of(h.getValue());
                }
            }
            return new Answer(response.getOverallCode() == Code.OK, limits, fields, shadowBan);
        }

        private static long seconds(RateLimitResponse.RateLimit.Unit unit) {
            return switch (unit) {
                case SECOND -> 1;
                case MINUTE -> 60;
                case HOUR -> 3600;
                case DAY -> 86_400;
                default -> throw new AssertionError("a unit the contract does not use: " + unit);
            };
        }

        @Override
        public Counts counts() {
            return Counts.ofPrometheus(server.get("/metrics").body());
        }

        @Override
        public String toString() {
            return name;
        }
    }
}
