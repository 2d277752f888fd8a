package dev.sluice.server;

import dev.sluice.assembly.StoreAssembly;
import dev.sluice.policy.PolicyException;
import dev.sluice.spi.Durations;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Level;
import org.jspecify.annotations.Nullable;

/** {@code serve}: runs the service until SIGTERM or SIGINT, then shuts down gracefully. */
final class ServeCommand {
    static final String HELP =
            """
            Usage: java -jar sluice-server.jar serve [options]

            Runs the rate limit service: Envoy's gRPC RateLimitService/ShouldRateLimit, and over HTTP
            POST /json, GET /healthcheck, GET /metrics, GET /rlconfig, POST /reload and the dashboard at /.

            Options:
              --config PATH           a YAML file, or a directory of them (one domain each), watched and reloaded
                                      on change (Kubernetes ConfigMap mounts included); a change that does not load
                                      is refused and the last good configuration stays in force; default: the
                                      built-in OAuth example (domain oauth-token)
              --xds-server HOST:PORT  take the configuration from an xDS management server instead of --config, as
                                      envoyproxy/ratelimit's CONFIG_TYPE=GRPC_XDS_SOTW does: a state-of-the-world
                                      ADS subscription to ratelimit.config.ratelimit.v3.RateLimitConfig, one
                                      resource per domain; each update validated as a file is and put in force
                                      whole, a bad one NACKed and the last good one kept; not ready (health
                                      NOT_SERVING) until the first arrives
              --xds-node-id ID        the node id the server keys its snapshots by; default 'default'
              --xds-node-metadata K=V[,K=V…]
                                      the node's metadata (string values)
              --xds-tls               TLS to the xDS server, trusting the JVM's CAs unless --xds-tls-ca is given
              --xds-tls-ca PATH       the CA certificates (PEM) the server's certificate is checked against
              --xds-tls-cert PATH     this client's certificate (PEM), for mutual TLS; with --xds-tls-key
              --xds-tls-key PATH      its private key (PEM, PKCS#8)
              --xds-tls-san NAME      the name the server's certificate must carry, if not the host of --xds-server
                                      (each --xds-tls-* option turns TLS on)
              --xds-retry-interval D  the first wait before a new stream when the last failed or ended; doubled
                                      after each failure, with jitter; default 3s
              --xds-retry-max D       the longest wait between two streams; default 60s
              --xds-ready-without-config
                                      ready before the xDS server's first configuration (no domain: every request
                                      allowed); without it the service is not ready until one is in force
              --allow-domain-removal  put in force a change that removes a domain (its file deleted, the directory
                                      emptied); without it such a change is refused and the domain's limits stay
              --store URI             memory: (default), redis://host:port[/db], rediss://…, redis-cluster://host:port,
                                      redis-sentinel://host:port[,host:port…]#master,
                                      postgresql://user:password@host:port/database, mongodb://host:port/database;
                                      printed with its password as ***; rediss://…?tlsCa=FILE&tlsCert=FILE&
                                      tlsKey=FILE&verifyPeer=CA: Redis's CA, a client certificate and its key
                                      (PEM), no host name check (docs/stores.md#tls)
              --store-password-file PATH
                                      the store's password, read from a file (a mounted Kubernetes secret) instead
                                      of the URI; or set SLUICE_STORE_PASSWORD in the environment
              --store-mode M          exact (default: every decision is one call to the store), synchronized
                                      (decide locally, counts flushed every --store-interval; the instances together
                                      may pass a limit by what the others admit in one interval) or leased (decide
                                      locally within slices of each limit claimed from the store, a round every
                                      --store-interval; never over the limit but by a domain's on_store_failure:
                                      allow, when a claim fails or misses its deadline); synchronized and leased need
                                      a shared store and keep fixed_window, sliding_window_counter and sliding_tail
                                      limits only
              --store-interval D      the interval of synchronized and leased mode's rounds; default 100ms
              --sync-interval D       deprecated: --store-mode synchronized --store-interval D
              --lease-interval D      deprecated: --store-mode leased --store-interval D
              --store-timeout D       how long a store call may take before the domain's on_store_failure answers;
                                      default 15ms (Envoy's rate limit filter waits 20ms)
              --http-port N           default 8080; 0 for any free port (HTTP/1.1, and HTTP/2 over cleartext)
              --grpc-port N           default 8081; 0 for any free port
              --bind ADDRESS          default 127.0.0.1; 0.0.0.0 for every interface
              --http-read-timeout D   how long an HTTP request may take to arrive in full, from its first byte;
                                      default 10s (then 408 and the connection is closed; over HTTP/2, from its
                                      headers, and only that stream is answered 408)
              --http-idle-timeout D   how long an HTTP connection may stay open with no request; default 60s
              --response-headers S    off (default), draft03 (RateLimit-Limit, -Remaining, -Reset) or draft10
                                      (RateLimit-Policy and RateLimit): headers for Envoy to add to the response
              --watch-interval D      the longest time between two checks of --config; default 5s
              --memory-max-keys N     the in-memory store's bound on keys per limit; at the bound a new key is
                                      refused (OVER_LIMIT), never let through; default one per KiB of the
                                      maximum heap (-Xmx), at most 1000000
              --over-limit-cache N    exact mode on a shared store: keep up to N of the store's refusals (about
                                      256 bytes each) and refuse a key over its limit from them, without a store
                                      call, until the instant the store said a request could pass; exact (never
                                      admits what the store would refuse); default 0, none; no effect on memory:
                                      or in synchronized and leased mode, which decide locally already
              --max-descriptors N     descriptors in one request; default 64
              --max-entries N         entries in one descriptor; default 16
              --max-key-bytes N       UTF-8 bytes in the domain and in each key; default 256
              --max-value-bytes N     UTF-8 bytes in each value; default 1024
                                      (a request over a cap: INVALID_ARGUMENT, HTTP 400, naming the cap)
              --grpc-max-streams N    concurrent gRPC calls on one connection (HTTP/2 max concurrent streams);
                                      default 100
              --grpc-max-queue N      gRPC calls with a message over 16KiB waiting for a thread when all are
                                      busy (smaller ones are decided on the event loop); beyond it such a call
                                      is answered RESOURCE_EXHAUSTED at once; default 1000
              --grpc-max-calls N      gRPC calls open at once over all connections, from their headers to their
                                      answer (a call whose message has not arrived included); beyond it a call is
                                      answered RESOURCE_EXHAUSTED at once; default 10000
              --grpc-max-connections N
                                      gRPC connections open at once; one past it is closed as soon as it is
                                      accepted; default one per --grpc-max-streams x 2KiB of half the maximum heap
                                      (640 at -Xmx256m), at least 16: what a client holding every stream may cost
              --grpc-read-timeout D   how long a gRPC call's request may take to arrive in full from its headers;
                                      then the call is ended DEADLINE_EXCEEDED and its place among
                                      --grpc-max-calls given back; from 100ms to 1h; default 10s
              --grpc-idle-timeout D   how long a gRPC connection may stay open with no call before it is sent
                                      GOAWAY (its client reconnects when it next needs to); at least 1s; default 5m
              --grpc-keepalive-time D
                                      how long a gRPC connection may be silent before the service pings it;
                                      at least 10s; default 1m
              --grpc-keepalive-timeout D
                                      how long the service then waits for the ping's answer before it closes the
                                      connection and the calls on it (a client gone without a word); default 20s
                                      (a client may ping every 10s, with or without calls; more often: GOAWAY)
              --grpc-max-resets N     RST_STREAM frames one connection may send in 10s before it is closed with
                                      GOAWAY; default 10000; 0: no limit
              --grpc-max-connection-age D
                                      how long a gRPC connection may live before it is sent GOAWAY (its client
                                      reconnects, spreading over the instances); default no bound
              --grpc-max-connection-age-grace D
                                      how long the calls under way may then take before the connection is closed;
                                      default no bound
              --grpc-tls-cert FILE    serve gRPC over TLS only, with this PEM certificate chain
              --grpc-tls-key FILE     and this unencrypted PEM private key (PKCS#8)
              --grpc-tls-ca FILE      mutual TLS: every gRPC client must present a certificate signed by a CA of this
                                      PEM file
              --require-store         exit with an error (status 3) if the store does not answer at start; without
                                      it the service starts unready (health NOT_SERVING) and turns ready once the
                                      store answers
              --debug-port N          a debug port (envoyproxy/ratelimit's 6070) serving /rlconfig (with the admin
                                      token), /stats and /metrics; default none; 0 for any free port
              --healthy-with-config   unready (health NOT_SERVING) until the configuration has a domain
              --shutdown-delay D      from SIGTERM, keep answering for D with health NOT_SERVING, then stop
                                      gracefully (the requests under way are answered); default 0s
              --statsd HOST:PORT      also send every meter to a StatsD agent over UDP (Micrometer's StatsD registry)
              --statsd-flavor F       etsy (default: plain dotted names) or datadog (tags)
              --statsd-interval D     how often gauges are sent and buffered lines flushed; default 10s
              --envoy-stats           also count envoyproxy/ratelimit's stats under its names, for its dashboards:
                                      ratelimit.service.rate_limit.DOMAIN.KEY_VALUE.{total_hits,over_limit,
                                      near_limit,within_limit,shadow_mode} and the service's; sent to StatsD and
                                      listed on the debug port's /stats, not on /metrics
              --prometheus-addr [HOST]:PORT
                                      a Prometheus listener, as envoyproxy/ratelimit's USE_PROMETHEUS: Sluice's
                                      meters (as GET /metrics) and envoyproxy/ratelimit's stats named as its
                                      Prometheus sink names them (ratelimit_service_rate_limit_total_hits{domain,
                                      key1,key2}, …; turns --envoy-stats on); HOST defaults to --bind's
              --prometheus-path PATH  the path it answers on; default /metrics
              --prometheus-mapper FILE
                                      a statsd_exporter mapping for those names instead of envoyproxy/ratelimit's
                                      default one (the subset docs/envoy-ratelimit.md lists; anything else is
                                      refused with its file:line); a FILE that does not exist: a warning, and the
                                      default mapping
              --prometheus-response-time-ms
                                      the default mapping's response time histogram in milliseconds, not seconds
              --shadow-mode           every rule of every domain runs as mode: dry_run, as envoyproxy/ratelimit's
                                      SHADOW_MODE=true: nothing is refused (gRPC and /json answer OK), what would be
                                      is counted (sluice.policy.requests outcome=would_deny; over_limit and
                                      shadow_mode with --envoy-stats); for a configuration's first rollout
              --near-limit-ratio R    the share of a limit past which allowed hits count as near_limit; default 0.8
              --log-level L           trace, debug, info (default), warn, error: the log's level (standard error)
              --log-format F          text (default) or json: one JSON object a line, with envoyproxy/ratelimit's
                                      keys (@timestamp, level, @message), the lines printed on start included
              --bench-bare            a benchmarking aid, not for production: also answer OK, with no rate-limit
                                      work, on POST /bench/bare and gRPC sluice.bench.Bare/ShouldRateLimit, to
                                      compare the service with its bare server stack (see the load command)

            Admin endpoints (/rlconfig, /reload) need 'Authorization: Bearer $SLUICE_ADMIN_TOKEN'; without
            SLUICE_ADMIN_TOKEN in the environment they are off.
            envoyproxy/ratelimit's environment variables (PORT, GRPC_PORT, REDIS_URL, RUNTIME_ROOT, …) are read as
            these options, a flag on the command line winning; one Sluice does not support stops the start with a
            message naming it (docs/envoy-ratelimit.md lists every one).
            On start it prints 'sluice: grpc listening on ADDRESS:PORT' and 'sluice: http listening on ADDRESS:PORT'
            (and 'sluice: prometheus listening on ADDRESS:PORT/PATH (MAPPING)' with --prometheus-addr).
            """;

