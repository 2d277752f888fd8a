package dev.sluice.server;

import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * {@code load}: a gRPC load client for benchmarking a running service. {@code --streams} threads, spread over
 * {@code --channels} connections, each call {@code ShouldRateLimit} in a closed loop (the next call when the last
 * answer is in) for a warm-up and then for {@code --duration}; it reports the calls answered per second and the
 * latency of each call as the client saw it (median, 99th and 99.9th percentile, maximum), from every sample sorted.
 *
 * <p>A closed loop measures what that many concurrent callers get; it does not measure latency at a fixed offered
 * rate (a slow answer delays the calls behind it instead of being counted against them).
 */
final class LoadCommand {
    static final String HELP =
            """
            Usage: java -jar sluice-server.jar load [options]

            A benchmarking aid: N concurrent callers fire gRPC ShouldRateLimit at a running service, each the
            next call as soon as the last answer is in, and it reports checks/s and the latency the callers saw.
            Request i names the client client-(i mod --clients) under --domain, key --key.

            Options:
              --target HOST:PORT      the service's gRPC address; default 127.0.0.1:8081
              --domain D              default oauth-token (the built-in example)
              --key K                 the descriptor key; default client_id
              --clients N             how many distinct values to cycle through; default 10000
              --streams N             concurrent callers; default 16
              --channels N            connections they share; default 4
              --warmup D              calls not counted first; default 3s
              --duration D            calls measured; default 10s
              --bare                  call the bare endpoint of a service started with serve --bench-bare
                                      (sluice.bench.Bare/ShouldRateLimit: answered OK with no rate-limit work)

            Prints one line: checks/s, p50/p99/p99.9/max latency in ms, and the count of OK, OVER_LIMIT and errors.
            Exit status 0, or 1 if any call failed.
            """;

    private LoadCommand() {}

    static int run(List<String> args, PrintStream out, PrintStream err) {
        Options o = Options.parse(
                "load",
                args,
                Set.of("target", "domain", "key", "clients", "streams", "channels", "warmup", "duration"),
                Set.of("help", "bare"));
        if (o.flag("help")) {
            out.print(HELP);
            return 0;
        }
        String target = o.string("target", "127.0.0.1:8081");
        int colon = target.lastIndexOf(':');
        int port = colon <= 0 ? -1 : parsePort(target.substring(colon + 1));
        if (port < 1) {
            throw o.bad("target", target, "HOST:PORT, e.g. 127.0.0.1:8081");
        }
        String domain = o.string("domain", "oauth-token");
        String key = o.string("key", "client_id");
        int clients = (int) Math.min(Integer.MAX_VALUE, o.positiveLong("clients", 10_000));
        int streams = (int) Math.min(10_000, o.positiveLong("streams", 16));
        int channelCount = (int) Math.min(streams, o.positiveLong("channels", 4));
        Duration warmup = o.duration("warmup");
        Duration duration = o.duration("duration");
        long warmupNanos = (warmup == null ? Duration.ofSeconds(3) : warmup).toNanos();
        long measureNanos = (duration == null ? Duration.ofSeconds(10) : duration).toNanos();
        boolean bare = o.flag("bare");
        MethodDescriptor<RateLimitRequest, RateLimitResponse> method =
                bare ? BareEndpoint.METHOD : RateLimitServiceGrpc.getShouldRateLimitMethod();

        RateLimitRequest[] requests = new RateLimitRequest[clients];
        for (int i = 0; i < clients; i++) {
            requests[i] = RateLimitRequest.newBuilder()
                    .setDomain(domain)
                    .addDescriptors(RateLimitDescriptor.newBuilder()
                            .addEntries(RateLimitDescriptor.Entry.newBuilder()
                                    .setKey(key)
                                    .setValue("client-" + i)))
                    .build();
        }
        List<ManagedChannel> channels = new ArrayList<>();
        for (int i = 0; i < channelCount; i++) {
            channels.add(NettyChannelBuilder.forAddress(target.substring(0, colon), port)
                    .usePlaintext()
                    .build());
        }
        try {
            long start = System.nanoTime();
            long measureFrom = start + warmupNanos;
            long end = measureFrom + measureNanos;
            Caller[] callers = new Caller[streams];
            Thread[] threads = new Thread[streams];
            for (int s = 0; s < streams; s++) {
                callers[s] = new Caller(channels.get(s % channelCount), method, requests, s, streams, measureFrom, end);
                threads[s] = new Thread(callers[s], "sluice-load-" + s);
                threads[s].start();
            }
            for (Thread t : threads) {
                t.join();
            }
            long[] all = new long[Arrays.stream(callers).mapToInt(c -> c.count).sum()];
            long ok = 0;
            long over = 0;
            long errors = 0;
            int n = 0;
            String firstError = null;
            for (Caller c : callers) {
                System.arraycopy(c.latencies, 0, all, n, c.count);
                n += c.count;
                ok += c.ok;
                over += c.over;
                errors += c.errors;
                if (firstError == null) {
                    firstError = c.firstError;
                }
            }
            Arrays.sort(all);
            double seconds = measureNanos / 1e9;
            out.printf(
                    Locale.ROOT,
                    "load: %s %s, %d streams over %d channels, %d clients: %.0f checks/s, latency ms p50 %.3f p99 %.3f"
                            + " p99.9 %.3f max %.3f; OK %d, OVER_LIMIT %d, errors %d%n",
                    bare ? BareEndpoint.SERVICE + "/ShouldRateLimit" : "ShouldRateLimit",
                    target,
                    streams,
                    channelCount,
                    clients,
                    all.length / seconds,
                    percentile(all, 0.50),
                    percentile(all, 0.99),
                    percentile(all, 0.999),
                    all.length == 0 ? 0.0 : all[all.length - 1] / 1e6,
                    ok,
                    over,
                    errors);
            if (firstError != null) {
                err.println("load: first error: " + firstError);
            }
            return errors == 0 ? 0 : 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 3;
        } finally {
            channels.forEach(ManagedChannel::shutdownNow);
        }
    }

