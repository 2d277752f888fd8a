package dev.sluice.server;

import dev.sluice.spi.SharedStoreBuilder;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * envoyproxy/ratelimit's environment variables (its {@code src/settings/settings.go}) read by {@code serve}, so that a
 * deployment made for it runs Sluice with nothing else changed. Every variable of that file is a row of {@link #TABLE}:
 * {@linkplain Status#HONOURED honoured} (it means the same here), {@linkplain Status#MAPPED mapped} to a Sluice option,
 * {@linkplain Status#NOTED noted} (accepted, it has no effect here, and a line at start says so and why) or
 * {@linkplain Status#REFUSED refused} when set to anything but envoyproxy/ratelimit's default, naming what to use
 * instead. Nothing is ignored silently. {@code docs/envoy-ratelimit.md} shows the same table.
 *
 * <p>The environment becomes options placed before the command line's, so a flag given on the command line wins.
 * A secret ({@code REDIS_AUTH}) never becomes an option and is never printed: it is carried apart as the store's
 * password, as {@code SLUICE_STORE_PASSWORD} is.
 */
final class EnvSettings {

    /** What a variable means to Sluice. */
    enum Status {
        /** Read with the same meaning as envoyproxy/ratelimit's. */
        HONOURED,
        /** Read as the Sluice option named in its row. */
        MAPPED,
        /** Accepted at any value with no effect here; a line at start says so when it is set. */
        NOTED,
        /** Refused at start when set to anything but envoyproxy/ratelimit's default; the message says what to use. */
        REFUSED
    }

    /** How a variable's value is read, as envoyproxy/ratelimit's envconfig reads it. */
    enum Kind {
        STRING,
        /** A string whose value is never printed. */
        SECRET,
        /** Go's {@code strconv.ParseBool}: 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False. */
        BOOL,
        INT,
        PORT,
        FLOAT,
        /** Go's {@code time.ParseDuration}: {@code 300ms}, {@code 1h30m}, {@code 150us}; normalized to nanoseconds. */
        DURATION
    }

    /**
     * One variable of envoyproxy/ratelimit.
     *
     * @param name         its name
     * @param kind         how its value is read
     * @param defaultValue envoyproxy/ratelimit's default, as written in its settings; "" for none
     * @param status       what it means here
     * @param sluice       the Sluice option it maps to, or what to use instead and why (the docs' last column)
     * @param apply        what a value (normalized by {@link #kind}) does to the options being built
     */
    record Variable(
            String name,
            Kind kind,
            String defaultValue,
            Status status,
            String sluice,
            BiConsumer<String, Draft> apply) {}

    /**
     * What the environment asks for.
     *
     * @param args          options, placed before the command line's so that those win
     * @param storePassword {@code REDIS_AUTH}'s password, for the store {@code REDIS_URL} names; never printed
     * @param notices       lines to print at start: variables set that have no effect here, and why
     */
    record Result(List<String> args, @Nullable String storePassword, List<String> notices) {
        static final Result NONE = new Result(List.of(), null, List.of());
    }

    /** The options being built from the environment; the rows fill it, {@link #finish} turns it into options. */
    static final class Draft {
        private final Map<String, String> set;
        private final Map<String, String> options = new LinkedHashMap<>();
        private final List<String> notices = new ArrayList<>();
        private final List<String> refusals = new ArrayList<>();
        private @Nullable String host;
        private @Nullable String grpcHost;
        private @Nullable String debugHost;
        private String configType = "FILE";
        private @Nullable String runtimeRoot;
        private @Nullable String runtimeSubdirectory;
        private @Nullable String runtimeAppDirectory;
        private String backendType = "redis";
        private String redisSocketType = "unix";
        private String redisType = "single";
        private @Nullable String redisUrl;
        private @Nullable String redisAuth;
        private boolean redisTls;
        /** The TLS files' query parameters of the store URI, by parameter, in the order set. */
        private final Map<String, String> redisTlsFiles = new LinkedHashMap<>();

        private boolean redisTlsSkipHostname;
        private boolean useStatsd;
        private boolean dogStatsd;
        private boolean disableStats;
        private String statsdHost = "localhost";
        private String statsdPort = "8125";
        private boolean usePrometheus;
        /** The --prometheus-* options, emitted only with USE_PROMETHEUS=true. */
        private final Map<String, String> prometheus = new LinkedHashMap<>();
        /** The --xds-* options, emitted only with CONFIG_TYPE=GRPC_XDS_SOTW. */
        private final Map<String, String> xds = new LinkedHashMap<>();
        /** The variables that set them, for the notice when the configuration comes from files. */
        private final List<String> xdsVariables = new ArrayList<>();

        /** The variable whose value is being applied. */
        private @Nullable Variable reading;

        private boolean grpcTls;
        private @Nullable String grpcTlsCert;
        private @Nullable String grpcTlsKey;
        private @Nullable String grpcTlsCa;

        private Draft(Map<String, String> set) {
            this.set = set;
        }

        void option(String name, String value) {
            options.put(name, value);
        }

        /** {@code LOCAL_CACHE_SIZE_IN_BYTES} as {@code --over-limit-cache}'s entries; 0 or less: none. */
        void overLimitCache(String bytes) {
            long b = Long.parseLong(bytes);
            if (b > 0) {
                option(
                        "over-limit-cache",
                        String.valueOf(Math.max(1, Math.min(Integer.MAX_VALUE, b / BYTES_PER_CACHED_REFUSAL))));
            }
        }

        void flag(String name, boolean on) {
            if (on) {
                options.put(name, "");
            } else {
                options.remove(name);
            }
        }

        /** The xDS option {@code name} from the variable being read; a duration in milliseconds, rounded up. */
        void xdsOption(String name, String value) {
            Variable v = java.util.Objects.requireNonNull(reading);
            xds.put(
                    name,
                    v.kind() == Kind.DURATION
                            ? Math.max(1, (Long.parseLong(value) + 999_999) / 1_000_000) + "ms"
                            : value);
            xdsVariables.add(v.name());
        }

        void xdsFlag(String name, boolean on) {
            if (on) {
                xds.put(name, "");
            } else {
                xds.remove(name);
            }
        }

        /** A Go duration in nanoseconds as the option {@code name}; 0 (no bound in grpc-go) sets none. */
        void duration(String name, String nanos) {
            long n = Long.parseLong(nanos);
            if (n > 0) {
                option(name, Math.max(1, n / 1_000_000) + "ms");
            }
        }

        void refuse(String variable, String why) {
            refusals.add(variable + "=" + shown(variable) + " is not supported: " + why);
        }

        void note(String variable, String why) {
            notices.add(variable + "=" + shown(variable) + " has no effect: " + why);
        }

        private String shown(String variable) {
            Variable v = BY_NAME.get(variable);
            return v != null && v.kind() == Kind.SECRET ? "***" : "'" + set.get(variable) + "'";
        }
    }

    private static final Pattern GO_DURATION = Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|μs|ms|s|m|h)");

    /** Why an xDS variable has no effect with files. */
    private static final String ONLY_XDS = "it applies to CONFIG_TYPE=GRPC_XDS_SOTW only";

    // what several rows say
    private static final String SAME_BIND = "--bind: must be the same address as HOST's";
    private static final String RUNTIME_PATH = "--config ROOT/SUBDIRECTORY/APPDIRECTORY";
    private static final String DRAFT_03 = "the draft 03 header names are fixed";
    private static final String ONE_STORE = "one store keeps every limit";
    private static final String STARTS_UNREADY =
            "Sluice starts unready and turns ready when the store answers, probing it every second";
    private static final String NO_MEMCACHED = "Sluice has no memcached store";
    private static final String NO_TRACES = "Sluice exports no traces";

    /** The bytes of {@code LOCAL_CACHE_SIZE_IN_BYTES} per entry of the over-limit cache ({@code --over-limit-cache}). */
    static final int BYTES_PER_CACHED_REFUSAL = SharedStoreBuilder.OVER_LIMIT_CACHE_ENTRY_BYTES;

    /** The rows, in settings.go's order. */
    static final List<Variable> TABLE = List.of(
            // listening
            mapped(
                    "HOST",
                    Kind.STRING,
                    "0.0.0.0",
                    "--bind (one address for every port; Sluice's default is 127.0.0.1, the container image sets"
                            + " HOST=0.0.0.0)",
                    (v, d) -> d.host = v),
            mapped("PORT", Kind.PORT, "8080", "--http-port", option("http-port")),
            mapped("DEBUG_HOST", Kind.STRING, "0.0.0.0", SAME_BIND, (v, d) -> d.debugHost = v),
            mapped(
                    "DEBUG_PORT",
                    Kind.PORT,
                    "6070",
                    "--debug-port (/rlconfig, /stats, /metrics); none unless set: the container image sets 6070",
                    option("debug-port")),
            refused("GRPC_UDS", Kind.STRING, "", "Sluice listens on TCP: use GRPC_PORT (--grpc-port)"),
            mapped("GRPC_HOST", Kind.STRING, "0.0.0.0", SAME_BIND, (v, d) -> d.grpcHost = v),
            mapped("GRPC_PORT", Kind.PORT, "8081", "--grpc-port", option("grpc-port")),
            mapped(
                    "GRPC_MAX_CONNECTION_AGE",
                    Kind.DURATION,
                    "24h",
                    "--grpc-max-connection-age (0: no bound); unset, Sluice sets no bound",
                    (v, d) -> d.duration("grpc-max-connection-age", v)),
            mapped(
                    "GRPC_MAX_CONNECTION_AGE_GRACE",
                    Kind.DURATION,
                    "1h",
                    "--grpc-max-connection-age-grace (0: no bound); unset, Sluice sets no bound",
                    (v, d) -> d.duration("grpc-max-connection-age-grace", v)),
            mapped(
                    "GRPC_SERVER_USE_TLS",
                    Kind.BOOL,
                    "false",
                    "true: --grpc-tls-cert GRPC_SERVER_TLS_CERT --grpc-tls-key GRPC_SERVER_TLS_KEY (both needed)",
                    (v, d) -> d.grpcTls = v.equals("true")),
            mapped(
                    "GRPC_SERVER_TLS_CERT",
                    Kind.STRING,
                    "",
                    "--grpc-tls-cert, when GRPC_SERVER_USE_TLS=true",
                    (v, d) -> d.grpcTlsCert = v),
            mapped(
                    "GRPC_SERVER_TLS_KEY",
                    Kind.STRING,
                    "",
                    "--grpc-tls-key, when GRPC_SERVER_USE_TLS=true",
                    (v, d) -> d.grpcTlsKey = v),
            mapped(
                    "GRPC_CLIENT_TLS_CACERT",
                    Kind.STRING,
                    "",
                    "--grpc-tls-ca (mutual TLS: clients need a certificate this CA signed), when"
                            + " GRPC_SERVER_USE_TLS=true",
                    (v, d) -> d.grpcTlsCa = v),
            refused(
                    "GRPC_CLIENT_TLS_SAN",
                    Kind.STRING,
                    "",
                    "Sluice admits a client certificate by its CA (GRPC_CLIENT_TLS_CACERT), not by its SAN: use a CA"
                            + " that signs only the clients to admit"),
            // logging
            mapped("LOG_LEVEL", Kind.STRING, "WARN", "--log-level", option("log-level")),
            mapped("LOG_FORMAT", Kind.STRING, "text", "--log-format (text or json)", option("log-format")),
            // configuration source
            honoured(
                    "CONFIG_TYPE",
                    Kind.STRING,
                    "FILE",
                    "FILE: the files of RUNTIME_ROOT (--config); GRPC_XDS_SOTW: --xds-server"
                            + " CONFIG_GRPC_XDS_SERVER_URL (docs/xds.md)",
                    EnvSettings::configType),
            honoured(
                    "FORCE_START_WITHOUT_INITIAL_CONFIG",
                    Kind.BOOL,
                    "false",
                    "with xDS: --xds-ready-without-config (ready before the first configuration); with files the"
                            + " service starts on an empty or missing-domain directory either way, as envoyproxy/ratelimit"
                            + " does",
                    (v, d) -> d.xdsFlag("xds-ready-without-config", v.equals("true"))),
            mapped("CONFIG_GRPC_XDS_NODE_ID", Kind.STRING, "default", "--xds-node-id", xds("xds-node-id")),
            mapped(
                    "CONFIG_GRPC_XDS_NODE_METADATA",
                    Kind.STRING,
                    "",
                    "--xds-node-metadata (KEY=VALUE,…; an entry without '=' is refused)",
                    xds("xds-node-metadata")),
            mapped("CONFIG_GRPC_XDS_SERVER_URL", Kind.STRING, "localhost:18000", "--xds-server", xds("xds-server")),
            mapped(
                    "CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL",
                    Kind.DURATION,
                    "3s",
                    "--xds-retry-interval (the first wait before a new stream)",
                    xds("xds-retry-interval")),
            refused(
                    "CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS",
                    Kind.STRING,
                    "",
                    "headers on the xDS stream are not supported yet"),
            mapped(
                    "CONFIG_GRPC_XDS_SERVER_USE_TLS",
                    Kind.BOOL,
                    "false",
                    "--xds-tls",
                    (v, d) -> d.xdsFlag("xds-tls", v.equals("true"))),
            mapped("CONFIG_GRPC_XDS_CLIENT_TLS_CERT", Kind.STRING, "", "--xds-tls-cert", xds("xds-tls-cert")),
            mapped("CONFIG_GRPC_XDS_CLIENT_TLS_KEY", Kind.STRING, "", "--xds-tls-key", xds("xds-tls-key")),
            mapped("CONFIG_GRPC_XDS_SERVER_TLS_CACERT", Kind.STRING, "", "--xds-tls-ca", xds("xds-tls-ca")),
            mapped("CONFIG_GRPC_XDS_SERVER_TLS_SAN", Kind.STRING, "", "--xds-tls-san", xds("xds-tls-san")),
            refused(
                    "XDS_CLIENT_BACKOFF_INITIAL_INTERVAL",
                    Kind.DURATION,
                    "10s",
                    "Sluice has one first wait: CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL (--xds-retry-interval)"),
            mapped(
                    "XDS_CLIENT_BACKOFF_MAX_INTERVAL",
                    Kind.DURATION,
                    "60s",
                    "--xds-retry-max (the longest wait)",
                    xds("xds-retry-max")),
            refused(
                    "XDS_CLIENT_BACKOFF_RANDOM_FACTOR",
                    Kind.FLOAT,
                    "0.5",
                    "each wait is drawn between half and all of it, fixed"),
            refused("XDS_CLIENT_BACKOFF_JITTER", Kind.BOOL, "true", "each wait is jittered, always"),
            refused("XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES", Kind.INT, "", "an xDS response may be up to 16 MiB, fixed"),
            // stats
            mapped(
                    "USE_DOG_STATSD",
                    Kind.BOOL,
                    "false",
                    "--statsd HOST:PORT --statsd-flavor datadog --envoy-stats",
                    (v, d) -> d.dogStatsd = v.equals("true")),
            refused(
                    "USE_DOG_STATSD_MOGRIFIERS",
                    Kind.STRING,
                    "",
                    "Sluice sends envoyproxy/ratelimit's names as they are; map them in the agent"),
            mapped(
                    "USE_STATSD",
                    Kind.BOOL,
                    "true",
                    "--statsd STATSD_HOST:STATSD_PORT --envoy-stats (Sluice's meters and envoyproxy/ratelimit's names);"
                            + " envoyproxy/ratelimit's default (true) is not followed: StatsD only when asked",
                    (v, d) -> d.useStatsd = v.equals("true")),
            mapped("STATSD_HOST", Kind.STRING, "localhost", "--statsd HOST:…", (v, d) -> d.statsdHost = v),
            mapped("STATSD_PORT", Kind.PORT, "8125", "--statsd …:PORT", (v, d) -> d.statsdPort = v),
            refused("EXTRA_TAGS", Kind.STRING, "", "Sluice adds no extra tags to its stats"),
            mapped(
                    "STATS_FLUSH_INTERVAL",
                    Kind.DURATION,
                    "10s",
                    "--statsd-interval",
                    (v, d) -> d.option("statsd-interval", Math.max(1, Long.parseLong(v) / 1_000_000) + "ms")),
            honoured(
                    "DISABLE_STATS",
                    Kind.BOOL,
                    "false",
                    "true: no StatsD, whatever USE_STATSD says; GET /metrics still answers",
                    (v, d) -> d.disableStats = v.equals("true")),
            mapped(
                    "USE_PROMETHEUS",
                    Kind.BOOL,
                    "false",
                    "true: --prometheus-addr PROMETHEUS_ADDR (its default :9090), a listener serving Sluice's meters"
                            + " and envoyproxy/ratelimit's stats named as its Prometheus sink names them; none with"
                            + " DISABLE_STATS=true, as there",
                    (v, d) -> d.usePrometheus = v.equals("true")),
            mapped(
                    "PROMETHEUS_ADDR",
                    Kind.STRING,
                    ":9090",
                    "--prometheus-addr [HOST]:PORT (an empty HOST: --bind's), when USE_PROMETHEUS=true",
                    (v, d) -> d.prometheus.put("prometheus-addr", v)),
            mapped(
                    "PROMETHEUS_PATH",
                    Kind.STRING,
                    "/metrics",
                    "--prometheus-path, when USE_PROMETHEUS=true",
                    (v, d) -> d.prometheus.put("prometheus-path", v)),
            mapped(
                    "PROMETHEUS_MAPPER_YAML",
                    Kind.STRING,
                    "",
                    "--prometheus-mapper (statsd_exporter's mapping: the subset listed below), when"
                            + " USE_PROMETHEUS=true; a file that does not exist: a warning and the default mapping",
                    (v, d) -> d.prometheus.put("prometheus-mapper", v)),
            mapped(
                    "PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS",
                    Kind.BOOL,
                    "false",
                    "true: --prometheus-response-time-ms (the default mapping's response time in milliseconds), when"
                            + " USE_PROMETHEUS=true",
                    (v, d) -> {
                        if (v.equals("true")) {
                            d.prometheus.put("prometheus-response-time-ms", "");
                        }
                    }),
            // runtime (the configuration files)
            mapped("RUNTIME_ROOT", Kind.STRING, "/srv/runtime_data/current", RUNTIME_PATH, (v, d) -> d.runtimeRoot = v),
            mapped("RUNTIME_SUBDIRECTORY", Kind.STRING, "", RUNTIME_PATH, (v, d) -> d.runtimeSubdirectory = v),
            mapped("RUNTIME_APPDIRECTORY", Kind.STRING, "config", RUNTIME_PATH, (v, d) -> d.runtimeAppDirectory = v),
            noted(
                    "RUNTIME_IGNOREDOTFILES",
                    Kind.BOOL,
                    "false",
                    "Sluice always skips files whose name starts with a dot (a ConfigMap's ..data entries), whatever"
                            + " the value",
                    "true"),
            honoured(
                    "RUNTIME_WATCH_ROOT",
                    Kind.BOOL,
                    "true",
                    "either value: Sluice notices a change of the files and a swap of RUNTIME_ROOT's link alike",
                    (v, d) -> {}),
            // every cache
            noted("EXPIRATION_JITTER_MAX_SECONDS", Kind.INT, "300", "Sluice's keys expire when their window ends"),
            mapped(
                    "LOCAL_CACHE_SIZE_IN_BYTES",
                    Kind.INT,
                    "0",
                    "--over-limit-cache N, N = the bytes / " + BYTES_PER_CACHED_REFUSAL
                            + " (at least 1; 0: none): an exact cache of the store's refusals, exact mode only",
                    (v, d) -> d.overLimitCache(v)),
            mapped("NEAR_LIMIT_RATIO", Kind.FLOAT, "0.8", "--near-limit-ratio", option("near-limit-ratio")),
            refused(
                    "CACHE_KEY_PREFIX",
                    Kind.STRING,
                    "",
                    "Sluice's store keys have their own layout; give each deployment its own Redis database (REDIS_URL"
                            + " … /db in --store)"),
            honoured(
                    "BACKEND_TYPE",
                    Kind.STRING,
                    "redis",
                    "redis; memcache is refused: Sluice has no memcached store (--store names Redis, PostgreSQL or"
                            + " MongoDB)",
                    (v, d) -> d.backendType = v),
            noted(
                    "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT",
                    Kind.BOOL,
                    "false",
                    "a refused hit never counts in Sluice, whatever the value"),
            // response headers
            mapped("LIMIT_RESPONSE_HEADERS_ENABLED", Kind.BOOL, "false", "--response-headers draft03", (v, d) -> {
                if (v.equals("true")) {
                    d.option("response-headers", "draft03");
                }
            }),
            refused(
                    "LIMIT_LIMIT_HEADER",
                    Kind.STRING,
                    "RateLimit-Limit",
                    DRAFT_03 + "; --response-headers draft10 sends the newer RateLimit-Policy and RateLimit"),
            refused("LIMIT_REMAINING_HEADER", Kind.STRING, "RateLimit-Remaining", DRAFT_03),
            refused("LIMIT_RESET_HEADER", Kind.STRING, "RateLimit-Reset", DRAFT_03),
            // health
            mapped(
                    "HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED",
                    Kind.BOOL,
                    "false",
                    "--healthy-with-config",
                    (v, d) -> d.flag("healthy-with-config", v.equals("true"))),
            // redis
            honoured(
                    "REDIS_SOCKET_TYPE",
                    Kind.STRING,
                    "unix",
                    "tcp; unix is refused: Sluice reaches Redis over TCP",
                    (v, d) -> d.redisSocketType = v),
            mapped(
                    "REDIS_TYPE",
                    Kind.STRING,
                    "SINGLE",
                    "single: --store redis://REDIS_URL; cluster: --store redis-cluster://REDIS_URL; sentinel: --store"
                            + " redis-sentinel://SENTINEL,SENTINEL…#MASTER from REDIS_URL=MASTER,SENTINEL,SENTINEL…",
                    (v, d) -> d.redisType = v.toLowerCase(Locale.ROOT)),
            mapped(
                    "REDIS_URL",
                    Kind.STRING,
                    "/var/run/nutcracker/ratelimit.sock",
                    "--store (with REDIS_TYPE, REDIS_TLS)",
                    (v, d) -> d.redisUrl = v),
            noted(
                    "REDIS_POOL_SIZE",
                    Kind.INT,
                    "10",
                    "Sluice's Redis client multiplexes every call on one connection per node"),
            mapped(
                    "REDIS_AUTH",
                    Kind.SECRET,
                    "",
                    "the store's password (SLUICE_STORE_PASSWORD), USER:PASSWORD as in envoyproxy/ratelimit; never"
                            + " printed",
                    (v, d) -> d.redisAuth = v),
            mapped("REDIS_TLS", Kind.BOOL, "false", "--store rediss://…", (v, d) -> d.redisTls = v.equals("true")),
            mapped(
                    "REDIS_TLS_CLIENT_CERT",
                    Kind.STRING,
                    "",
                    "--store rediss://…?tlsCert=FILE (PEM; with REDIS_TLS_CLIENT_KEY, the client certificate a Redis"
                            + " asking for one checks), when REDIS_TLS=true",
                    (v, d) -> d.redisTlsFiles.put("tlsCert", v)),
            mapped(
                    "REDIS_TLS_CLIENT_KEY",
                    Kind.STRING,
                    "",
                    "--store rediss://…?tlsKey=FILE (PEM, unencrypted PKCS#8), when REDIS_TLS=true",
                    (v, d) -> d.redisTlsFiles.put("tlsKey", v)),
            mapped(
                    "REDIS_TLS_CACERT",
                    Kind.STRING,
                    "",
                    "--store rediss://…?tlsCa=FILE (PEM: Redis's certificate checked against these CAs instead of the"
                            + " JVM's trust store), when REDIS_TLS=true",
                    (v, d) -> d.redisTlsFiles.put("tlsCa", v)),
            mapped(
                    "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION",
                    Kind.BOOL,
                    "false",
                    "true: --store rediss://…?verifyPeer=CA (the certificate's chain checked, not its host name), when"
                            + " REDIS_TLS=true",
                    (v, d) -> d.redisTlsSkipHostname = v.equals("true")),
            noted(
                    "REDIS_PIPELINE_WINDOW",
                    Kind.DURATION,
                    "0",
                    "Sluice's Redis client pipelines concurrent calls on its connection as they come"),
            noted("REDIS_PIPELINE_LIMIT", Kind.INT, "0", "deprecated by envoyproxy/ratelimit, which ignores it too"),
            noted(
                    "REDIS_CLUSTER_PIPELINE_PARALLELISM",
                    Kind.INT,
                    "1",
                    "Sluice's cluster client sends each node's calls as they come"),
            refused(
                    "REDIS_PERSECOND",
                    Kind.BOOL,
                    "false",
                    ONE_STORE + "; per-second limits need no store of their own"),
            refused("REDIS_PERSECOND_SOCKET_TYPE", Kind.STRING, "unix", ONE_STORE),
            refused("REDIS_PERSECOND_TYPE", Kind.STRING, "SINGLE", ONE_STORE),
            refused("REDIS_PERSECOND_URL", Kind.STRING, "/var/run/nutcracker/ratelimitpersecond.sock", ONE_STORE),
            refused("REDIS_PERSECOND_POOL_SIZE", Kind.INT, "10", ONE_STORE),
            refused("REDIS_PERSECOND_AUTH", Kind.SECRET, "", ONE_STORE),
            refused("REDIS_PERSECOND_TLS", Kind.BOOL, "false", ONE_STORE),
            refused(
                    "REDIS_SENTINEL_AUTH",
                    Kind.SECRET,
                    "",
                    "sentinels with a password are not supported yet: REDIS_AUTH is the master's password"),
            refused("REDIS_PERSECOND_SENTINEL_AUTH", Kind.SECRET, "", ONE_STORE),
            refused("REDIS_PERSECOND_PIPELINE_WINDOW", Kind.DURATION, "0", ONE_STORE),
            refused("REDIS_PERSECOND_PIPELINE_LIMIT", Kind.INT, "0", ONE_STORE),
            refused("REDIS_PERSECOND_CLUSTER_PIPELINE_PARALLELISM", Kind.INT, "1", ONE_STORE),
            noted(
                    "REDIS_HEALTH_CHECK_ACTIVE_CONNECTION",
                    Kind.BOOL,
                    "false",
                    "Sluice's health always follows the store: NOT_SERVING while it does not answer, whatever the"
                            + " value",
                    "true"),
            noted(
                    "REDIS_TIMEOUT",
                    Kind.DURATION,
                    "10s",
                    "a check waits for the store at most --store-timeout (15ms by default), then its domain's"
                            + " on_store_failure answers"),
            refused("REDIS_PERSECOND_TIMEOUT", Kind.DURATION, "10s", ONE_STORE),
            refused(
                    "REDIS_POOL_ON_EMPTY_BEHAVIOR",
                    Kind.STRING,
                    "WAIT",
                    "Sluice's Redis client has no pool to run empty"),
            refused("REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR", Kind.STRING, "WAIT", ONE_STORE),
            noted(
                    "REDIS_STARTUP_INITIAL_INTERVAL",
                    Kind.DURATION,
                    "1s",
                    STARTS_UNREADY + " (--require-store exits instead)"),
            noted("REDIS_STARTUP_MAX_INTERVAL", Kind.DURATION, "30s", STARTS_UNREADY),
            noted(
                    "REDIS_STARTUP_MAX_ELAPSED_TIME",
                    Kind.DURATION,
                    "0",
                    "Sluice starts unready and waits for the store without end (--require-store exits if it does not"
                            + " answer within 5s)"),
            // memcache
            refused("MEMCACHE_HOST_PORT", Kind.STRING, "", NO_MEMCACHED),
            refused("MEMCACHE_MAX_IDLE_CONNS", Kind.INT, "2", NO_MEMCACHED),
            refused("MEMCACHE_SRV", Kind.STRING, "", NO_MEMCACHED),
            refused("MEMCACHE_SRV_REFRESH", Kind.DURATION, "0", NO_MEMCACHED),
            refused("MEMCACHE_TLS", Kind.BOOL, "false", NO_MEMCACHED),
            refused("MEMCACHE_TLS_CLIENT_CERT", Kind.STRING, "", NO_MEMCACHED),
            refused("MEMCACHE_TLS_CLIENT_KEY", Kind.STRING, "", NO_MEMCACHED),
            refused("MEMCACHE_TLS_CACERT", Kind.STRING, "", NO_MEMCACHED),
            refused("MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION", Kind.BOOL, "false", NO_MEMCACHED),
            // modes
            mapped(
                    "SHADOW_MODE",
                    Kind.BOOL,
                    "false",
                    "--shadow-mode (every rule of every domain as mode: dry_run: nothing refused, the would-be"
                            + " refusals counted as over_limit and shadow_mode)",
                    (v, d) -> d.flag("shadow-mode", v.equals("true"))),
            refused(
                    "QUOTA_MODE",
                    Kind.BOOL,
                    "false",
                    "not supported yet: give the rules mode: quota (quota_mode: true) in the configuration"),
            refused("RESPONSE_DYNAMIC_METADATA", Kind.BOOL, "false", "Sluice sends no dynamic metadata"),
            refused(
                    "MERGE_DOMAIN_CONFIG",
                    Kind.BOOL,
                    "false",
                    "a domain is defined in one file; put its descriptors together"),
            // tracing
            refused("TRACING_ENABLED", Kind.BOOL, "false", NO_TRACES),
            refused("TRACING_SERVICE_NAME", Kind.STRING, "RateLimit", NO_TRACES),
            refused("TRACING_SERVICE_NAMESPACE", Kind.STRING, "", NO_TRACES),
            refused("TRACING_SERVICE_INSTANCE_ID", Kind.STRING, "", NO_TRACES),
            refused("TRACING_EXPORTER_PROTOCOL", Kind.STRING, "http", NO_TRACES),
            refused("TRACING_SAMPLING_RATE", Kind.FLOAT, "1", NO_TRACES),
            // not envoyproxy/ratelimit's, but set by Envoy Gateway's deployment of it
            noted(
                    "GRPC_SERVER_TLS_CA_CERT",
                    Kind.STRING,
                    "",
                    "not a setting of envoyproxy/ratelimit, which ignores it (Envoy Gateway sets it) and asks for no"
                            + " client certificate; GRPC_CLIENT_TLS_CACERT (--grpc-tls-ca) does"));

    private static final Map<String, Variable> BY_NAME = byName();

    private static Map<String, Variable> byName() {
        Map<String, Variable> m = new LinkedHashMap<>();
        for (Variable v : TABLE) {
            if (m.put(v.name(), v) != null) {
                throw new IllegalStateException("two rows for " + v.name());
            }
        }
        return m;
    }

    private EnvSettings() {}

    /** The variable named {@code name}, or null if envoyproxy/ratelimit has none of that name. */
    static @Nullable Variable variable(String name) {
        return BY_NAME.get(name);
    }

    /** The names of every variable of the table. */
    static Set<String> names() {
        return BY_NAME.keySet();
    }

    /**
     * Reads envoyproxy/ratelimit's variables from {@code env}; variables of other names are not looked at, and a
     * variable set to the empty string counts as not set, as envconfig counts it.
     *
     * @throws UsageException naming every variable refused or of a bad value, each with what to use instead
     */
    static Result read(Map<String, String> env) {
        Map<String, String> set = new LinkedHashMap<>();
        for (Variable v : TABLE) {
            String value = env.get(v.name());
            if (value != null && !value.isEmpty()) {
                set.put(v.name(), value);
            }
        }
        if (set.isEmpty()) {
            return Result.NONE;
        }
        Draft d = new Draft(set);
        for (Map.Entry<String, String> e : set.entrySet()) {
            Variable v = java.util.Objects.requireNonNull(BY_NAME.get(e.getKey()));
            String value;
            try {
                value = normalize(v.kind(), e.getValue());
            } catch (IllegalArgumentException bad) {
                d.refusals.add(v.name() + "=" + d.shown(v.name()) + " is not valid: expected " + bad.getMessage());
                continue;
            }
            d.reading = v;
            v.apply().accept(value, d);
        }
        List<String> args = finish(d);
        if (!d.refusals.isEmpty()) {
            throw new UsageException("serve: the environment asks for what Sluice does not do (docs/envoy-ratelimit.md"
                    + " lists every variable):\n  " + String.join("\n  ", d.refusals));
        }
        return new Result(args, d.redisAuth, List.copyOf(d.notices));
    }

    /** The composed options: the bind address, the configuration path and the store URI. */
    private static List<String> finish(Draft d) {
        String bind = d.host != null ? d.host : d.grpcHost != null ? d.grpcHost : d.debugHost;
        for (String[] other : new String[][] {{"GRPC_HOST", d.grpcHost}, {"DEBUG_HOST", d.debugHost}}) {
            if (other[1] != null && !other[1].equals(bind)) {
                d.refuse(
                        other[0],
                        "Sluice binds every port to one address (--bind), here " + bind
                                + ": give HOST, GRPC_HOST and DEBUG_HOST the same one");
            }
        }
        if (bind != null) {
            d.option("bind", bind);
        }
        if (d.configType.equals("FILE")
                && (d.runtimeRoot != null || d.runtimeSubdirectory != null || d.runtimeAppDirectory != null)) {
            String path = d.runtimeRoot != null ? d.runtimeRoot : "/srv/runtime_data/current";
            if (d.runtimeSubdirectory != null) {
                path = path + "/" + d.runtimeSubdirectory;
            }
            path = path + "/" + (d.runtimeAppDirectory != null ? d.runtimeAppDirectory : "config");
            d.option("config", path);
        }
        if (d.configType.equals("GRPC_XDS_SOTW")) {
            d.xds.putIfAbsent("xds-server", "localhost:18000"); // envoyproxy/ratelimit's default
            d.options.putAll(d.xds);
        } else {
            for (String variable : d.xdsVariables) {
                d.note(variable, ONLY_XDS);
            }
        }
        if (!d.backendType.equalsIgnoreCase("redis")) {
            d.refuse(
                    "BACKEND_TYPE",
                    "Sluice has no memcached store: --store names Redis (REDIS_URL), PostgreSQL or" + " MongoDB");
        }
        if ((d.useStatsd || d.dogStatsd) && !d.disableStats) {
            d.option("statsd", d.statsdHost + ":" + d.statsdPort);
            d.flag("envoy-stats", true);
            if (d.dogStatsd) {
                d.option("statsd-flavor", "datadog");
            }
        }
        prometheus(d);
        grpcTls(d);
        if (!d.redisTls) {
            for (String v : List.of(
                    "REDIS_TLS_CACERT",
                    "REDIS_TLS_CLIENT_CERT",
                    "REDIS_TLS_CLIENT_KEY",
                    "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION")) {
                if (d.set.containsKey(v)) {
                    d.note(v, "Redis is reached over TLS only with REDIS_TLS=true");
                }
            }
        }
        store(d);
        List<String> args = new ArrayList<>();
        for (Map.Entry<String, String> o : d.options.entrySet()) {
            args.add(o.getValue().isEmpty() ? "--" + o.getKey() : "--" + o.getKey() + "=" + o.getValue());
        }
        return args;
    }

    /** The Prometheus listener, which envoyproxy/ratelimit opens only with {@code USE_PROMETHEUS=true}. */
    private static void prometheus(Draft d) {
        if (d.usePrometheus && !d.disableStats) {
            d.options.put("prometheus-addr", ":9090"); // envoyproxy/ratelimit's default
            d.options.putAll(d.prometheus);
            return;
        }
        if (d.usePrometheus) {
            d.note("USE_PROMETHEUS", "DISABLE_STATS=true turns every stats sink off, as in envoyproxy/ratelimit");
        }
        for (String v : List.of(
                "PROMETHEUS_ADDR",
                "PROMETHEUS_PATH",
                "PROMETHEUS_MAPPER_YAML",
                "PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS")) {
            if (d.set.containsKey(v)) {
                d.note(v, "it applies with USE_PROMETHEUS=true only");
            }
        }
    }

    /** The gRPC port's TLS options, which envoyproxy/ratelimit reads only with {@code GRPC_SERVER_USE_TLS=true}. */
    private static void grpcTls(Draft d) {
        if (!d.grpcTls) {
            for (String v : List.of("GRPC_SERVER_TLS_CERT", "GRPC_SERVER_TLS_KEY", "GRPC_CLIENT_TLS_CACERT")) {
                if (d.set.containsKey(v)) {
                    d.note(v, "gRPC is served over TLS only with GRPC_SERVER_USE_TLS=true");
                }
            }
            return;
        }
        if (d.grpcTlsCert == null || d.grpcTlsKey == null) {
            d.refuse(
                    "GRPC_SERVER_USE_TLS",
                    "TLS needs a certificate and a key: set GRPC_SERVER_TLS_CERT and GRPC_SERVER_TLS_KEY");
            return;
        }
        d.option("grpc-tls-cert", d.grpcTlsCert);
        d.option("grpc-tls-key", d.grpcTlsKey);
        if (d.grpcTlsCa != null) {
            d.option("grpc-tls-ca", d.grpcTlsCa);
        }
    }

    /** {@code --store} from {@code REDIS_URL}, {@code REDIS_TYPE}, {@code REDIS_TLS} and the user of REDIS_AUTH. */
    private static void store(Draft d) {
        if (d.redisUrl == null) {
            if (d.redisAuth != null) {
                d.redisAuth = null;
                d.notices.add("REDIS_AUTH has no effect: no REDIS_URL names a store");
            }
            return;
        }
        if (!d.redisSocketType.equalsIgnoreCase("tcp")) {
            d.refusals.add("REDIS_SOCKET_TYPE="
                    + (d.set.containsKey("REDIS_SOCKET_TYPE") ? "'" + d.redisSocketType + "'" : "unix (its default)")
                    + " is not supported: Sluice reaches Redis over TCP; set REDIS_SOCKET_TYPE=tcp and REDIS_URL to"
                    + " host:port");
            return;
        }
        String user = "";
        if (d.redisAuth != null) {
            int colon = d.redisAuth.indexOf(':');
            if (colon >= 0) {
                user = d.redisAuth.substring(0, colon) + "@";
                d.redisAuth = d.redisAuth.substring(colon + 1);
            }
        }
        String scheme;
        switch (d.redisType) {
            case "single" -> scheme = d.redisTls ? "rediss://" : "redis://";
            case "cluster" -> {
                if (d.redisTls) {
                    d.refuse("REDIS_TLS", "a Redis Cluster is reached without TLS (redis-cluster://)");
                }
                scheme = "redis-cluster://";
            }
            case "sentinel" -> {
                if (d.redisTls) {
                    d.refuse("REDIS_TLS", "Redis Sentinel is reached without TLS (redis-sentinel://)");
                }
                String[] parts = d.redisUrl.split(",", 2);
                if (parts.length < 2
                        || parts[0].isBlank()
                        || parts[1].isBlank()
                        || d.redisUrl.contains("://")
                        || d.redisUrl.contains("@")
                        || d.redisUrl.contains("#")) {
                    d.refusals.add("REDIS_URL='" + dev.sluice.assembly.StoreAssembly.redact(d.redisUrl) + "' is not"
                            + " valid with REDIS_TYPE=sentinel: expected MASTER,HOST:PORT[,HOST:PORT…], the master's"
                            + " name and the sentinels, as envoyproxy/ratelimit reads it");
                    return;
                }
                d.option("store", "redis-sentinel://" + user + parts[1] + "#" + parts[0]);
                return;
            }
            default -> {
                d.refusals.add("REDIS_TYPE='" + d.redisType + "' is not valid: expected single, cluster or sentinel");
                return;
            }
        }
        if (d.redisUrl.contains("://") || d.redisUrl.contains("@")) {
            d.refusals.add("REDIS_URL='" + dev.sluice.assembly.StoreAssembly.redact(d.redisUrl) + "' is not valid:"
                    + " expected host:port (host:port,host:port… for a cluster), as envoyproxy/ratelimit reads it;"
                    + " the password goes in REDIS_AUTH");
            return;
        }
        d.option("store", scheme + user + d.redisUrl + (d.redisTls ? redisTlsQuery(d) : ""));
    }

    /** The variables of the TLS files, by the store URI's parameter. */
    private static final Map<String, String> REDIS_TLS_VARIABLES =
            Map.of("tlsCa", "REDIS_TLS_CACERT", "tlsCert", "REDIS_TLS_CLIENT_CERT", "tlsKey", "REDIS_TLS_CLIENT_KEY");

    /**
     * The query of a {@code rediss://} store URI for the TLS variables: the files (each checked to be readable here, so
     * that a wrong path names its variable) and {@code verifyPeer=CA}; "" for none.
     */
    private static String redisTlsQuery(Draft d) {
        List<String> query = new ArrayList<>();
        for (Map.Entry<String, String> f : d.redisTlsFiles.entrySet()) {
            String variable = REDIS_TLS_VARIABLES.get(f.getKey());
            Path file = Path.of(f.getValue());
            if (!Files.isReadable(file) || Files.isDirectory(file)) {
                d.refusals.add(variable + "='" + f.getValue() + "' is not valid: expected a readable file (PEM)");
            }
            query.add(f.getKey() + "=" + queryValue(f.getValue()));
        }
        if (d.redisTlsFiles.containsKey("tlsCert") != d.redisTlsFiles.containsKey("tlsKey")) {
            d.refuse(
                    d.redisTlsFiles.containsKey("tlsCert") ? "REDIS_TLS_CLIENT_CERT" : "REDIS_TLS_CLIENT_KEY",
                    "a client certificate needs its key: set both REDIS_TLS_CLIENT_CERT and REDIS_TLS_CLIENT_KEY");
        }
        if (d.redisTlsSkipHostname) {
            query.add("verifyPeer=CA");
        }
        return query.isEmpty() ? "" : "?" + String.join("&", query);
    }

    /** {@code value} as a URI query's value: the characters a query gives a meaning to, %-encoded. */
    private static String queryValue(String value) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '%', '&', '#', '+', ' ', '?' -> b.append('%').append(String.format(Locale.ROOT, "%02X", (int) c));
                default -> b.append(c);
            }
        }
        return b.toString();
    }

    private static void configType(String value, Draft d) {
        switch (value.toUpperCase(Locale.ROOT)) {
            case "FILE" -> d.configType = "FILE";
            case "GRPC_XDS_SOTW" -> d.configType = "GRPC_XDS_SOTW";
            default -> d.refusals.add("CONFIG_TYPE='" + value + "' is not valid: expected FILE or GRPC_XDS_SOTW");
        }
    }

    /** Read with the same meaning as envoyproxy/ratelimit's. */
    private static Variable honoured(
            String name, Kind kind, String defaultValue, String sluice, BiConsumer<String, Draft> apply) {
        return new Variable(name, kind, defaultValue, Status.HONOURED, sluice, apply);
    }

    /** Read as the Sluice option {@code sluice} names. */
    private static Variable mapped(
            String name, Kind kind, String defaultValue, String sluice, BiConsumer<String, Draft> apply) {
        return new Variable(name, kind, defaultValue, Status.MAPPED, sluice, apply);
    }

    /** Noted whenever set. */
    private static Variable noted(String name, Kind kind, String defaultValue, String why) {
        return noted(name, kind, defaultValue, why, null);
    }

    /** Noted when set to anything but {@code quietAt}, the value that asks for what Sluice does anyway. */
    private static Variable noted(String name, Kind kind, String defaultValue, String why, @Nullable String quietAt) {
        return new Variable(name, kind, defaultValue, Status.NOTED, why, (v, d) -> {
            if (!v.equals(quietAt)) {
                d.note(name, why);
            }
        });
    }

    /** Refused unless set to its default (compared as read: {@code 24h} and {@code 1440m} are one value). */
    private static Variable refused(String name, Kind kind, String defaultValue, String why) {
        String normalDefault = defaultValue.isEmpty() ? "" : normalize(kind, defaultValue);
        return new Variable(name, kind, defaultValue, Status.REFUSED, why, (v, d) -> {
            if (!v.equals(normalDefault)) {
                d.refuse(name, why);
            }
        });
    }

    /** The value as the option {@code --name}. */
    private static BiConsumer<String, Draft> option(String name) {
        return (v, d) -> d.option(name, v);
    }

    /** The value as the xDS option {@code --name}, which applies with {@code CONFIG_TYPE=GRPC_XDS_SOTW} only. */
    private static BiConsumer<String, Draft> xds(String name) {
        return (v, d) -> d.xdsOption(name, v);
    }

    /**
     * The value as read, in one spelling: booleans {@code true}/{@code false}, durations in nanoseconds, numbers
     * without leading zeros.
     *
     * @throws IllegalArgumentException with what was expected
     */
    static String normalize(Kind kind, String value) {
        String v = value.trim();
        return switch (kind) {
            case STRING, SECRET -> v;
            case BOOL -> switch (v) {
                case "1", "t", "T", "TRUE", "true", "True" -> "true";
                case "0", "f", "F", "FALSE", "false", "False" -> "false";
                default -> throw new IllegalArgumentException("true or false");
            };
            case INT -> {
                try {
                    yield String.valueOf(Long.parseLong(v));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("a whole number");
                }
            }
            case PORT -> {
                try {
                    int p = Integer.parseInt(v);
                    if (p >= 0 && p <= 65535) {
                        yield String.valueOf(p);
                    }
                } catch (NumberFormatException e) {
                    // below
                }
                throw new IllegalArgumentException("a port number from 0 to 65535 (0: any free port)");
            }
            case FLOAT -> {
                try {
                    yield new BigDecimal(v).stripTrailingZeros().toPlainString();
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("a number such as 0.8");
                }
            }
            case DURATION -> String.valueOf(nanos(v));
        };
    }

    /** Go's {@code time.ParseDuration} for non-negative values, in nanoseconds. */
    static long nanos(String v) {
        if (v.equals("0")) {
            return 0;
        }
        Matcher m = GO_DURATION.matcher(v);
        BigDecimal total = BigDecimal.ZERO;
        int end = 0;
        while (m.find() && m.start() == end) {
            BigDecimal unit =
                    switch (m.group(2)) {
                        case "ns" -> BigDecimal.ONE;
                        case "us", "µs", "μs" -> BigDecimal.valueOf(1_000);
                        case "ms" -> BigDecimal.valueOf(1_000_000);
                        case "s" -> BigDecimal.valueOf(1_000_000_000L);
                        case "m" -> BigDecimal.valueOf(60_000_000_000L);
                        default -> BigDecimal.valueOf(3_600_000_000_000L);
                    };
            total = total.add(new BigDecimal(m.group(1)).multiply(unit));
            end = m.end();
        }
        if (end == 0 || end != v.length()) {
            throw new IllegalArgumentException("a duration such as 300ms, 10s, 1h30m or 150us");
        }
        return total.longValue();
    }
}
