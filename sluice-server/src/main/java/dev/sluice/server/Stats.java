package dev.sluice.server;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.config.NamingConvention;
import io.micrometer.core.instrument.util.HierarchicalNameMapper;
import io.micrometer.statsd.StatsdConfig;
import io.micrometer.statsd.StatsdFlavor;
import io.micrometer.statsd.StatsdMeterRegistry;
import io.micrometer.statsd.StatsdProtocol;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Where the service's meters go besides {@code GET /metrics}: StatsD ({@code --statsd HOST:PORT}, envoyproxy/ratelimit's
 * {@code USE_STATSD}), through Micrometer's own StatsD registry; a Prometheus listener of its own
 * ({@code --prometheus-addr}, envoyproxy/ratelimit's {@code USE_PROMETHEUS}); and whether envoyproxy/ratelimit's names
 * are exported beside Sluice's ({@link EnvoyStats}).
 *
 * @param statsdHost     the StatsD agent's host; null: no StatsD
 * @param statsdPort     its UDP port
 * @param flavor         {@code etsy} (plain names) or {@code datadog} (tags)
 * @param interval       how often gauges are polled and buffered lines flushed
 * @param envoyNames     export envoyproxy/ratelimit's names ({@code --envoy-stats}, or a Prometheus listener)
 * @param nearLimitRatio the share of a limit past which allowed hits are {@code near_limit}
 * @param prometheus     the Prometheus listener, or null for none
 */
record Stats(
        @Nullable String statsdHost,
        int statsdPort,
        StatsdFlavor flavor,
        Duration interval,
        boolean envoyNames,
        double nearLimitRatio,
        @Nullable Prometheus prometheus) {

    static final Stats NONE = new Stats(null, 8125, StatsdFlavor.ETSY, Duration.ofSeconds(10), false, 0.8, null);

    /**
     * A Prometheus listener serving Sluice's meters and envoyproxy/ratelimit's stats under the names its Prometheus sink
     * gives them ({@link MappedStats}).
     *
     * @param host    the address to listen on; null: {@code --bind}'s
     * @param port    its port; 0 for any free one
     * @param path    the path it answers on, such as {@code /metrics}
     * @param mapper  the statsd_exporter mapping of envoyproxy/ratelimit's names
     * @param notices lines to print at start (a mapping file that does not exist, an option with no effect)
     */
    record Prometheus(@Nullable InetAddress host, int port, String path, StatsdMapper mapper, List<String> notices) {}

    static final List<String> PROMETHEUS_OPTIONS =
            List.of("prometheus-path", "prometheus-mapper", "prometheus-response-time-ms");

    /**
     * The options {@code --prometheus-addr [HOST]:PORT}, {@code --prometheus-path}, {@code --prometheus-mapper FILE}
     * and {@code --prometheus-response-time-ms}; null without {@code --prometheus-addr}.
     *
     * @throws UsageException for a bad value, or a mapping file that cannot be read or used (naming its line)
     */
    static @Nullable Prometheus prometheus(Options o) {
        String addr = o.string("prometheus-addr");
        if (addr == null) {
            for (String option : PROMETHEUS_OPTIONS) {
                if (o.string(option) != null || o.flag(option)) {
                    throw new UsageException("serve: --" + option + " needs --prometheus-addr");
                }
            }
            return null;
        }
        int colon = addr.lastIndexOf(':');
        String host = colon < 0 ? "" : addr.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = colon < 0 ? -1 : Integer.parseInt(addr.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 0 || port > 65535) {
            throw o.bad(
                    "prometheus-addr",
                    addr,
                    "[HOST]:PORT, such as :9090 (the --bind address) or 0.0.0.0:9090; port 0 for any free one");
        }
        String path = o.string("prometheus-path", "/metrics");
        if (!path.startsWith("/")) {
            throw o.bad("prometheus-path", path, "a path starting with '/', such as /metrics");
        }
        boolean millis = o.flag("prometheus-response-time-ms");
        String file = o.string("prometheus-mapper");
        List<String> notices = new java.util.ArrayList<>();
        StatsdMapper mapper;
        if (file == null) {
            mapper = StatsdMapper.defaults(millis);
        } else if (!Files.exists(Path.of(file))) {
            // envoyproxy/ratelimit then maps nothing, in silence; its default mapping keeps the names dashboards
            // query (docs/envoy-ratelimit.md)
            mapper = StatsdMapper.defaults(millis);
            notices.add("warning: the statsd_exporter mapping " + file + " (--prometheus-mapper) does not exist:"
                    + " envoyproxy/ratelimit's default mapping is used instead");
        } else {
            try {
                mapper = StatsdMapper.read(Path.of(file));
            } catch (IOException e) {
                throw o.bad("prometheus-mapper", file, "a readable statsd_exporter mapping file (" + e + ")");
            } catch (StatsdMapper.MapperException e) {
                throw new UsageException(
                        "serve: the statsd_exporter mapping of --prometheus-mapper cannot be used: " + e.getMessage());
            }
            if (millis) {
                notices.add("--prometheus-response-time-ms has no effect: it changes envoyproxy/ratelimit's default"
                        + " mapping only, and " + file + " is used instead");
            }
        }
        InetAddress address = null;
        if (!host.isEmpty()) {
            try {
                address = InetAddress.getByName(host);
            } catch (UnknownHostException e) {
                throw o.bad("prometheus-addr", addr, "[HOST]:PORT with HOST an IP address or a name of this machine");
            }
        }
        return new Prometheus(address, port, path, mapper, List.copyOf(notices));
    }

    /**
     * The options {@code --statsd}, {@code --statsd-flavor}, {@code --statsd-interval}, {@code --envoy-stats} and
     * {@link #prometheus the Prometheus listener's}.
     */
    static Stats of(Options o) {
        String target = o.string("statsd");
        String host = null;
        int port = 8125;
        if (target != null) {
            int colon = target.lastIndexOf(':');
            String name = colon < 0 ? target : target.substring(0, colon);
            try {
                port = colon < 0 ? 8125 : Integer.parseInt(target.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
            host = name;
            if (name.isEmpty() || port < 1 || port > 65535) {
                throw o.bad("statsd", target, "HOST:PORT of a StatsD agent, such as localhost:8125");
            }
        }
        String f = o.string("statsd-flavor", "etsy");
        StatsdFlavor flavor =
                switch (f.toLowerCase(Locale.ROOT)) {
                    case "etsy" -> StatsdFlavor.ETSY;
                    case "datadog" -> StatsdFlavor.DATADOG;
                    default -> throw o.bad("statsd-flavor", f, "etsy or datadog");
                };
        Duration interval = o.duration("statsd-interval");
        String ratio = o.string("near-limit-ratio", "0.8");
        double r;
        try {
            r = Double.parseDouble(ratio);
        } catch (NumberFormatException e) {
            r = -1;
        }
        if (!(r > 0 && r <= 1)) {
            throw o.bad("near-limit-ratio", ratio, "a number above 0 and at most 1, such as 0.8");
        }
        Prometheus prometheus = prometheus(o);
        return new Stats(
                host,
                port,
                flavor,
                interval == null ? Duration.ofSeconds(10) : interval,
                o.flag("envoy-stats") || prometheus != null,
                r,
                prometheus);
    }

    /** A StatsD registry sending over UDP to the agent, names as given (no case change); null without an agent. */
    @Nullable
    StatsdMeterRegistry statsd() {
        String host = statsdHost;
        if (host == null) {
            return null;
        }
        StatsdConfig config = new StatsdConfig() {
            @Override
            public @Nullable String get(String key) {
                return null;
            }

            @Override
            public StatsdFlavor flavor() {
                return flavor;
            }

            @Override
            public String host() {
                return host;
            }

            @Override
            public int port() {
                return statsdPort;
            }

            @Override
            public StatsdProtocol protocol() {
                return StatsdProtocol.UDP;
            }

            @Override
            public Duration pollingFrequency() {
                return interval;
            }
        };
        // plain names, as envoyproxy/ratelimit sends them: no ".statistic.count" appended to a counter's name
        HierarchicalNameMapper names = (id, convention) -> HierarchicalNameMapper.DEFAULT.toHierarchicalName(
                id.replaceTags(id.getTags().stream()
                        .filter(t -> !t.getKey().equals("statistic"))
                        .toList()),
                convention);
        StatsdMeterRegistry registry = StatsdMeterRegistry.builder(config)
                .clock(Clock.SYSTEM)
                .nameMapper(names)
                .build();
        registry.config().namingConvention(NamingConvention.identity);
        return registry;
    }
}
