package dev.sluice.server;

import dev.sluice.policy.PolicyLimiter;
import dev.sluice.server.HttpTransport.Answer;
import dev.sluice.server.HttpTransport.Request;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The debug port ({@code --debug-port}, envoyproxy/ratelimit's {@code DEBUG_PORT}, 6070 there): {@code GET /rlconfig}
 * (the configuration in force, behind the admin token as on the HTTP port), {@code GET /stats} (every meter as
 * {@code name: value} lines, as envoyproxy/ratelimit's debug port lists its stats) and {@code GET /metrics}
 * (Prometheus text). It decides nothing.
 */
final class DebugApi implements HttpTransport.Handler, AutoCloseable {
    private final HttpTransport transport;
    private final PolicyLimiter limiter;
    private final PrometheusMeterRegistry prometheus;
    private final List<MeterRegistry> stats;
    private final ServerMetrics metrics;
    private final @Nullable String adminToken;

    /**
     * @param stats the meters {@code /stats} lists: Sluice's, and envoyproxy/ratelimit's names when exported
     * @throws IOException if the address cannot be bound
     */
    DebugApi(
            InetSocketAddress address,
            PolicyLimiter limiter,
            PrometheusMeterRegistry prometheus,
            List<MeterRegistry> stats,
            ServerMetrics metrics,
            @Nullable String adminToken)
            throws IOException {
        this.limiter = limiter;
        this.prometheus = prometheus;
        this.stats = stats;
        this.metrics = metrics;
        this.adminToken = adminToken == null || adminToken.isEmpty() ? null : adminToken;
        this.transport = new HttpTransport(address, 2, Duration.ofSeconds(10), Duration.ofSeconds(60), this);
    }

    int port() {
        return transport.port();
    }

    @Override
    public boolean blocking(Request r) {
        return true;
    }

    @Override
    public Answer busy(Request r) {
        return Answer.error(503, "the debug port is busy, try again").with("Retry-After", "1");
    }

    @Override
    public Answer answer(Request r) {
        Answer wrong = HttpApi.allow(r.method(), "GET");
        if (wrong != null) {
            return wrong;
        }
        return switch (r.path()) {
            case "/rlconfig" -> {
                Answer refused = HttpApi.admin(r, adminToken);
                yield refused != null ? refused : Answer.of(200, HttpApi.TEXT, HttpApi.dump(limiter));
            }
            case "/stats" -> {
                metrics.refreshLimits(limiter);
                yield Answer.of(200, HttpApi.TEXT, stats(stats));
            }
            case "/metrics" -> {
                metrics.refreshLimits(limiter);
                yield Answer.of(200, "text/plain; version=0.0.4; charset=utf-8", prometheus.scrape());
            }
            case "/" -> Answer.of(
                    200,
                    HttpApi.TEXT,
                    "/rlconfig: the configuration in force (Authorization: Bearer $SLUICE_ADMIN_TOKEN)\n"
                            + "/stats: every meter, one 'name: value' line each\n/metrics: Prometheus text\n");
            default -> Answer.error(
                    404, "no such page: " + r.path() + " (the debug port serves /rlconfig, /stats" + " and /metrics)");
        };
    }

    /** Every meter of {@code registries} as {@code name[.tag=value…][.statistic]: value} lines, sorted. */
    static String stats(List<MeterRegistry> registries) {
        List<String> lines = new ArrayList<>();
        for (Meter m : registries.stream().flatMap(r -> r.getMeters().stream()).toList()) {
            StringBuilder name = new StringBuilder(m.getId().getName());
            for (Tag t : m.getId().getTags()) {
                name.append('.').append(t.getKey()).append('=').append(t.getValue());
            }
            for (Measurement measurement : m.measure()) {
                String statistic = measurement.getStatistic().getTagValueRepresentation();
                boolean plain = statistic.equals("count") || statistic.equals("value");
                double v = measurement.getValue();
                lines.add(name + (plain ? "" : "." + statistic) + ": "
                        + (v == Math.rint(v) && !Double.isInfinite(v) ? String.valueOf((long) v) : String.valueOf(v)));
            }
        }
        lines.sort(null);
        return String.join("\n", lines) + "\n";
    }

    @Override
    public void close() {
        transport.close();
    }
}