    static final Set<String> FLAGS = Set.of(
            "help",
            "bench-bare",
            "allow-domain-removal",
            "require-store",
            "healthy-with-config",
            "shadow-mode",
            "envoy-stats",
            "prometheus-response-time-ms",
            "xds-tls",
            "xds-ready-without-config");
    static final Set<String> VALUED = Set.of(
            "config",
            "store",
            "store-password-file",
            "store-mode",
            "store-interval",
            "sync-interval",
            "lease-interval",
            "store-timeout",
            "http-port",
            "grpc-port",
            "bind",
            "http-read-timeout",
            "http-idle-timeout",
            "response-headers",
            "watch-interval",
            "memory-max-keys",
            "over-limit-cache",
            "max-descriptors",
            "max-entries",
            "max-key-bytes",
            "max-value-bytes",
            "grpc-max-streams",
            "grpc-max-queue",
            "grpc-max-calls",
            "grpc-max-connections",
            "grpc-max-resets",
            "grpc-idle-timeout",
            "grpc-read-timeout",
            "grpc-keepalive-time",
            "grpc-keepalive-timeout",
            "grpc-max-connection-age",
            "grpc-max-connection-age-grace",
            "grpc-tls-cert",
            "grpc-tls-key",
            "grpc-tls-ca",
            "log-level",
            "log-format",
            "debug-port",
            "statsd",
            "statsd-flavor",
            "statsd-interval",
            "prometheus-addr",
            "prometheus-path",
            "prometheus-mapper",
            "near-limit-ratio",
            "shutdown-delay",
            "xds-server",
            "xds-node-id",
            "xds-node-metadata",
            "xds-tls-ca",
            "xds-tls-cert",
            "xds-tls-key",
            "xds-tls-san",
            "xds-retry-interval",
            "xds-retry-max");

