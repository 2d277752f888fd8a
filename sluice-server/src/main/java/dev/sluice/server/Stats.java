package dev.sluice.server;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.config.NamingConvention;
import io.micrometer.core.instrument.util.HierarchicalNameMapper;
import io.micrometer.statsd.StatsdConfig;
import io.micrometer.statsd.StatsdFlavor;
import io.micrometer.statsd.StatsdMeterRegistry;
import io.micrometer.statsd.StatsdProtocol;
import java.time.Duration;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Where the service's meters go besides {@code GET /metrics}: StatsD ({@code --statsd HOST:PORT}, envoyproxy/ratelimit's
 * {@code USE_STATSD}), through Micrometer's own StatsD registry, and whether envoyproxy/ratelimit's names are exported
 * beside Sluice's ({@link EnvoyStats}).
 *
 * @param statsdHost     the StatsD agent's host; null: no StatsD
 * @param statsdPort     its UDP port
 * @param flavor         {@code etsy} (plain names) or {@code datadog} (tags)
 * @param interval       how often gauges are polled and buffered lines flushed
 * @param envoyNames     export envoyproxy/ratelimit's names ({@code --envoy-stats})
 * @param nearLimitRatio the share of a limit past which allowed hits are {@code near_limit}
 */
record Stats(
        @Nullable String statsdHost,
        int statsdPort,
        StatsdFlavor flavor,
        Duration interval,
        boolean envoyNames,
        double nearLimitRatio) {

    static final Stats NONE = new Stats(null, 8125, StatsdFlavor.ETSY, Duration.ofSeconds(10), false, 0.8);

    /** The options {@code --statsd}, {@code --statsd-flavor}, {@code --statsd-interval}, {@code --envoy-stats}. */
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
        return new Stats(
                host, port, flavor, interval == null ? Duration.ofSeconds(10) : interval, o.flag("envoy-stats"), r);
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
