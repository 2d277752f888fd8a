package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.testkit.Await;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.micrometer.statsd.StatsdFlavor;
import io.micrometer.statsd.StatsdMeterRegistry;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * StatsD through Micrometer's StatsD registry, received by a UDP listener here: Sluice's meters and, with
 * {@code --envoy-stats}, envoyproxy/ratelimit's names with its counts.
 */
class EnvoyStatsTest {
    static final String POLICY =
            """
            domain: edge
            descriptors:
              - key: remote_address
                value: 10.0.0.1
                rate_limit: {unit: hour, requests_per_unit: 2}
              - key: path
                shadow_mode: true
                rate_limit: {unit: hour, requests_per_unit: 1}
            """;

    @Test
    void envoyproxyRatelimitNamesAndSluicesReachStatsd() throws Exception {
        try (DatagramSocket agent = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            agent.setSoTimeout(200);
            Stats stats = new Stats(
                    "127.0.0.1", agent.getLocalPort(), StatsdFlavor.ETSY, Duration.ofMillis(100), true, 0.8, null);
            StatsdMeterRegistry statsd = stats.statsd();
            try (PolicyLimiter limiter = PolicyLimiter.builder(Policies.parse("edge.yaml", POLICY))
                    .meterRegistry(statsd)
                    .build()) {
                RateLimitAdapter adapter = new RateLimitAdapter(
                        limiter,
                        HeaderStyle.OFF,
                        new ServerMetrics(statsd),
                        RequestCaps.DEFAULTS,
                        new EnvoyStats(statsd, stats.nearLimitRatio()));
                byte[] buffer = new byte[65_536];
                // the registry's UDP client connects in the background: lines sent before that are lost
                Await.until("the agent receives a first line", Await.GENEROUS, () -> {
                    statsd.counter("sluice.test.connected").increment();
                    try {
                        DatagramPacket p = new DatagramPacket(buffer, buffer.length);
                        agent.receive(p);
                        return new String(p.getData(), 0, p.getLength(), StandardCharsets.UTF_8)
                                .contains("sluice.test.connected");
                    } catch (SocketTimeoutException e) {
                        return false;
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                for (int i = 0; i < 3; i++) {
                    adapter.shouldRateLimit(request("edge", descriptor("remote_address", "10.0.0.1")));
                }
                RateLimitResponse shadow = null;
                for (int i = 0; i < 2; i++) {
                    shadow = adapter.shouldRateLimit(request("edge", descriptor("path", "/a")));
                }
                assertEquals(RateLimitResponse.Code.OK, shadow.getOverallCode(), "shadow mode refuses nothing");

                String rule = "ratelimit.service.rate_limit.edge.remote_address_10.0.0.1.";
                String path = "ratelimit.service.rate_limit.edge.path.";
                Map<String, Double> expected = Map.of(
                        rule + "total_hits",
                        3.0,
                        rule + "within_limit",
                        2.0,
                        rule + "over_limit",
                        1.0,
                        rule + "near_limit",
                        1.0, // 0.8 of 2 is 1.6: the second hit is past it
                        path + "total_hits",
                        2.0,
                        path + "over_limit",
                        1.0,
                        path + "shadow_mode",
                        1.0,
                        "ratelimit_server.ShouldRateLimit.total_requests",
                        5.0);
                Map<String, Double> counts = new ConcurrentHashMap<>();
                Map<String, String> seen = new ConcurrentHashMap<>();
                try {
                    Await.until("the expected StatsD lines", Await.GENEROUS, () -> {
                        try {
                            DatagramPacket p = new DatagramPacket(buffer, buffer.length);
                            agent.receive(p);
                            for (String line :
                                    new String(p.getData(), 0, p.getLength(), StandardCharsets.UTF_8).split("\n")) {
                                String[] nameRest = line.split(":", 2);
                                seen.put(nameRest[0], line);
                                if (nameRest.length == 2 && nameRest[1].endsWith("|c")) {
                                    double v = Double.parseDouble(nameRest[1].substring(0, nameRest[1].length() - 2));
                                    counts.merge(nameRest[0], v, Double::sum);
                                }
                            }
                        } catch (SocketTimeoutException e) {
                            // nothing yet
                        } catch (java.io.IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                        return expected.entrySet().stream()
                                        .allMatch(e -> e.getValue().equals(counts.get(e.getKey())))
                                && seen.containsKey("ratelimit_server.ShouldRateLimit.response_time")
                                && seen.keySet().stream().anyMatch(n -> n.startsWith("sluice.policy.requests"));
                    });
                } catch (AssertionError e) {
                    throw new AssertionError("counts " + counts + "; names " + seen.keySet(), e);
                }
                assertTrue(seen.get("ratelimit_server.ShouldRateLimit.response_time")
                        .endsWith("|ms"));
            } finally {
                statsd.close();
            }
        }
    }
}