    /**
     * The in-memory store's bound on keys per limit unless {@code --memory-max-keys} sets another: one per KiB of the
     * heap's maximum, at most a million (262,144 at {@code -Xmx256m}). A key of the service costs a few hundred bytes,
     * so the keys of a few limits at their bound fit in the heap with room to spare.
     */
    static int defaultMemoryMaxKeys() {
        return (int) Math.min(1_000_000, Math.max(1024, Runtime.getRuntime().maxMemory() >> 10));
    }

    /** The environment variable that may hold the store's password, so that it is not on the command line. */
    static final String STORE_PASSWORD_VARIABLE = "SLUICE_STORE_PASSWORD";

    private ServeCommand() {}

    /**
     * The store's password given apart from its URI: {@code SLUICE_STORE_PASSWORD}, else {@code REDIS_AUTH}'s when
     * the store is the one {@code REDIS_URL} names (no {@code --store} on the command line).
     */
    private static @Nullable String storePassword(
            Map<String, String> env, Options commandLine, EnvSettings.Result fromEnv) {
        String p = env.get(STORE_PASSWORD_VARIABLE);
        if (p != null && !p.isEmpty()) {
            return p;
        }
        return commandLine.string("store") == null ? fromEnv.storePassword() : null;
    }

    private static @Nullable Path passwordFile(Options o) {
        String file = o.string("store-password-file");
        if (file == null) {
            return null;
        }
        Path p = Path.of(file);
        if (!Files.isReadable(p)) {
            throw o.bad("store-password-file", file, "a readable file holding the store's password");
        }
        return p;
    }

