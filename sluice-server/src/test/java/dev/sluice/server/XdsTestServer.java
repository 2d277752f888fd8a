package dev.sluice.server;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A state-of-the-world ADS management server for {@code RateLimitConfig} resources, in the test's JVM:
 * java-control-plane's {@code SimpleCache} serves only its six Envoy types (it refuses other type URLs), so this one
 * keeps a snapshot of its own. A new stream is sent the snapshot unless it asks with its version; {@link #set} pushes a
 * new one to every stream. Every request received (first requests, ACKs, NACKs) is recorded.
 */
final class XdsTestServer implements AutoCloseable {
    private final Server server;
    /** Guarded by {@code this}. */
    private final List<StreamObserver<DiscoveryResponse>> streams = new ArrayList<>();
    /** Guarded by {@code this}. */
    private final List<DiscoveryRequest> received = new ArrayList<>();
    /** Guarded by {@code this}. */
    private @Nullable String version;
    /** Guarded by {@code this}. */
    private List<Any> resources = List.of();
    /** Guarded by {@code this}. */
    private long nonce;

    private XdsTestServer(int port, ServerCredentials credentials) {
        try {
            this.server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port), credentials)
                    .addService(new Ads())
                    .build()
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A plaintext server on {@code port} (0: any free one). */
    static XdsTestServer start(int port) {
        return new XdsTestServer(port, InsecureServerCredentials.create());
    }

    static XdsTestServer start(int port, ServerCredentials credentials) {
        return new XdsTestServer(port, credentials);
    }

    int port() {
        return server.getPort();
    }

    /** Puts a new snapshot in place and pushes it to every open stream. */
    synchronized void set(String version, Any... resources) {
        this.version = version;
        this.resources = List.of(resources);
        for (StreamObserver<DiscoveryResponse> s : streams) {
            send(s);
        }
    }

    /** Every request received so far, in order. */
    synchronized List<DiscoveryRequest> received() {
        return List.copyOf(received);
    }

    /** Whether a request received matches. */
    synchronized boolean receivedOne(Predicate<DiscoveryRequest> p) {
        return received.stream().anyMatch(p);
    }

    private void send(StreamObserver<DiscoveryResponse> s) { // under this
        s.onNext(DiscoveryResponse.newBuilder()
                .setVersionInfo(String.valueOf(version))
                .setTypeUrl(RlsConf.TYPE_URL)
                .setNonce("n" + ++nonce)
                .addAllResources(resources)
                .build());
    }

    @Override
    public void close() {
        server.shutdownNow();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private final class Ads extends AggregatedDiscoveryServiceGrpc.AggregatedDiscoveryServiceImplBase {
        @Override
        public StreamObserver<DiscoveryRequest> streamAggregatedResources(StreamObserver<DiscoveryResponse> out) {
            return new StreamObserver<>() {
                @Override
                public void onNext(DiscoveryRequest r) {
                    synchronized (XdsTestServer.this) {
                        received.add(r);
                        if (r.getResponseNonce().isEmpty()) { // a stream's first request
                            streams.add(out);
                            if (version != null && !version.equals(r.getVersionInfo())) {
                                send(out);
                            }
                        }
                    }
                }

                @Override
                public void onError(Throwable t) {
                    gone();
                }

                @Override
                public void onCompleted() {
                    gone();
                    out.onCompleted();
                }

                private void gone() {
                    synchronized (XdsTestServer.this) {
                        streams.remove(out);
                    }
                }
            };
        }
    }
}
