package dev.sluice.server;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyException;
import dev.sluice.policy.PolicyLimiter;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The service's configuration from an xDS management server, as envoyproxy/ratelimit takes it with
 * {@code CONFIG_TYPE=GRPC_XDS_SOTW}: a state-of-the-world subscription on the Aggregated Discovery Service
 * ({@code envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources}) to
 * {@value RateLimitConfigs#TYPE_URL}, every resource a domain.
 *
 * <p>Each response is the whole configuration. It is loaded as files are ({@link RateLimitConfigs#policies}, the YAML
 * parser's validation) and put in force whole ({@link PolicyLimiter#update}), then acknowledged (the request repeats
 * the response's {@code version_info} and {@code nonce}). One that does not load, or that the store refuses, changes
 * nothing: it is NACKed (the request carries the version in force, the response's nonce and an {@code error_detail}
 * with every error), logged and counted as a refused reload, and the last good configuration stays. A domain that a
 * new state of the world leaves out is removed: the management server's state is the whole truth, as it is for
 * envoyproxy/ratelimit.
 *
 * <p>When the stream fails or ends (the server restarts, the network drops), the subscription opens a new one after
 * {@link Settings#retryInterval()}, doubling the wait after each failure up to {@link Settings#retryMax()}, with
 * jitter (each wait between half and all of it); a response resets the wait. A new stream asks with the version in
 * force, so a server that still has it need not send it again. Until the first configuration arrives the service has
 * no domain (every request is allowed) and is not ready unless told otherwise (see {@link SluiceServer}).
 *
 * <p>Thread-safe: responses are handled one at a time on the stream's thread; reconnections run on a thread of their
 * own.
 */
final class XdsSubscription implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(XdsSubscription.class.getName());
    /** The longest {@code error_detail} message sent back: the first errors of a refusal, not a flood. */
    static final int MAX_ERROR_DETAIL = 4096;

    private final Settings settings;
    private final PolicyLimiter limiter;
    private final Runnable firstConfig;
    private final ManagedChannel channel;
    private final AggregatedDiscoveryServiceGrpc.AggregatedDiscoveryServiceStub stub;
    private final ScheduledExecutorService reconnects;
    private final Node node;

    /** Guarded by {@code this}: the stream open now, null between streams. */
    private @Nullable ClientCallStreamObserver<DiscoveryRequest> requests;
    /** Guarded by {@code this}: the version in force, as the server named it; empty before the first. */
    private String version = "";
    /** Guarded by {@code this}: failures since the last response, for the backoff. */
    private int failures;
    /** Guarded by {@code this}: the last failure logged, so that a server down is logged once, not every retry. */
    private @Nullable String lastLogged;

    private volatile boolean closed;
    private volatile boolean loaded;
    private volatile @Nullable Update lastUpdate;

    /**
     * @param firstConfig run once, when the first configuration is in force
     * @throws IOException if a TLS file cannot be read
     */
    XdsSubscription(Settings settings, PolicyLimiter limiter, Runnable firstConfig) throws IOException {
        this.settings = settings;
        this.limiter = limiter;
        this.firstConfig = firstConfig;
        ManagedChannelBuilder<?> b = Grpc.newChannelBuilder(settings.target(), credentials(settings.tls()));
        if (settings.tls() != null && settings.tls().serverName() != null) {
            b.overrideAuthority(settings.tls().serverName());
        }
        this.channel = b.keepAliveTime(30, TimeUnit.SECONDS)
                .maxInboundMessageSize(16 << 20)
                .userAgent("sluice")
                .build();
        this.stub = AggregatedDiscoveryServiceGrpc.newStub(channel);
        this.reconnects = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-xds");
            t.setDaemon(true);
            return t;
        });
        Struct.Builder metadata = Struct.newBuilder();
        settings.metadata()
                .forEach((k, v) -> metadata.putFields(
                        k, Value.newBuilder().setStringValue(v).build()));
        this.node = Node.newBuilder()
                .setId(settings.nodeId())
                .setMetadata(metadata)
                .setUserAgentName("sluice")
                .build();
    }

    private static ChannelCredentials credentials(@Nullable Tls tls) throws IOException {
        if (tls == null) {
            return InsecureChannelCredentials.create();
        }
        TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
        if (tls.ca() != null) {
            b.trustManager(tls.ca().toFile());
        }
        if (tls.cert() != null && tls.key() != null) {
            b.keyManager(tls.cert().toFile(), tls.key().toFile());
        }
        return b.build();
    }

    /** Opens the first stream. */
    void start() {
        LOG.log(System.Logger.Level.INFO, "subscribing to rate limit configuration from " + description());
        reconnects.execute(this::open);
    }

    /** The server and node, as logs may show them. */
    String description() {
        return "the xDS server " + settings.target() + (settings.tls() == null ? "" : " (TLS)") + ", node id '"
                + settings.nodeId() + "'";
    }

    /** Whether a configuration from the server is in force. */
    boolean loaded() {
        return loaded;
    }

    /** What the last response did; empty before the first. */
    Optional<Update> lastUpdate() {
        return Optional.ofNullable(lastUpdate);
    }

    private synchronized void open() {
        if (closed) {
            return;
        }
        Stream stream = new Stream();
        stub.streamAggregatedResources(stream);
        ClientCallStreamObserver<DiscoveryRequest> r = Objects.requireNonNull(stream.requests, "set before start");
        requests = r;
        r.onNext(DiscoveryRequest.newBuilder()
                .setNode(node)
                .setTypeUrl(RateLimitConfigs.TYPE_URL)
                .setVersionInfo(version)
                .build());
    }

    /** Puts one response in force or refuses it, and answers it on {@code stream}. */
    private synchronized void handle(Stream stream, DiscoveryResponse response) {
        if (closed || requests != stream.requests) {
            return;
        }
        failures = 0;
        if (lastLogged != null) {
            LOG.log(System.Logger.Level.INFO, "connected again to " + description());
            lastLogged = null;
        }
        DiscoveryRequest.Builder answer = DiscoveryRequest.newBuilder()
                .setTypeUrl(RateLimitConfigs.TYPE_URL)
                .setResponseNonce(response.getNonce());
        String refusal;
        if (!response.getTypeUrl().equals(RateLimitConfigs.TYPE_URL)) {
            refusal = "a response of type '" + response.getTypeUrl() + "': subscribed to " + RateLimitConfigs.TYPE_URL
                    + " only";
        } else {
            try {
                Policies next = RateLimitConfigs.policies(response.getResourcesList());
                limiter.update(next);
                refusal = null;
            } catch (PolicyException e) {
                refusal = e.getMessage();
            } catch (RuntimeException e) { // a bug: refused too, the configuration in force stays
                LOG.log(System.Logger.Level.WARNING, "xDS version '" + response.getVersionInfo() + "' failed", e);
                refusal = "cannot load: " + e;
            }
        }
        if (refusal == null) {
            version = response.getVersionInfo();
            long inForce = limiter.version();
            LOG.log(
                    System.Logger.Level.INFO,
                    "rate limit policies from xDS version '" + version + "' in force (version " + inForce + "): "
                            + limiter.policies().domains());
            lastUpdate = new Update(Instant.now(), version, true, "version " + inForce + " in force");
            stream.send(answer.setVersionInfo(version).build());
            if (!loaded) {
                loaded = true;
                firstConfig.run();
            }
        } else {
            long inForce = limiter.version();
            limiter.loadFailed();
            String message = "xDS version '" + response.getVersionInfo() + "' refused; "
                    + (version.isEmpty() ? "no configuration yet" : "xDS version '" + version + "' stays in force")
                    + " (policy version " + inForce + "): " + refusal;
            LOG.log(System.Logger.Level.WARNING, message);
            lastUpdate = new Update(Instant.now(), response.getVersionInfo(), false, message);
            String detail =
                    refusal.length() > MAX_ERROR_DETAIL ? refusal.substring(0, MAX_ERROR_DETAIL - 1) + "…" : refusal;
            stream.send(answer.setVersionInfo(version)
                    .setErrorDetail(com.google.rpc.Status.newBuilder()
                            .setCode(Status.Code.INVALID_ARGUMENT.value())
                            .setMessage(detail))
                    .build());
        }
    }

    /** The stream ended: a new one after the backoff. */
    private synchronized void ended(Stream stream, @Nullable Throwable error) {
        if (closed || requests != stream.requests) {
            return;
        }
        requests = null;
        Duration wait = backoff(failures++);
        String what = error == null
                ? "the stream was closed by the server"
                : Status.fromThrowable(error).toString();
        if (!what.equals(lastLogged)) {
            lastLogged = what;
            LOG.log(
                    System.Logger.Level.WARNING,
                    "rate limit configuration from " + description() + ": " + what + "; trying again in "
                            + wait.toMillis() + "ms, then backing off up to "
                            + settings.retryMax().toMillis()
                            + "ms; the configuration in force stays");
        }
        // closed is set under this lock before the executor stops, so it takes the task; open() logs its own trouble
        ScheduledFuture<?> next = reconnects.schedule(this::open, wait.toNanos(), TimeUnit.NANOSECONDS);
        Objects.requireNonNull(next);
    }

    /**
     * The wait before attempt {@code failures + 1}: {@link Settings#retryInterval()} doubled per failure, at most
     * {@link Settings#retryMax()}, then a uniformly drawn part of it from half to all.
     */
    Duration backoff(int failures) {
        long base = settings.retryInterval().toNanos();
        long max = Math.max(base, settings.retryMax().toNanos());
        long wait = max;
        if (failures < 62 && (base << failures) >>> failures == base) {
            wait = Math.min(max, base << failures);
        }
        return Duration.ofNanos(wait / 2 + ThreadLocalRandom.current().nextLong(wait / 2 + 1));
    }

    /** Ends the subscription; the configuration in force stays. Idempotent. */
    @Override
    public void close() {
        ClientCallStreamObserver<DiscoveryRequest> r;
        synchronized (this) {
            closed = true;
            r = requests;
            requests = null;
        }
        reconnects.shutdownNow();
        if (r != null) {
            r.cancel("the service stops", null);
        }
        channel.shutdownNow();
    }

    /** One stream: its responses in, its requests out. */
    private final class Stream implements ClientResponseObserver<DiscoveryRequest, DiscoveryResponse> {
        private @Nullable ClientCallStreamObserver<DiscoveryRequest> requests;

        @Override
        public void beforeStart(ClientCallStreamObserver<DiscoveryRequest> requests) {
            this.requests = requests;
        }

        @Override
        public void onNext(DiscoveryResponse response) {
            handle(this, response);
        }

        @Override
        public void onError(Throwable t) {
            ended(this, t);
        }

        @Override
        public void onCompleted() {
            ended(this, null);
        }

        void send(DiscoveryRequest request) {
            StreamObserver<DiscoveryRequest> r = requests;
            if (r != null) {
                r.onNext(request);
            }
        }
    }

    /**
     * Where and how to subscribe.
     *
     * @param target        the server, {@code host:port} or a gRPC target URI
     * @param nodeId        the node id the server keys its snapshots by
     * @param metadata      the node's metadata, string values
     * @param tls           TLS to the server; null for plaintext
     * @param retryInterval the first wait after a failed stream
     * @param retryMax      the longest wait
     */
    record Settings(
            String target,
            String nodeId,
            Map<String, String> metadata,
            @Nullable Tls tls,
            Duration retryInterval,
            Duration retryMax) {

        /** Checks the arguments and copies the metadata. */
        Settings {
            Objects.requireNonNull(target, "target must not be null");
            Objects.requireNonNull(nodeId, "nodeId must not be null");
            metadata = Map.copyOf(metadata);
        }
    }

    /**
     * TLS to the management server.
     *
     * @param ca         the CA certificates (PEM) that sign the server's; null: the JVM's trusted ones
     * @param cert       this client's certificate chain (PEM), for mutual TLS; null: none
     * @param key        its private key (PEM, PKCS#8)
     * @param serverName the name the server's certificate must carry, if not the target's host
     */
    record Tls(@Nullable Path ca, @Nullable Path cert, @Nullable Path key, @Nullable String serverName) {}

    /**
     * What one response did.
     *
     * @param version  the server's {@code version_info}
     * @param accepted whether it is in force
     * @param message  {@code version 3 in force}, or why it was refused and that the last good one stays
     */
    record Update(Instant time, String version, boolean accepted, String message) {}
}
