package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** envoyproxy/ratelimit's environment variables as serve's options: every one answered, none ignored in silence. */
class EnvSettingsTest {
    /** Every variable of envoyproxy/ratelimit's src/settings/settings.go, in its order. */
    static final List<String> SETTINGS_GO = List.of(
            "HOST",
            "PORT",
            "DEBUG_HOST",
            "DEBUG_PORT",
            "GRPC_UDS",
            "GRPC_HOST",
            "GRPC_PORT",
            "GRPC_MAX_CONNECTION_AGE",
            "GRPC_MAX_CONNECTION_AGE_GRACE",
            "GRPC_SERVER_USE_TLS",
            "GRPC_SERVER_TLS_CERT",
            "GRPC_SERVER_TLS_KEY",
            "GRPC_CLIENT_TLS_CACERT",
            "GRPC_CLIENT_TLS_SAN",
            "LOG_LEVEL",
            "LOG_FORMAT",
            "CONFIG_TYPE",
            "FORCE_START_WITHOUT_INITIAL_CONFIG",
            "CONFIG_GRPC_XDS_NODE_ID",
            "CONFIG_GRPC_XDS_NODE_METADATA",
            "CONFIG_GRPC_XDS_SERVER_URL",
            "CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL",
            "CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS",
            "CONFIG_GRPC_XDS_SERVER_USE_TLS",
            "CONFIG_GRPC_XDS_CLIENT_TLS_CERT",
            "CONFIG_GRPC_XDS_CLIENT_TLS_KEY",
            "CONFIG_GRPC_XDS_SERVER_TLS_CACERT",
            "CONFIG_GRPC_XDS_SERVER_TLS_SAN",
            "XDS_CLIENT_BACKOFF_INITIAL_INTERVAL",
            "XDS_CLIENT_BACKOFF_MAX_INTERVAL",
            "XDS_CLIENT_BACKOFF_RANDOM_FACTOR",
            "XDS_CLIENT_BACKOFF_JITTER",
            "XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES",
            "USE_DOG_STATSD",
            "USE_DOG_STATSD_MOGRIFIERS",
            "USE_STATSD",
            "STATSD_HOST",
            "STATSD_PORT",
            "EXTRA_TAGS",
            "STATS_FLUSH_INTERVAL",
            "DISABLE_STATS",
            "USE_PROMETHEUS",
            "PROMETHEUS_ADDR",
            "PROMETHEUS_PATH",
            "PROMETHEUS_MAPPER_YAML",
            "PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS",
            "RUNTIME_ROOT",
            "RUNTIME_SUBDIRECTORY",
            "RUNTIME_APPDIRECTORY",
            "RUNTIME_IGNOREDOTFILES",
            "RUNTIME_WATCH_ROOT",
            "EXPIRATION_JITTER_MAX_SECONDS",
            "LOCAL_CACHE_SIZE_IN_BYTES",
            "NEAR_LIMIT_RATIO",
            "CACHE_KEY_PREFIX",
            "BACKEND_TYPE",
            "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT",
            "LIMIT_RESPONSE_HEADERS_ENABLED",
            "LIMIT_LIMIT_HEADER",
            "LIMIT_REMAINING_HEADER",
            "LIMIT_RESET_HEADER",
            "HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED",
            "REDIS_SOCKET_TYPE",
            "REDIS_TYPE",
            "REDIS_URL",
            "REDIS_POOL_SIZE",
            "REDIS_AUTH",
            "REDIS_TLS",
            "REDIS_TLS_CLIENT_CERT",
            "REDIS_TLS_CLIENT_KEY",
            "REDIS_TLS_CACERT",
            "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION",
            "REDIS_PIPELINE_WINDOW",
            "REDIS_PIPELINE_LIMIT",
            "REDIS_CLUSTER_PIPELINE_PARALLELISM",
            "REDIS_PERSECOND",
            "REDIS_PERSECOND_SOCKET_TYPE",
            "REDIS_PERSECOND_TYPE",
            "REDIS_PERSECOND_URL",
            "REDIS_PERSECOND_POOL_SIZE",
            "REDIS_PERSECOND_AUTH",
            "REDIS_PERSECOND_TLS",
            "REDIS_SENTINEL_AUTH",
            "REDIS_PERSECOND_SENTINEL_AUTH",
            "REDIS_PERSECOND_PIPELINE_WINDOW",
            "REDIS_PERSECOND_PIPELINE_LIMIT",
            "REDIS_PERSECOND_CLUSTER_PIPELINE_PARALLELISM",
            "REDIS_HEALTH_CHECK_ACTIVE_CONNECTION",
            "REDIS_TIMEOUT",
            "REDIS_PERSECOND_TIMEOUT",
            "REDIS_POOL_ON_EMPTY_BEHAVIOR",
            "REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR",
            "REDIS_STARTUP_INITIAL_INTERVAL",
            "REDIS_STARTUP_MAX_INTERVAL",
            "REDIS_STARTUP_MAX_ELAPSED_TIME",
            "MEMCACHE_HOST_PORT",
            "MEMCACHE_MAX_IDLE_CONNS",
            "MEMCACHE_SRV",
            "MEMCACHE_SRV_REFRESH",
            "MEMCACHE_TLS",
            "MEMCACHE_TLS_CLIENT_CERT",
            "MEMCACHE_TLS_CLIENT_KEY",
            "MEMCACHE_TLS_CACERT",
            "MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION",
            "SHADOW_MODE",
            "QUOTA_MODE",
            "RESPONSE_DYNAMIC_METADATA",
            "MERGE_DOMAIN_CONFIG",
            "TRACING_ENABLED",
            "TRACING_SERVICE_NAME",
            "TRACING_SERVICE_NAMESPACE",
            "TRACING_SERVICE_INSTANCE_ID",
            "TRACING_EXPORTER_PROTOCOL",
            "TRACING_SAMPLING_RATE");