    /** The latency below which a fraction {@code q} of the sorted samples lie, in milliseconds (nearest rank). */
    static double percentile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1e6;
    }

    private static int parsePort(String s) {
        try {
            int p = Integer.parseInt(s);
            return p >= 1 && p <= 65535 ? p : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** One concurrent caller: blocking calls in a loop, its latencies recorded once the warm-up is over. */
    private static final class Caller implements Runnable {
        private final ManagedChannel channel;
        private final MethodDescriptor<RateLimitRequest, RateLimitResponse> method;
        private final RateLimitRequest[] requests;
        private final int first;
        private final int step;
        private final long measureFrom;
        private final long end;
        long[] latencies = new long[1 << 16];
        int count;
        long ok;
        long over;
        long errors;

        @Nullable
        String firstError;

        Caller(
                ManagedChannel channel,
                MethodDescriptor<RateLimitRequest, RateLimitResponse> method,
                RateLimitRequest[] requests,
                int first,
                int step,
                long measureFrom,
                long end) {
            this.channel = channel;
            this.method = method;
            this.requests = requests;
            this.first = first;
            this.step = step;
            this.measureFrom = measureFrom;
            this.end = end;
        }

        @Override
        public void run() {
            long i = first;
            while (true) {
                long t0 = System.nanoTime();
                if (t0 >= end) {
                    return;
                }
                RateLimitRequest request = requests[(int) (i % requests.length)];
                i += step;
                boolean failed = false;
                boolean overLimit = false;
                try {
                    RateLimitResponse r = ClientCalls.blockingUnaryCall(
                            channel, method, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), request);
                    overLimit = r.getOverallCode() == RateLimitResponse.Code.OVER_LIMIT;
                } catch (StatusRuntimeException e) {
                    failed = true;
                    if (firstError == null) {
                        firstError = e.getStatus().toString();
                    }
                }
                long t1 = System.nanoTime();
                if (t0 < measureFrom || t1 > end) {
                    continue; // warm-up, or a call that ends after the measured time
                }
                if (count == latencies.length) {
                    latencies = Arrays.copyOf(latencies, 2 * count);
                }
                latencies[count++] = t1 - t0;
                if (failed) {
                    errors++;
                } else if (overLimit) {
                    over++;
                } else {
                    ok++;
                }
            }
        }
    }
}