    static int run(List<String> args, PrintStream out, PrintStream err) {
        return run(args, System.getenv(), out, err);
    }

    /** Runs {@code serve} with {@code args} over the options {@code env} asks for ({@link EnvSettings}). */
    static int run(List<String> args, Map<String, String> env, PrintStream stdout, PrintStream stderr) {
        Options commandLine = Options.parse("serve", args, VALUED, FLAGS);
        if (commandLine.flag("help")) {
            stdout.print(HELP);
            return 0;
        }
        EnvSettings.Result fromEnv = EnvSettings.read(env);
        List<String> all = new ArrayList<>(fromEnv.args());
        all.addAll(args);
        Options o = Options.parse("serve", all, VALUED, FLAGS);
        Level level = Logging.level(o);
        Logging.Format format = Logging.format(o);
        boolean json = format == Logging.Format.JSON;
        PrintStream out = json ? Logging.jsonLines(stdout, "info") : stdout;
        PrintStream err = json ? Logging.jsonLines(stderr, "warning") : stderr;
        if (o.string("log-level") != null || format == Logging.Format.JSON) {
            Logging.configure(level, format);
        }
        for (String notice : fromEnv.notices()) {
            err.println("sluice: " + notice);
        }
        if (!o.operands().isEmpty()) {
            throw new UsageException(
                    "serve: unexpected argument '" + o.operands().get(0) + "'");
        }
        String configOption = o.string("config");
        Path config = null;
        if (configOption != null) {
            config = Path.of(configOption);
            if (!Files.exists(config)) {
                throw o.bad("config", configOption, "an existing file or directory");
            }
        }
        Duration storeTimeout = o.duration("store-timeout");
        Duration watch = o.duration("watch-interval");
        Duration httpRead = o.duration("http-read-timeout");
        Duration httpIdle = o.duration("http-idle-timeout");
        SslContext grpcTls;
        try {
            grpcTls = GrpcTls.fromOptions(o);
        } catch (IOException e) {
            err.println("sluice: cannot start: " + e.getMessage());
            return 3;
        }
        SluiceServer.ServeSettings settings = new SluiceServer.ServeSettings(
                config,
                o.string("store", "memory:"),
                Stores.Sharing.parse(o, err),
                storeTimeout == null ? Duration.ofMillis(15) : storeTimeout,
                storePassword(env, commandLine, fromEnv),
                passwordFile(o),
                o.address("bind", "127.0.0.1"),
                o.port("http-port", 8080),
                o.port("grpc-port", 8081),
                httpRead == null ? Duration.ofSeconds(10) : httpRead,
                httpIdle == null ? Duration.ofSeconds(60) : httpIdle,
                HeaderStyle.parse(o),
                watch == null ? Duration.ofSeconds(5) : watch,
                env.get("SLUICE_ADMIN_TOKEN"),
                o.flag("bench-bare"),
                o.flag("allow-domain-removal"),
                o.flag("shadow-mode"),
                grpcLimits(o),
                grpcTls,
                requestCaps(o),
                o.intBetween("memory-max-keys", defaultMemoryMaxKeys(), 1, Integer.MAX_VALUE),
                o.intBetween("over-limit-cache", 0, 0, Integer.MAX_VALUE),
                lifecycle(o),
                xds(o),
                o.flag("xds-ready-without-config"),
                Stats.of(o));

        Stats.Prometheus prometheus = settings.stats().prometheus();
        if (prometheus != null) {
            for (String notice : prometheus.notices()) {
                err.println("sluice: " + notice);
            }
        }
        SluiceServer server;
        try {
            server = SluiceServer.start(settings);
        } catch (PolicyException e) {
            for (var error : e.errors()) {
                err.println(error);
            }
            err.println("sluice: the configuration has " + e.errors().size() + " error(s); not started");
            return 1;
        } catch (IOException e) {
            err.println("sluice: cannot start: " + e.getMessage());
            return 3;
        }
        if (!server.storeAnsweredAtStart()) {
            String store = server.storeDescription();
            if (o.flag("require-store")) {
                server.close();
                err.println("sluice: cannot start: the store " + store + " did not answer within "
                        + SluiceServer.WARM_UP_BUDGET.toSeconds() + "s (--require-store)");
                return 3;
            }
            err.println("sluice: the store " + store + " did not answer within "
                    + SluiceServer.WARM_UP_BUDGET.toSeconds() + "s: starting unready (/healthcheck 500, gRPC health"
                    + " NOT_SERVING) until it answers; --require-store exits instead");
        }
        String host = settings.bind().getHostAddress();
        out.println("sluice: version " + Main.version() + ", Java " + System.getProperty("java.version"));
        out.println("sluice: grpc listening on " + host + ":" + server.grpcPort());
        out.println("sluice: http listening on " + host + ":" + server.httpPort());
        if (server.debugPort() >= 0) {
            out.println("sluice: debug listening on " + host + ":" + server.debugPort());
        }
        String prometheusAddress = server.prometheusAddress();
        if (prometheus != null && prometheusAddress != null) {
            out.println("sluice: prometheus listening on " + prometheusAddress + " ("
                    + prometheus.mapper().source() + ")");
        }
        String xds = server.xdsDescription();
        if (xds != null) {
            out.println("sluice: serving the configuration of " + xds + " on " + server.storeDescription()
                    + (server.awaitingConfig()
                            ? ", not ready until its first"
                                    + (settings.readyWithoutConfig() ? " (ready now: --xds-ready-without-config)" : "")
                            : ""));
        } else {
            out.println("sluice: serving " + server.limiter().policies().domains() + " from "
                    + (config == null ? "the built-in example" : config) + " on " + server.storeDescription());
        }
        if (settings.shadowMode()) {
            out.println("sluice: shadow mode (--shadow-mode): every rule runs as mode dry_run, nothing is refused");
        }
        if (settings.lifecycle().healthyWithConfig()
                && server.limiter().policies().domains().isEmpty()) {
            err.println("sluice: unready (/healthcheck 500, gRPC health NOT_SERVING) until the configuration has a"
                    + " domain (--healthy-with-config)");
        }
        if (config != null && server.limiter().policies().domains().isEmpty()) {
            err.println("sluice: warning: " + config + " defines no domain: every request is allowed until one is "
                    + "added");
        }
        String unusedCache = StoreAssembly.unusedOverLimitCache(
                settings.sharing().mode(), settings.store().startsWith("memory:"), settings.overLimitCache());
        if (unusedCache != null) {
            err.println("sluice: --over-limit-cache has no effect " + unusedCache);
        }
        if (Boolean.getBoolean(ManualClock.PROPERTY)) {
            err.println("sluice: warning: -D" + ManualClock.PROPERTY
                    + "=true: a test clock that moves only by POST /clock" + " (admin token); never for production");
        }
        if (settings.benchBare()) {
            out.println("sluice: benchmarking aid on: POST " + BareEndpoint.PATH + " and gRPC " + BareEndpoint.SERVICE
                    + "/ShouldRateLimit answer OK with no rate-limit work");
        }
        out.flush();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            server.close();
                            out.println("sluice: stopped");
                            out.flush();
                            stopped.countDown();
                        },
                        "sluice-shutdown"));
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    static SluiceServer.Lifecycle lifecycle(Options o) {
        Duration delay = o.duration("shutdown-delay");
        return new SluiceServer.Lifecycle(
                o.flag("healthy-with-config"),
                delay == null ? Duration.ZERO : delay,
                o.string("debug-port") == null ? -1 : o.port("debug-port", -1));
    }

    /** The xDS subscription {@code --xds-server} and its options ask for; null without {@code --xds-server}. */
    static XdsSubscription.@Nullable Settings xds(Options o) {
        String server = o.string("xds-server");
        if (server == null) {
            for (String option : XDS_OPTIONS) {
                if (o.string(option) != null || o.flag(option)) {
                    throw new UsageException("serve: --" + option + " needs --xds-server");
                }
            }
            return null;
        }
        if (o.string("config") != null) {
            throw new UsageException("serve: give either --config or --xds-server, not both");
        }
        if (server.isBlank()) {
            throw o.bad("xds-server", server, "the xDS server as HOST:PORT");
        }
        String nodeId = o.string("xds-node-id", "default");
        if (nodeId.isEmpty()) {
            throw o.bad("xds-node-id", nodeId, "a non-empty node id");
        }
        Duration retry = o.duration("xds-retry-interval");
        Duration retryMax = o.duration("xds-retry-max");
        retry = retry == null ? Duration.ofSeconds(3) : retry;
        retryMax = retryMax == null ? Duration.ofSeconds(60) : retryMax;
        if (retryMax.compareTo(retry) < 0) {
            throw o.bad(
                    "xds-retry-max", o.string("xds-retry-max", ""), "at least --xds-retry-interval (" + retry + ")");
        }
        Path ca = readable(o, "xds-tls-ca", "the CA certificates (PEM) of the xDS server");
        Path cert = readable(o, "xds-tls-cert", "this client's certificate (PEM)");
        Path key = readable(o, "xds-tls-key", "this client's private key (PEM)");
        if ((cert == null) != (key == null)) {
            throw new UsageException("serve: --xds-tls-cert and --xds-tls-key go together (mutual TLS): give both");
        }
        String san = o.string("xds-tls-san");
        boolean tls = o.flag("xds-tls") || ca != null || cert != null || san != null;
        return new XdsSubscription.Settings(
                server, nodeId, metadata(o), tls ? new XdsSubscription.Tls(ca, cert, key, san) : null, retry, retryMax);
    }

    private static final List<String> XDS_OPTIONS = List.of(
            "xds-node-id",
            "xds-node-metadata",
            "xds-tls",
            "xds-tls-ca",
            "xds-tls-cert",
            "xds-tls-key",
            "xds-tls-san",
            "xds-retry-interval",
            "xds-retry-max",
            "xds-ready-without-config");

    /** {@code --xds-node-metadata k=v,k=v}: every entry a key, '=' and a value. */
    private static Map<String, String> metadata(Options o) {
        String text = o.string("xds-node-metadata");
        Map<String, String> metadata = new LinkedHashMap<>();
        if (text == null || text.isEmpty()) {
            return metadata;
        }
        for (String entry : text.split(",", -1)) {
            int eq = entry.indexOf('=');
            if (eq <= 0) {
                throw o.bad(
                        "xds-node-metadata",
                        text,
                        "KEY=VALUE entries separated by commas; the entry '" + entry + "' has no "
                                + (eq < 0 ? "'='" : "key"));
            }
            metadata.put(entry.substring(0, eq), entry.substring(eq + 1));
        }
        return metadata;
    }

    private static @Nullable Path readable(Options o, String option, String what) {
        String file = o.string(option);
        if (file == null) {
            return null;
        }
        Path p = Path.of(file);
        if (!Files.isReadable(p) || Files.isDirectory(p)) {
            throw o.bad(option, file, "a readable file: " + what);
        }
        return p;
    }

    static RequestCaps requestCaps(Options o) {
        RequestCaps d = RequestCaps.DEFAULTS;
        int body = HttpApi.MAX_BODY;
        return new RequestCaps(
                o.intBetween("max-descriptors", d.maxDescriptors(), 1, body),
                o.intBetween("max-entries", d.maxEntries(), 1, body),
                o.intBetween("max-key-bytes", d.maxKeyBytes(), 1, body),
                o.intBetween("max-value-bytes", d.maxValueBytes(), 1, body));
    }

    /**
     * The duration {@code option} gives, refused below {@code min}: grpc-java would raise it to that silently (it pings
     * no more often than every 10 s, and closes idle connections no sooner than after 1 s).
     */
    private static @Nullable Duration atLeast(Options o, String option, Duration min) {
        Duration d = o.duration(option);
        if (d != null && d.compareTo(min) < 0) {
            throw o.bad(option, o.string(option, ""), "a duration of at least " + Durations.format(min));
        }
        return d;
    }

    /** The longest {@code --grpc-read-timeout}: a bound longer than this bounds nothing a client would notice. */
    static final Duration MAX_GRPC_READ_TIMEOUT = Duration.ofHours(1);

    static SluiceServer.GrpcLimits grpcLimits(Options o) {
        SluiceServer.GrpcLimits d = SluiceServer.GrpcLimits.DEFAULTS;
        Duration idle = atLeast(o, "grpc-idle-timeout", Duration.ofSeconds(1));
        Duration keepAlive = atLeast(o, "grpc-keepalive-time", Duration.ofSeconds(10));
        Duration keepAliveTimeout = o.duration("grpc-keepalive-timeout");
        Duration readTimeout = o.duration("grpc-read-timeout");
        if (readTimeout != null
                && (readTimeout.compareTo(ReadTimeout.MIN) < 0 || readTimeout.compareTo(MAX_GRPC_READ_TIMEOUT) > 0)) {
            throw o.bad(
                    "grpc-read-timeout",
                    o.string("grpc-read-timeout", ""),
                    "a duration from " + Durations.format(ReadTimeout.MIN) + " to "
                            + Durations.format(MAX_GRPC_READ_TIMEOUT));
        }
        int maxStreams = o.intBetween("grpc-max-streams", d.maxStreams(), 1, Integer.MAX_VALUE);
        return new SluiceServer.GrpcLimits(
                maxStreams,
                o.intBetween("grpc-max-queue", d.maxQueue(), 1, 1_000_000),
                o.intBetween("grpc-max-calls", d.maxCalls(), 1, Integer.MAX_VALUE),
                o.intBetween("grpc-max-connections", GrpcConnections.defaultMax(maxStreams), 1, Integer.MAX_VALUE),
                o.intBetween("grpc-max-resets", d.maxResets(), 0, Integer.MAX_VALUE),
                o.duration("grpc-max-connection-age"),
                o.duration("grpc-max-connection-age-grace"),
                idle == null ? d.idleTimeout() : idle,
                keepAlive == null ? d.keepAliveTime() : keepAlive,
                keepAliveTimeout == null ? d.keepAliveTimeout() : keepAliveTimeout,
                readTimeout == null ? d.readTimeout() : readTimeout);
    }
}