    private static EnvSettings.Result read(String... pairs) {
        Map<String, String> env = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            env.put(pairs[i], pairs[i + 1]);
        }
        return EnvSettings.read(env);
    }

    private static String refusal(String... pairs) {
        return assertThrows(UsageException.class, () -> read(pairs)).getMessage();
    }

    @Test
    void everyVariableOfItsSettingsHasARow() {
        List<String> missing = new ArrayList<>(SETTINGS_GO);
        missing.removeAll(EnvSettings.names());
        assertEquals(List.of(), missing);
        for (String name : SETTINGS_GO) {
            EnvSettings.Variable v = EnvSettings.variable(name);
            assertFalse(v.sluice().isBlank(), name);
        }
    }

    /** docs/envoy-ratelimit.md lists every row with its status. */
    @Test
    void theDocsListEveryVariableAsTheTableAnswersIt() throws java.io.IOException {
        List<String> lines = java.nio.file.Files.readAllLines(java.nio.file.Path.of("../docs/envoy-ratelimit.md"));
        for (String name : EnvSettings.names()) {
            String status = EnvSettings.variable(name).status().name().toLowerCase(java.util.Locale.ROOT);
            assertTrue(
                    lines.stream()
                            .anyMatch(l -> l.startsWith("| `" + name + "` |") && l.contains(" | " + status + " | ")),
                    name + " as " + status + " in docs/envoy-ratelimit.md");
        }
    }

    @Test
    void anEnvironmentWithoutItsVariablesAsksForNothing() {
        assertEquals(EnvSettings.Result.NONE, read("HOME", "/root", "SLUICE_ADMIN_TOKEN", "t", "PORT", ""));
    }

    @Test
    void portsHostsAndTheRuntimeDirectoryBecomeOptions() {
        EnvSettings.Result r = read(
                "PORT", "9080",
                "GRPC_PORT", "9081",
                "HOST", "0.0.0.0",
                "GRPC_HOST", "0.0.0.0",
                "RUNTIME_ROOT", "/data",
                "RUNTIME_SUBDIRECTORY", "ratelimit",
                "RUNTIME_IGNOREDOTFILES", "true",
                "RUNTIME_WATCH_ROOT", "false",
                "LOG_LEVEL", "info",
                "LOG_FORMAT", "json",
                "LIMIT_RESPONSE_HEADERS_ENABLED", "True",
                "FORCE_START_WITHOUT_INITIAL_CONFIG", "true");
        assertEquals(
                List.of(
                        "--http-port=9080",
                        "--grpc-port=9081",
                        "--log-level=info",
                        "--log-format=json",
                        "--response-headers=draft03",
                        "--bind=0.0.0.0",
                        "--config=/data/ratelimit/config"),
                r.args());
        assertEquals(List.of(), r.notices());
        assertEquals(
                List.of("--config=/srv/runtime_data/current/ratelimit/rl"),
                read("RUNTIME_SUBDIRECTORY", "ratelimit", "RUNTIME_APPDIRECTORY", "rl")
                        .args());
    }

    @Test
    void xdsAsEnvoyGatewayConfiguresIt() {
        EnvSettings.Result r = read(
                "CONFIG_TYPE", "GRPC_XDS_SOTW",
                "CONFIG_GRPC_XDS_SERVER_URL", "envoy-gateway:18001",
                "CONFIG_GRPC_XDS_NODE_ID", "ratelimit",
                "CONFIG_GRPC_XDS_NODE_METADATA", "a=1,b=2",
                "CONFIG_GRPC_XDS_SERVER_USE_TLS", "true",
                "CONFIG_GRPC_XDS_SERVER_TLS_CACERT", "/certs/ca.crt",
                "CONFIG_GRPC_XDS_CLIENT_TLS_CERT", "/certs/tls.crt",
                "CONFIG_GRPC_XDS_CLIENT_TLS_KEY", "/certs/tls.key",
                "CONFIG_GRPC_XDS_SERVER_TLS_SAN", "eg.example",
                "CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL", "1500us",
                "XDS_CLIENT_BACKOFF_MAX_INTERVAL", "2m",
                "FORCE_START_WITHOUT_INITIAL_CONFIG", "true");
        assertEquals(
                List.of(
                        "--xds-ready-without-config",
                        "--xds-server=envoy-gateway:18001",
                        "--xds-node-id=ratelimit",
                        "--xds-node-metadata=a=1,b=2",
                        "--xds-tls",
                        "--xds-tls-ca=/certs/ca.crt",
                        "--xds-tls-cert=/certs/tls.crt",
                        "--xds-tls-key=/certs/tls.key",
                        "--xds-tls-san=eg.example",
                        "--xds-retry-interval=2ms",
                        "--xds-retry-max=120000ms"),
                r.args().stream()
                        .sorted(java.util.Comparator.comparing(a -> order(a)))
                        .toList());
        assertEquals(
                List.of("--xds-server=localhost:18000"),
                read("CONFIG_TYPE", "GRPC_XDS_SOTW").args());
        EnvSettings.Result files = read("CONFIG_GRPC_XDS_NODE_ID", "n");
        assertEquals(List.of(), files.args());
        assertEquals(
                List.of("CONFIG_GRPC_XDS_NODE_ID='n' has no effect: it applies to CONFIG_TYPE=GRPC_XDS_SOTW only"),
                files.notices());
        assertTrue(refusal("CONFIG_TYPE", "GRPC_XDS_SOTW", "XDS_CLIENT_BACKOFF_INITIAL_INTERVAL", "5s")
                .contains("XDS_CLIENT_BACKOFF_INITIAL_INTERVAL='5s' is not supported: Sluice has one first wait"));
    }

    /** The order the options are listed in above. */
    private static int order(String arg) {
        List<String> names = List.of(
                "--xds-ready-without-config",
                "--xds-server",
                "--xds-node-id",
                "--xds-node-metadata",
                "--xds-tls",
                "--xds-tls-ca",
                "--xds-tls-cert",
                "--xds-tls-key",
                "--xds-tls-san",
                "--xds-retry-interval",
                "--xds-retry-max");
        String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
        return names.indexOf(name);
    }

    @Test
    void sentinelAsEnvoyproxyRatelimitNamesIt() {
        EnvSettings.Result r = read(
                "REDIS_SOCKET_TYPE", "tcp",
                "REDIS_TYPE", "sentinel",
                "REDIS_URL", "mymaster,s1:26379,s2:26379",
                "REDIS_AUTH", "s3cr3t");
        assertEquals(List.of("--store=redis-sentinel://s1:26379,s2:26379#mymaster"), r.args());
        assertEquals("s3cr3t", r.storePassword());
        assertTrue(refusal("REDIS_SOCKET_TYPE", "tcp", "REDIS_TYPE", "sentinel", "REDIS_URL", "s1:26379")
                .contains("is not valid with REDIS_TYPE=sentinel: expected MASTER,HOST:PORT"));
    }

    @Test
    void redisAsEnvoyGatewayNamesIt() {
        EnvSettings.Result r =
                read("REDIS_SOCKET_TYPE", "tcp", "REDIS_URL", "redis.infra:6379", "REDIS_AUTH", "s3cr3t");
        assertEquals(List.of("--store=redis://redis.infra:6379"), r.args());
        assertEquals("s3cr3t", r.storePassword());
        r = read(
                "REDIS_SOCKET_TYPE",
                "tcp",
                "REDIS_TYPE",
                "CLUSTER",
                "REDIS_URL",
                "a:7000,b:7001",
                "REDIS_AUTH",
                "app:pw");
        assertEquals(List.of("--store=redis-cluster://app@a:7000,b:7001"), r.args());
        assertEquals("pw", r.storePassword());
        assertEquals(
                List.of("--store=rediss://r:6380"),
                read("REDIS_SOCKET_TYPE", "tcp", "REDIS_URL", "r:6380", "REDIS_TLS", "1")
                        .args());
    }

    /** Envoy Gateway's Redis with a client certificate: the files as query parameters of the rediss:// store. */
    @Test
    void redisTlsCertificatesBecomeTheStoresParameters(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws java.io.IOException {
        String ca = java.nio.file.Files.writeString(dir.resolve("ca.crt"), "ca").toString();
        String cert =
                java.nio.file.Files.writeString(dir.resolve("tls.crt"), "cert").toString();
        String key = java.nio.file.Files.writeString(dir.resolve("a&b #1.key"), "key")
                .toString();
        EnvSettings.Result r = read(
                "REDIS_SOCKET_TYPE", "tcp",
                "REDIS_URL", "redis.infra:6380",
                "REDIS_TLS", "true",
                "REDIS_TLS_CACERT", ca,
                "REDIS_TLS_CLIENT_CERT", cert,
                "REDIS_TLS_CLIENT_KEY", key,
                "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION", "true");
        assertEquals(
                List.of("--store=rediss://redis.infra:6380?tlsCert=" + cert + "&tlsKey=" + dir + "/a%26b%20%231.key"
                        + "&tlsCa=" + ca + "&verifyPeer=CA"),
                r.args());
        assertEquals(List.of(), r.notices());
        String missing = dir.resolve("missing.crt").toString();
        String m = refusal(
                "REDIS_SOCKET_TYPE", "tcp",
                "REDIS_URL", "r:6380",
                "REDIS_TLS", "true",
                "REDIS_TLS_CACERT", missing,
                "REDIS_TLS_CLIENT_CERT", cert);
        assertTrue(m.contains("REDIS_TLS_CACERT='" + missing + "' is not valid: expected a readable file (PEM)"), m);
        assertTrue(
                m.contains("REDIS_TLS_CLIENT_CERT='" + cert + "' is not supported: a client certificate needs its"
                        + " key"),
                m);
        EnvSettings.Result plain = read("REDIS_SOCKET_TYPE", "tcp", "REDIS_URL", "r:6379", "REDIS_TLS_CACERT", ca);
        assertEquals(List.of("--store=redis://r:6379"), plain.args());
        assertEquals(
                List.of("REDIS_TLS_CACERT='" + ca + "' has no effect: Redis is reached over TLS only with"
                        + " REDIS_TLS=true"),
                plain.notices());
    }

    @Test
    void refusalsNameEveryVariableAndWhatToUseInstead() {
        String m = refusal(
                "REDIS_URL", "/var/run/nutcracker/ratelimit.sock",
                "MEMCACHE_HOST_PORT", "m:11211",
                "LOCAL_CACHE_SIZE_IN_BYTES", "1048576",
                "REDIS_SENTINEL_AUTH", "s3cr3t",
                "PORT", "http");
        assertTrue(m.contains("MEMCACHE_HOST_PORT='m:11211' is not supported: Sluice has no memcached store"), m);
        assertFalse(m.contains("LOCAL_CACHE_SIZE_IN_BYTES"), m); // mapped: --over-limit-cache
        assertTrue(m.contains("REDIS_SENTINEL_AUTH=*** is not supported"), m);
        assertTrue(m.contains("PORT='http' is not valid: expected a port number from 0 to 65535"), m);
        assertTrue(
                m.contains("REDIS_SOCKET_TYPE=unix (its default) is not supported: Sluice reaches Redis over TCP;"
                        + " set REDIS_SOCKET_TYPE=tcp"),
                m);
        assertFalse(m.contains("s3cr3t"), m);
        assertTrue(refusal("CONFIG_TYPE", "xml").contains("CONFIG_TYPE='xml' is not valid: expected FILE or"));
        assertTrue(refusal("HOST", "127.0.0.1", "GRPC_HOST", "0.0.0.0")
                .contains("GRPC_HOST='0.0.0.0' is not supported: Sluice binds every port to one address"));
        assertTrue(refusal("REDIS_SOCKET_TYPE", "tcp", "REDIS_URL", "redis://:pw@r:6379")
                .contains("REDIS_URL='redis://:***@r:6379' is not valid: expected host:port"));
    }

    @Test
    void aRefusedVariableAtItsDefaultIsAccepted() {
        assertEquals(
                EnvSettings.Result.NONE.args(),
                read(
                                "XDS_CLIENT_BACKOFF_INITIAL_INTERVAL", "10000ms",
                                "MEMCACHE_MAX_IDLE_CONNS", "2",
                                "TRACING_ENABLED", "false",
                                "XDS_CLIENT_BACKOFF_RANDOM_FACTOR", "0.50",
                                "CONFIG_TYPE", "file")
                        .args());
    }

    @Test
    void variablesWithNoEffectAreSaidToHaveNone() {
        EnvSettings.Result r = read("REDIS_POOL_SIZE", "20", "REDIS_AUTH", "s3cr3t");
        assertEquals(
                List.of(
                        "REDIS_POOL_SIZE='20' has no effect: Sluice's Redis client multiplexes every call on one"
                                + " connection per node",
                        "REDIS_AUTH has no effect: no REDIS_URL names a store"),
                r.notices());
        assertNull(r.storePassword());
    }

    /** LOCAL_CACHE_SIZE_IN_BYTES as entries of the over-limit cache: a refusal kept takes about 256 bytes. */
    @Test
    void theLocalCacheSizeIsTheOverLimitCachesEntries() {
        assertEquals(
                List.of("--over-limit-cache=4096"),
                read("LOCAL_CACHE_SIZE_IN_BYTES", "1048576").args());
        assertEquals(
                List.of("--over-limit-cache=1"),
                read("LOCAL_CACHE_SIZE_IN_BYTES", "100").args());
        assertEquals(List.of(), read("LOCAL_CACHE_SIZE_IN_BYTES", "0").args());
        assertEquals(
                List.of("--over-limit-cache=" + Integer.MAX_VALUE),
                read("LOCAL_CACHE_SIZE_IN_BYTES", "9223372036854775807").args());
    }

    @Test
    void statsdAsEnvoyproxyRatelimitSendsIt() {
        assertEquals(
                List.of(
                        "--statsd-interval=1000ms",
                        "--near-limit-ratio=0.9",
                        "--statsd=statsd.infra:9125",
                        "--envoy-stats"),
                read(
                                "USE_STATSD",
                                "true",
                                "STATSD_HOST",
                                "statsd.infra",
                                "STATSD_PORT",
                                "9125",
                                "STATS_FLUSH_INTERVAL",
                                "1s",
                                "NEAR_LIMIT_RATIO",
                                "0.90")
                        .args());
        assertEquals(
                List.of(), read("USE_STATSD", "true", "DISABLE_STATS", "true").args());
        assertEquals(
                List.of("--statsd=localhost:8125", "--envoy-stats", "--statsd-flavor=datadog"),
                read("USE_DOG_STATSD", "true").args());
    }

    /** As Envoy Gateway sets them: a listener on :19001 with the mapping file of an optional ConfigMap. */
    @Test
    void prometheusAsEnvoyGatewayTurnsItOn() {
        assertEquals(
                List.of("--prometheus-addr=:19001", "--prometheus-mapper=/etc/statsd-exporter/conf.yaml"),
                read(
                                "USE_PROMETHEUS", "true",
                                "PROMETHEUS_ADDR", ":19001",
                                "PROMETHEUS_MAPPER_YAML", "/etc/statsd-exporter/conf.yaml",
                                "USE_STATSD", "false")
                        .args());
        assertEquals(
                List.of("--prometheus-addr=:9090", "--prometheus-path=/prom", "--prometheus-response-time-ms"),
                read(
                                "USE_PROMETHEUS", "1",
                                "PROMETHEUS_PATH", "/prom",
                                "PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS", "true")
                        .args());
        EnvSettings.Result off = read("PROMETHEUS_ADDR", ":19001", "PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS", "1");
        assertEquals(List.of(), off.args());
        assertEquals(
                List.of(
                        "PROMETHEUS_ADDR=':19001' has no effect: it applies with USE_PROMETHEUS=true only",
                        "PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS='1' has no effect: it applies with"
                                + " USE_PROMETHEUS=true only"),
                off.notices());
        EnvSettings.Result disabled = read("USE_PROMETHEUS", "true", "DISABLE_STATS", "true");
        assertEquals(List.of(), disabled.args());
        assertEquals(
                List.of("USE_PROMETHEUS='true' has no effect: DISABLE_STATS=true turns every stats sink off, as in"
                        + " envoyproxy/ratelimit"),
                disabled.notices());
    }

    /** As Envoy Gateway sets them: TLS only with GRPC_SERVER_USE_TLS=true, its CA asking for no client certificate. */
    @Test
    void grpcTlsAndConnectionAge() {
        assertEquals(
                List.of(
                        "--grpc-max-connection-age=5400000ms",
                        "--grpc-max-connection-age-grace=1500ms",
                        "--grpc-tls-cert=/certs/tls.crt",
                        "--grpc-tls-key=/certs/tls.key"),
                read(
                                "GRPC_MAX_CONNECTION_AGE", "1h30m",
                                "GRPC_MAX_CONNECTION_AGE_GRACE", "1.5s",
                                "GRPC_SERVER_USE_TLS", "true",
                                "GRPC_SERVER_TLS_CERT", "/certs/tls.crt",
                                "GRPC_SERVER_TLS_KEY", "/certs/tls.key",
                                "GRPC_SERVER_TLS_CA_CERT", "/certs/ca.crt")
                        .args());
        assertEquals(
                List.of("--grpc-tls-cert=c.pem", "--grpc-tls-key=k.pem", "--grpc-tls-ca=ca.pem"),
                read(
                                "GRPC_SERVER_USE_TLS", "1",
                                "GRPC_SERVER_TLS_CERT", "c.pem",
                                "GRPC_SERVER_TLS_KEY", "k.pem",
                                "GRPC_CLIENT_TLS_CACERT", "ca.pem")
                        .args());
        assertEquals(List.of(), read("GRPC_MAX_CONNECTION_AGE", "0").args());
        EnvSettings.Result off = read("GRPC_SERVER_TLS_CERT", "c.pem");
        assertEquals(List.of(), off.args());
        assertEquals(
                List.of("GRPC_SERVER_TLS_CERT='c.pem' has no effect: gRPC is served over TLS only with"
                        + " GRPC_SERVER_USE_TLS=true"),
                off.notices());
        assertTrue(refusal("GRPC_SERVER_USE_TLS", "true", "GRPC_SERVER_TLS_CERT", "c.pem")
                .contains("GRPC_SERVER_USE_TLS='true' is not supported: TLS needs a certificate and a key"));
    }

    @Test
    void shadowModeRunsEveryRuleAsDryRun() {
        assertEquals(List.of("--shadow-mode"), read("SHADOW_MODE", "True").args());
        assertEquals(List.of(), read("SHADOW_MODE", "false").args());
        assertEquals(List.of(), read("SHADOW_MODE", "false").notices());
        assertTrue(refusal("SHADOW_MODE", "on").contains("SHADOW_MODE='on' is not valid: expected true or false"));
        assertTrue(refusal("QUOTA_MODE", "true").contains("QUOTA_MODE='true' is not supported"));
    }

    @Test
    void goDurations() {
        assertEquals(150_000, EnvSettings.nanos("150us"));
        assertEquals(5_400_000_000_000L, EnvSettings.nanos("1h30m"));
        assertEquals(1_500_000_000L, EnvSettings.nanos("1.5s"));
        assertEquals(0, EnvSettings.nanos("0"));
        assertThrows(IllegalArgumentException.class, () -> EnvSettings.nanos("10"));
        assertThrows(IllegalArgumentException.class, () -> EnvSettings.nanos("1h 30m"));
    }

    @Test
    void aFlagWinsOverTheEnvironment() {
        EnvSettings.Result r = read("PORT", "9080", "GRPC_PORT", "9081");
        List<String> all = new ArrayList<>(r.args());
        all.addAll(List.of("--http-port", "7000"));
        Options o = Options.parse("serve", all, Set.of("http-port", "grpc-port"), Set.of());
        assertEquals(7000, o.port("http-port", 8080));
        assertEquals(9081, o.port("grpc-port", 8081));
    }
}
