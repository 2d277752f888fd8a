package dev.sluice.server;

import dev.sluice.assembly.AssembledStore;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyException;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.policy.PolicyWatcher;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.micrometer.statsd.StatsdMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * One running service: the store, the policy limiter, the watcher of the configuration, and the gRPC and
 * HTTP servers. {@link #close()} stops them in that order reversed: servers first (no new requests), then the watcher,
 * the limiter and the store (a synchronized store flushes its counts as it closes).
 */
final class SluiceServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(SluiceServer.class.getName());
    /** How long the start waits for the store to answer before the service starts unready (or refuses to start). */
    static final Duration WARM_UP_BUDGET = Duration.ofSeconds(5);

    /** The most checks waiting for a thread of the store's pool; past it, the domain's {@code on_store_failure}. */
    static final int STORE_QUEUE = 1024;

    private final AssembledStore store;
    private final PolicyLimiter limiter;
    private final @Nullable PolicyWatcher watcher;
    private final @Nullable XdsSubscription xds;
    /** Whether the configuration is there: at once from files, from its first with an xDS server (or if told so). */
    private volatile boolean xdsArrived;

    private final Server grpc;
    private final GrpcConnections grpcConnections;
    private final ReadTimeout grpcReadTimeout;
    private final ThreadPoolExecutor grpcExecutor;
    private final HttpApi http;
    private final @Nullable DebugApi debug;
    private final @Nullable PrometheusApi prometheusApi;
    private final Duration shutdownDelay;
    private final @Nullable ExecutorService storeExecutor;
    private final Readiness readiness;
    private final @Nullable StatsdMeterRegistry statsd;
    private volatile boolean ready;
    private final boolean storeAnsweredAtStart;

    private SluiceServer(ServeSettings s, Policies policies, AssembledStore store) throws IOException {
        this.store = store;
        PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        this.statsd = s.stats().statsd();
        MeterRegistry registry = prometheus;
        if (statsd != null) {
            CompositeMeterRegistry both = new CompositeMeterRegistry();
            both.add(prometheus);
            both.add(statsd);
            registry = both;
        }
        // envoyproxy/ratelimit's names go to StatsD, the debug port's /stats and, mapped as its Prometheus sink maps
        // them, to the Prometheus listener; not to GET /metrics (Sluice's own names)
        MeterRegistry envoyRegistry = statsd != null ? statsd : new SimpleMeterRegistry();
        Stats.Prometheus promSettings = s.stats().prometheus();
        MappedStats mapped = promSettings == null ? null : new MappedStats(promSettings.mapper());
        EnvoyStats envoyStats =
                s.stats().envoyNames() ? new EnvoyStats(envoyRegistry, s.stats().nearLimitRatio(), mapped) : null;
        ServerMetrics metrics = new ServerMetrics(registry);
        int threads = Math.max(8, 4 * Runtime.getRuntime().availableProcessors());
        AtomicInteger n = new AtomicInteger();
        // Exact and leased mode on a shared store: an answer waits for the store at most the deadline (the store
        // timeout and 2 ms); past it, or with a full queue, the check is answered at once by its domain's
        // on_store_failure. A check is decided on its own thread where that keeps the deadline (a leased slice that
        // covers it, exact mode on Redis); only the store calls that thread cannot bound run on these threads.
        ThreadPoolExecutor storeThreads = store.waits()
                ? new ThreadPoolExecutor(
                        2 * threads,
                        2 * threads,
                        60,
                        TimeUnit.SECONDS,
                        new ArrayBlockingQueue<>(STORE_QUEUE),
                        r -> {
                            Thread t = new Thread(r, "sluice-store-" + n.incrementAndGet());
                            t.setDaemon(true);
                            return t;
                        },
                        new ThreadPoolExecutor.AbortPolicy())
                : null;
        this.storeExecutor = storeThreads;
        PolicyLimiter.Builder limiterBuilder =
                PolicyLimiter.builder(policies).store(store.store()).meterRegistry(registry);
        // every rule as dry run, whatever its mode: the verdicts, so gRPC, /json and the stats, all follow from it
        limiterBuilder.dryRun(s.shadowMode());
        ManualClock manualClock = ManualClock.fromSystemProperty();
        if (manualClock != null) {
            limiterBuilder.clock(manualClock);
        }
        if (storeExecutor != null) {
            limiterBuilder.deadline(s.storeTimeout().plusMillis(2), storeExecutor);
        }
        this.limiter = limiterBuilder.build();
        if (envoyStats != null) {
            MeterRegistry meters = registry;
            // with xDS, the empty configuration the service starts on is no load: envoyproxy/ratelimit counts none
            double empty = s.xds() != null ? 1 : 0;
            envoyStats.configLoads(() -> configLoads(meters, "success") - empty, () -> configLoads(meters, "failure"));
        }
        this.shutdownDelay = s.lifecycle().shutdownDelay();
        this.xdsArrived = s.xds() == null || s.readyWithoutConfig();
        this.readiness = new Readiness(
                store.store(),
                storeExecutor,
                s.storeTimeout().plusMillis(2),
                store.description(),
                () -> xdsArrived
                        && (!s.lifecycle().healthyWithConfig()
                                || !limiter.policies().domains().isEmpty()));
        Path config = s.config();
        this.watcher = config == null
                ? null
                : PolicyWatcher.builder(limiter, config)
                        .interval(s.watchInterval())
                        .allowDomainRemoval(s.allowDomainRemoval())
                        .start();
        try {
            this.xds = s.xds() == null
                    ? null
                    : new XdsSubscription(s.xds(), limiter, () -> {
                        xdsArrived = true;
                        readiness.configChanged();
                    });
        } catch (IOException | RuntimeException e) {
            if (watcher != null) {
                watcher.close();
            }
            throw e;
        }
        RateLimitAdapter adapter = new RateLimitAdapter(limiter, s.headers(), metrics, s.caps(), envoyStats);
        // A call is decided on the transport's event loop (a direct executor) unless its message is large, which
        // this pool decodes and decides instead: a fixed number of threads and a bounded queue, beyond which a call
        // is answered RESOURCE_EXHAUSTED (GrpcService.unary). A check that must reach the store leaves its thread
        // while the store answers (PolicyLimiter.checkAsync), so no thread waits: as many checks are in flight, and
        // in one batch of the store's, as callers send.
        this.grpcExecutor = new ThreadPoolExecutor(
                threads,
                threads,
                60,
                TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(s.grpc().maxQueue()),
                r -> {
                    Thread t = new Thread(r, "sluice-grpc-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                },
                new ThreadPoolExecutor.AbortPolicy());
        TransportLog.install();
        InetSocketAddress grpcAddress = new InetSocketAddress(s.bind(), s.grpcPort());
        this.grpcConnections = new GrpcConnections(s.grpc().maxConnections());
        this.grpcReadTimeout = new ReadTimeout(s.grpc().readTimeout());
        OpenCalls openCalls = new OpenCalls(s.grpc().maxCalls(), metrics);
        metrics.bound("grpc_calls", openCalls::open, s.grpc().maxCalls());
        metrics.bound("grpc_connections", grpcConnections::open, s.grpc().maxConnections());
        metrics.bound(
                "grpc_queue", () -> grpcExecutor.getQueue().size(), s.grpc().maxQueue());
        if (storeThreads != null) {
            metrics.bound("store_queue", () -> storeThreads.getQueue().size(), STORE_QUEUE);
        }
        NettyServerBuilder grpcBuilder = grpcConnections
                .configure(NettyServerBuilder.forAddress(grpcAddress))
                .intercept(grpcReadTimeout) // every call, before the bound on open calls counts it
                .addService(ServerInterceptors.intercept(
                        new GrpcService(adapter, metrics, grpcExecutor).definition(), openCalls))
                .addService(readiness.grpcService())
                .directExecutor()
                .maxInboundMessageSize(HttpApi.MAX_BODY)
                .maxConcurrentCallsPerConnection(s.grpc().maxStreams())
                .maxConnectionIdle(s.grpc().idleTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .keepAliveTime(s.grpc().keepAliveTime().toMillis(), TimeUnit.MILLISECONDS)
                .keepAliveTimeout(s.grpc().keepAliveTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .permitKeepAliveTime(GrpcLimits.MIN_CLIENT_PING_INTERVAL.toMillis(), TimeUnit.MILLISECONDS)
                .permitKeepAliveWithoutCalls(true);
        if (s.grpc().maxResets() > 0) {
            grpcBuilder.maxRstFramesPerWindow(s.grpc().maxResets(), GrpcLimits.RESET_WINDOW_SECONDS);
        }
        if (s.grpc().maxConnectionAge() != null) {
            grpcBuilder.maxConnectionAge(s.grpc().maxConnectionAge().toMillis(), TimeUnit.MILLISECONDS);
        }
        if (s.grpc().maxConnectionAgeGrace() != null) {
            grpcBuilder.maxConnectionAgeGrace(s.grpc().maxConnectionAgeGrace().toMillis(), TimeUnit.MILLISECONDS);
        }
        if (s.grpcTls() != null) {
            grpcBuilder.sslContext(s.grpcTls());
        }
        if (s.benchBare()) {
            grpcBuilder.addService(BareEndpoint.grpcService(grpcExecutor));
        }
        try {
            this.grpc = grpcBuilder.build().start();
        } catch (IOException e) {
            abandon();
            throw cannotListen(grpcAddress, "grpc-port", e);
        }
        InetSocketAddress httpAddress = new InetSocketAddress(s.bind(), s.httpPort());
        try {
            this.http = new HttpApi(
                    httpAddress,
                    new HttpApi.Limits(threads, s.httpReadTimeout(), s.httpIdleTimeout()),
                    adapter,
                    limiter,
                    prometheus,
                    metrics,
                    this::health,
                    s.adminToken(),
                    this::reload,
                    s.benchBare(),
                    manualClock);
            metrics.bound("http_waiting", http::waiting, HttpApi.MAX_WAITING);
        } catch (IOException e) {
            grpc.shutdownNow();
            abandon();
            throw cannotListen(httpAddress, "http-port", e);
        }
        int debugPort = s.lifecycle().debugPort();
        InetSocketAddress debugAddress = new InetSocketAddress(s.bind(), Math.max(0, debugPort));
        try {
            this.debug = debugPort < 0
                    ? null
                    : new DebugApi(
                            debugAddress,
                            limiter,
                            prometheus,
                            envoyStats == null ? List.of(prometheus) : List.of(prometheus, envoyRegistry),
                            metrics,
                            s.adminToken());
        } catch (IOException e) {
            grpc.shutdownNow();
            http.close();
            abandon();
            throw cannotListen(debugAddress, "debug-port", e);
        }
        InetSocketAddress promAddress = null;
        if (promSettings != null) {
            java.net.InetAddress promHost = promSettings.host();
            promAddress = new InetSocketAddress(promHost == null ? s.bind() : promHost, promSettings.port());
        }
        try {
            this.prometheusApi = promSettings == null || mapped == null || promAddress == null
                    ? null
                    : new PrometheusApi(promAddress, promSettings.path(), limiter, prometheus, mapped, metrics);
        } catch (IOException e) {
            grpc.shutdownNow();
            http.close();
            if (debug != null) {
                debug.close();
            }
            abandon();
            throw cannotListen(promAddress, "prometheus-addr", e);
        }
        metrics.refreshLimits(limiter);
        this.ready = true;
        if (storeExecutor instanceof ThreadPoolExecutor pool) {
            pool.prestartAllCoreThreads();
        }
        if (xds != null) {
            xds.start();
        }
        this.storeAnsweredAtStart = readiness.warmUp(WARM_UP_BUDGET);
    }

    /**
     * Starts the service.
     *
     * @throws PolicyException if the configuration does not load
     * @throws IOException     if a port cannot be bound
     */
    static SluiceServer start(ServeSettings s) throws IOException {
        Policies policies = s.xds() != null
                ? Policies.empty() // until the xDS server's first configuration
                : s.config() == null ? BuiltIn.policies() : Policies.load(s.config());
        AssembledStore store = Stores.open(
                s.store(),
                s.sharing(),
                s.storeTimeout(),
                s.memoryMaxKeys(),
                s.overLimitCache(),
                s.storePassword(),
                s.storePasswordFile());
        try {
            return new SluiceServer(s, policies, store);
        } catch (IOException | RuntimeException e) {
            store.close();
            throw e;
        }
    }

    int grpcPort() {
        return grpc.getPort();
    }

    int httpPort() {
        return http.port();
    }

    /** The debug port's number, or -1 if it is off. */
    int debugPort() {
        return debug == null ? -1 : debug.port();
    }

    /** The Prometheus listener's address, or null if it is off. */
    @Nullable
    String prometheusAddress() {
        PrometheusApi p = prometheusApi;
        return p == null ? null : p.address();
    }

    /** The total of the policy limiter's {@code sluice.policy.config.loads} of {@code result}. */
    private static double configLoads(MeterRegistry registry, String result) {
        var c = registry.find("sluice.policy.config.loads")
                .tag("result", result)
                .counter();
        return c == null ? 0 : c.count();
    }

    PolicyLimiter limiter() {
        return limiter;
    }

    /** The store, its URI without secrets, and its mode: what may be printed. */
    String storeDescription() {
        return store.description();
    }

    /**
     * Ready when {@link Readiness} says so (the store path answers, and the stop has not begun), as the gRPC health
     * service is. A configuration that the watcher cannot load does not make the service unready (the last good one
     * still decides, and every instance would leave rotation at once); the answer says so, with the first error.
     */
    private HttpApi.Health health() {
        XdsSubscription xds = this.xds;
        if (!readiness.serving()) {
            return new HttpApi.Health(
                    false,
                    xds != null && !xds.loaded()
                            ? "not ready: no configuration yet from " + xds.description()
                            : storeAnsweredAtStart
                                            && limiter.policies().domains().isEmpty()
                                    ? "not ready: no domain loaded (--healthy-with-config)"
                                    : "not ready");
        }
        if (xds != null) {
            XdsSubscription.Update u = xds.lastUpdate().orElse(null);
            return u == null || u.accepted()
                    ? new HttpApi.Health(true, "OK")
                    : new HttpApi.Health(true, "OK\nbut " + firstLines(u.message()) + "\n(since " + u.time() + ")");
        }
        PolicyWatcher.Reload last =
                watcher == null ? null : watcher.lastReload().orElse(null);
        if (last == null || last.succeeded()) {
            return new HttpApi.Health(true, "OK");
        }
        return new HttpApi.Health(
                true,
                "OK\nbut the configuration in " + last.source() + " cannot be loaded since " + last.time() + ": "
                        + firstLines(last.message()));
    }

    /** The first two lines of a refusal, and an ellipsis if there are more. */
    private static String firstLines(String message) {
        String[] lines = message.split("\n", 3);
        return lines[0] + (lines.length > 1 ? "\n" + lines[1] : "") + (lines.length > 2 ? "\n  …" : "");
    }

    /** Whether the store answered the probes made as the service started. */
    boolean storeAnsweredAtStart() {
        return storeAnsweredAtStart;
    }

    /** Whether the service can decide: what {@code /healthcheck} and the gRPC health service say. */
    boolean serving() {
        return readiness.serving();
    }

    /** The xDS server the configuration comes from, as logs may name it; null when it comes from files. */
    @Nullable
    String xdsDescription() {
        return xds == null ? null : xds.description();
    }

    /** Whether the configuration comes from an xDS server, whose first has not arrived yet. */
    boolean awaitingConfig() {
        return xds != null && !xds.loaded();
    }

    private HttpApi.ReloadResult reload() {
        if (xds != null) {
            return new HttpApi.ReloadResult(
                    false, "nothing to reload: the configuration comes from " + xds.description() + " as it changes");
        }
        if (watcher == null) {
            return new HttpApi.ReloadResult(false, "nothing to reload: the service runs the built-in example");
        }
        PolicyWatcher.Reload r = watcher.reloadNow();
        return new HttpApi.ReloadResult(
                r.succeeded(), r.succeeded() ? "reloaded " + r.source() + ", " + r.message() : r.message());
    }

    /**
     * Stops serving, then closes the watcher, the limiter and the store. Idempotent. Health turns NOT_SERVING first;
     * the service then keeps answering for the shutdown delay ({@code --shutdown-delay}), so that load balancers
     * that follow health take it out of rotation before its ports close; then the servers stop gracefully, answering
     * the requests under way.
     */
    @Override
    public synchronized void close() {
        if (!ready && grpc.isShutdown()) {
            return;
        }
        ready = false;
        readiness.stop();
        if (!shutdownDelay.isZero()) {
            try {
                Thread.sleep(shutdownDelay.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        grpc.shutdown();
        http.close();
        if (debug != null) {
            debug.close();
        }
        if (prometheusApi != null) {
            prometheusApi.close();
        }
        try {
            if (!grpc.awaitTermination(5, TimeUnit.SECONDS)) {
                grpc.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            grpc.shutdownNow();
        }
        stopExecutors();
        if (watcher != null) {
            watcher.close();
        }
        if (xds != null) {
            xds.close();
        }
        readiness.close();
        limiter.close();
        if (statsd != null) {
            statsd.close(); // flushes what is buffered
        }
        try {
            store.close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "closing the store failed", e);
        }
    }

    /** Undoes a start that failed: stops what the constructor had started before the servers. */
    private void abandon() {
        stopExecutors();
        if (watcher != null) {
            watcher.close();
        }
        if (xds != null) {
            xds.close();
        }
        limiter.close();
    }

    private void stopExecutors() {
        grpcExecutor.shutdown();
        grpcReadTimeout.close();
        grpcConnections.close();
        if (storeExecutor != null) {
            storeExecutor.shutdown();
        }
    }

    /** A port that cannot be bound, named with its option, so that the operator knows which to change. */
    private static IOException cannotListen(InetSocketAddress address, String option, IOException e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        String port = String.valueOf(address.getPort());
        return new IOException(
                "cannot listen on " + address.getAddress().getHostAddress() + ":" + port + " (--" + option + " " + port
                        + ", --bind " + address.getAddress().getHostAddress() + "): " + cause.getMessage(),
                e);
    }

    /**
     * The options of {@code serve}; {@code storePassword} and {@code storePasswordFile}: the store's password apart
     * from its URI; {@code benchBare}: also serve the {@link BareEndpoint}s; {@code allowDomainRemoval}:
     * a change of the configuration that removes a domain is put in force, not refused; {@code shadowMode}: every
     * rule runs as {@code mode: dry_run} (envoyproxy/ratelimit's {@code SHADOW_MODE}); {@code xds}: the configuration
     * comes from an xDS server instead of {@code config}; {@code readyWithoutConfig}: ready before its first;
     * {@code overLimitCache}: the entries of exact mode's over-limit cache, 0 for none.
     */
    record ServeSettings(
            @Nullable Path config,
            String store,
            Stores.Sharing sharing,
            Duration storeTimeout,
            @Nullable String storePassword,
            @Nullable Path storePasswordFile,
            java.net.InetAddress bind,
            int httpPort,
            int grpcPort,
            Duration httpReadTimeout,
            Duration httpIdleTimeout,
            HeaderStyle headers,
            Duration watchInterval,
            @Nullable String adminToken,
            boolean benchBare,
            boolean allowDomainRemoval,
            boolean shadowMode,
            GrpcLimits grpc,
            @Nullable SslContext grpcTls,
            RequestCaps caps,
            int memoryMaxKeys,
            int overLimitCache,
            Lifecycle lifecycle,
            XdsSubscription.@Nullable Settings xds,
            boolean readyWithoutConfig,
            Stats stats) {}

    /**
     * How the service starts, reports and stops.
     *
     * @param healthyWithConfig unready until the configuration has a domain (envoyproxy/ratelimit's
     *                          {@code HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED})
     * @param shutdownDelay     from SIGTERM, how long the service keeps answering with its health NOT_SERVING before
     *                          its graceful stop
     * @param debugPort         the debug port ({@link DebugApi}); 0 any free port; -1 none
     */
    record Lifecycle(boolean healthyWithConfig, Duration shutdownDelay, int debugPort) {
        static final Lifecycle DEFAULTS = new Lifecycle(false, Duration.ZERO, -1);
    }

    /**
     * The gRPC server's bounds.
     *
     * @param maxStreams concurrent calls (HTTP/2 streams) on one connection, sent to the client as
     *                   {@code SETTINGS_MAX_CONCURRENT_STREAMS}; a stream past it is refused ({@code REFUSED_STREAM})
     * @param maxQueue   calls waiting for a thread when every thread is deciding one; a call past it is answered
     *                   {@code RESOURCE_EXHAUSTED}
     * @param maxCalls   calls open at once over every connection, from their headers to their end, whatever they wait
     *                   for; a call past it is answered {@code RESOURCE_EXHAUSTED} before its message is read
     *                   ({@link OpenCalls})
     * @param maxConnections connections open at once; one past it is closed as soon as it is accepted
     *                       ({@link GrpcConnections})
     * @param maxResets  {@code RST_STREAM} frames one connection may send in {@link #RESET_WINDOW_SECONDS}; past it
     *                   the connection is closed ({@code GOAWAY ENHANCE_YOUR_CALM}); 0: no limit
     * @param maxConnectionAge      how long a connection may live before the server sends it GOAWAY (the client
     *                              reconnects, to this instance or another); null: no bound
     * @param maxConnectionAgeGrace how long the calls under way on a connection past its age may take before it is
     *                              closed; null: no bound
     * @param idleTimeout      how long a connection may stay open with no call before it is sent GOAWAY
     * @param keepAliveTime    how long a connection may be silent before the server pings it
     * @param keepAliveTimeout how long the server then waits for the ping's answer before it closes the connection,
     *                         and the calls a vanished client left open with it
     * @param readTimeout      how long a call's request may take to arrive in full from its headers; then the call is
     *                         ended {@code DEADLINE_EXCEEDED} and releases what it held ({@link ReadTimeout})
     */
    record GrpcLimits(
            int maxStreams,
            int maxQueue,
            int maxCalls,
            int maxConnections,
            int maxResets,
            @Nullable Duration maxConnectionAge,
            @Nullable Duration maxConnectionAgeGrace,
            Duration idleTimeout,
            Duration keepAliveTime,
            Duration keepAliveTimeout,
            Duration readTimeout) {
        static final int RESET_WINDOW_SECONDS = 10;

        /**
         * The shortest interval between a client's keep-alive pings, with or without calls open: a client pinging
         * more often is sent {@code GOAWAY ENHANCE_YOUR_CALM}, as grpc-java does past its default of 5 minutes, which
         * Envoy's and grpc-go's usual keep-alive settings would break.
         */
        static final Duration MIN_CLIENT_PING_INTERVAL = Duration.ofSeconds(10);

        static final GrpcLimits DEFAULTS = new GrpcLimits(
                100,
                1000,
                10_000,
                GrpcConnections.defaultMax(100),
                10_000,
                null,
                null,
                Duration.ofMinutes(5),
                Duration.ofMinutes(1),
                Duration.ofSeconds(20),
                Duration.ofSeconds(10));
    }

    static UncheckedIOException unchecked(IOException e) {
        return new UncheckedIOException(e);
    }
}
