package dev.sluice.server;

import dev.sluice.policy.PolicyLimiter;
import dev.sluice.server.HttpTransport.Answer;
import dev.sluice.server.HttpTransport.Request;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * The Prometheus listener ({@code --prometheus-addr}, envoyproxy/ratelimit's {@code USE_PROMETHEUS} and
 * {@code PROMETHEUS_ADDR}): {@code GET} on its path answers Sluice's meters (as {@code GET /metrics} on the HTTP port
 * does) followed by envoyproxy/ratelimit's stats under the names its Prometheus sink gives them ({@link MappedStats}).
 * It decides nothing.
 */
final class PrometheusApi implements HttpTransport.Handler, AutoCloseable {
    private final HttpTransport transport;
    private final InetSocketAddress address;
    private final String path;
    private final PolicyLimiter limiter;
    private final PrometheusMeterRegistry prometheus;
    private final MappedStats mapped;
    private final ServerMetrics metrics;

    /** @throws IOException if the address cannot be bound */
    PrometheusApi(
            InetSocketAddress address,
            String path,
            PolicyLimiter limiter,
            PrometheusMeterRegistry prometheus,
            MappedStats mapped,
            ServerMetrics metrics)
            throws IOException {
        this.address = address;
        this.path = path;
        this.limiter = limiter;
        this.prometheus = prometheus;
        this.mapped = mapped;
        this.metrics = metrics;
        this.transport = new HttpTransport(address, 2, Duration.ofSeconds(10), Duration.ofSeconds(60), this);
    }

    /** {@code HOST:PORT} it listens on, and its path: {@code 127.0.0.1:9090/metrics}. */
    String address() {
        return address.getAddress().getHostAddress() + ":" + transport.port() + path;
    }

    @Override
    public boolean blocking(Request r) {
        return true;
    }

    @Override
    public Answer busy(Request r) {
        return Answer.error(503, "the Prometheus port is busy, try again").with("Retry-After", "1");
    }

    @Override
    public Answer answer(Request r) {
        Answer wrong = HttpApi.allow(r.method(), "GET");
        if (wrong != null) {
            return wrong;
        }
        if (!r.path().equals(path)) {
            return Answer.error(404, "no such page: " + r.path() + " (the Prometheus port serves " + path + ")");
        }
        metrics.refreshLimits(limiter);
        return Answer.of(200, "text/plain; version=0.0.4; charset=utf-8", prometheus.scrape() + mapped.text());
    }

    @Override
    public void close() {
        transport.close();
    }
}
