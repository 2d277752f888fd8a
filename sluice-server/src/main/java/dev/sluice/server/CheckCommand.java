package dev.sluice.server;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.PrintStream;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@code check --domain D --descriptor k=v,k=v [--hits N] [--target host:port]}: one
 * {@code ShouldRateLimit} call to a running service, its answer printed as proto3 JSON. Exit 0 for {@code OK}, 1 for
 * {@code OVER_LIMIT}, 3 when the service cannot be reached or refuses the request.
 */
final class CheckCommand {
    static final String HELP =
            """
            Usage: java -jar sluice-server.jar check --domain D --descriptor k=v[,k=v...] [options]

            Asks a running service (gRPC ShouldRateLimit) about one request and prints the answer as JSON.
            Exit status: 0 OK, 1 OVER_LIMIT, 3 the service could not be reached or refused the request.

            Options:
              --domain D              the domain, e.g. oauth-token
              --descriptor k=v,...    the descriptor: its entries in order, e.g. client_id=abc,username=bob;
                                      several descriptors separated by ';' (client_id=abc;ip=1.2.3.4)
              --hits N                the request's hits_addend; default 1
              --target HOST:PORT      the service's gRPC address; default 127.0.0.1:8081
              --timeout D             how long to wait for the answer; default 5s
            """;

    private CheckCommand() {}

    static int run(List<String> args, PrintStream out, PrintStream err) {
        Options o = Options.parse(
                "check", args, Set.of("domain", "descriptor", "hits", "target", "timeout"), Set.of("help"));
        if (o.flag("help")) {
            out.print(HELP);
            return 0;
        }
        String domain = o.string("domain");
        if (domain == null || domain.isEmpty()) {
            throw new UsageException("check: --domain is required, e.g. --domain oauth-token");
        }
        String one = o.string("descriptor");
        if (one == null) {
            throw new UsageException("check: --descriptor is required, e.g. --descriptor client_id=abc");
        }
        RateLimitRequest.Builder request = RateLimitRequest.newBuilder().setDomain(domain);
        for (String d : one.split(";", -1)) {
            request.addDescriptors(descriptor(o, "descriptor", d));
        }
        long hits = o.positiveLong("hits", 1);
        if (hits > 0xFFFF_FFFFL) {
            throw o.bad("hits", Long.toString(hits), "at most 4294967295");
        }
        request.setHitsAddend((int) hits);
        String target = o.string("target", "127.0.0.1:8081");
        int colon = target.lastIndexOf(':');
        int port;
        try {
            port = colon < 0 ? -1 : Integer.parseInt(target.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (colon <= 0 || port < 1 || port > 65535) {
            throw o.bad("target", target, "HOST:PORT, e.g. 127.0.0.1:8081");
        }
        java.time.Duration timeout = o.duration("timeout");
        long timeoutMillis = timeout == null ? 5000 : timeout.toMillis();

        ManagedChannel channel = NettyChannelBuilder.forAddress(target.substring(0, colon), port)
                .usePlaintext()
                .build();
        try {
            RateLimitResponse response = RateLimitServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(timeoutMillis, TimeUnit.MILLISECONDS)
                    .shouldRateLimit(request.build());
            out.println(JsonFormat.printer().print(response));
            return response.getOverallCode() == RateLimitResponse.Code.OVER_LIMIT ? 1 : 0;
        } catch (StatusRuntimeException e) {
            err.println("check: " + target + " answered " + e.getStatus().getCode()
                    + (e.getStatus().getDescription() == null
                            ? ""
                            : ": " + e.getStatus().getDescription()));
            return 3;
        } catch (InvalidProtocolBufferException e) {
            err.println("check: cannot print the answer: " + e.getMessage());
            return 3;
        } finally {
            channel.shutdownNow();
        }
    }

    private static RateLimitDescriptor descriptor(Options o, String option, String text) {
        RateLimitDescriptor.Builder d = RateLimitDescriptor.newBuilder();
        for (String entry : text.split(",", -1)) {
            int eq = entry.indexOf('=');
            if (eq <= 0) {
                throw o.bad(option, text, "entries key=value separated by commas, e.g. client_id=abc,username=bob");
            }
            d.addEntries(RateLimitDescriptor.Entry.newBuilder()
                    .setKey(entry.substring(0, eq))
                    .setValue(entry.substring(eq + 1)));
        }
        return d.build();
    }
}
