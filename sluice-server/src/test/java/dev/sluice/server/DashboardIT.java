package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import dev.sluice.testkit.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dashboard in a real browser: the jar serves a user's configuration, headless Chromium loads {@code /}, and
 * traffic through {@code POST /json} (three clients over their limit, one of them under a dry-run rule, two under it)
 * must show up in both charts of the open page, without reloading it.
 *
 * <p>With {@code -Dsluice.dashboard.screenshot=FILE} it also saves a PNG of the page with the traffic on it (the one
 * in {@code docs/dashboard.png}).
 */
class DashboardIT {
    static final String CONFIG =
            """
            domain: api
            algorithm: sliding_tail
            descriptors:
              - key: client_id
                detailed_metric: true
                rate_limit: {unit: second, requests_per_unit: 5}
              - key: client_id
                value: partner
                detailed_metric: true
                mode: dry_run
                rate_limit: {unit: second, requests_per_unit: 5}
            """;

    /**
     * Requests per tick, at most 30 and 20 a second against the limit of 5. A tick sends its requests at once and
     * waits for their answers; the next starts 100 ms after, so a late tick never catches up with a burst, and a slow
     * machine slows the clients down, the ones over their limit remaining far over it.
     */
    static final Map<String, Integer> OVER = Map.of("acme", 3, "globex", 2, "partner", 2);

    /** One request every so many ticks: at most 2.5 and 1.25 a second, under the limit of 5 a second. */
    static final Map<String, Integer> UNDER = Map.of("initech", 4, "umbrella", 8);

    /** What the page shows, read from the data attributes of its charts. */
    static final String CHARTS =
            """
            JSON.stringify({
              polls: Number(document.body.dataset.polls),
              legendRows: document.querySelectorAll('#legend tbody tr').length,
              charts: Object.fromEntries([...document.querySelectorAll('svg[data-chart]')].map(svg => [svg.dataset.chart, {
                state: svg.dataset.state,
                text: svg.textContent,
                series: Object.fromEntries([...svg.querySelectorAll('[data-series]')].map(p => [p.dataset.client, {
                  points: Number(p.dataset.points), max: Number(p.dataset.max),
                  dashed: p.hasAttribute('stroke-dasharray')}])),
                limits: Object.fromEntries([...svg.querySelectorAll('[data-limit]')].map(l =>
                  [l.dataset.limit, Number(l.dataset.rate)]))
              }]))
            })""";

    @Test
    void bothChartsShowEveryClientLive(@TempDir Path dir) throws IOException {
        Path config = dir.resolve("api.yaml");
        Files.writeString(config, CONFIG);
        try (ServerProcess server = ServerProcess.serve("--config", config.toString());
                Chromium browser = Chromium.start(1280, 720)) {
            browser.navigate(server.uri("/"));

            // Before any traffic: both charts empty, saying so, after the page has polled twice.
            Struct before = Await.succeeds("two polls of the dashboard", Await.GENEROUS, () -> {
                Struct s = charts(browser);
                if (number(s, "polls") < 2) {
                    throw new IllegalStateException("polls so far: " + s);
                }
                return s;
            });
            for (String chart : List.of("denied", "allowed")) {
                Struct c = chart(before, chart);
                assertEquals("empty", c.getFieldsOrThrow("state").getStringValue(), before.toString());
                assertTrue(c.getFieldsOrThrow("text").getStringValue().contains("no traffic yet"), before.toString());
            }

            Traffic traffic = new Traffic(server);
            try {
                Struct seen = Await.succeeds("every client in the charts of the open page", Await.GENEROUS, () -> {
                    traffic.check();
                    Struct s = charts(browser);
                    Set<String> allowed = clientsWithData(chart(s, "allowed"), 3);
                    Set<String> denied = clientsWithData(chart(s, "denied"), 1);
                    if (!allowed.containsAll(Set.of("acme", "globex", "partner", "initech", "umbrella"))
                            || !denied.containsAll(OVER.keySet())) {
                        throw new IllegalStateException(
                                "allowed: " + allowed + ", denied: " + denied + "; traffic: " + traffic);
                    }
                    return s;
                });
                traffic.check();

                Struct allowed = chart(seen, "allowed");
                Struct denied = chart(seen, "denied");
                assertEquals("data", allowed.getFieldsOrThrow("state").getStringValue());
                // The limit of each rule with traffic on the chart, in requests per second.
                assertEquals(
                        Map.of("api.client_id#0", 5.0, "api.client_id_partner#0", 5.0),
                        new TreeMap<>(numbers(allowed.getFieldsOrThrow("limits").getStructValue())),
                        seen.toString());
                // The clients under their limit were never refused, and the chart of denials does not show them.
                assertEquals(Set.of(), traffic.refused(UNDER.keySet()));
                assertEquals(OVER.keySet(), series(denied).keySet(), seen.toString());
                // Refusals of the dry-run rule are drawn dashed, the others solid.
                assertTrue(
                        series(denied).get("partner").getFieldsOrThrow("dashed").getBoolValue(), seen.toString());
                assertFalse(
                        series(denied).get("acme").getFieldsOrThrow("dashed").getBoolValue(), seen.toString());
                assertEquals(5, number(seen, "legendRows"), seen.toString());

                HttpResponse<String> data = server.get("/dashboard/data");
                assertEquals(200, data.statusCode());
                assertTrue(
                        data.body()
                                .contains("{\"domain\":\"api\",\"rule\":\"client_id_partner\",\"value\":\"partner\","
                                        + "\"counts\":{\"allowed\":"),
                        data.body());

                String screenshot = System.getProperty("sluice.dashboard.screenshot", "");
                if (!screenshot.isEmpty()) {
                    // Let the lines grow over a few more polls, then take the picture.
                    double polls = number(seen, "polls");
                    Await.until("15 more polls for the screenshot", Await.GENEROUS, () -> {
                        traffic.check();
                        return number(charts(browser), "polls") >= polls + 15;
                    });
                    Files.write(Path.of(screenshot), browser.screenshot());
                    System.out.println("[dashboard] screenshot saved to "
                            + Path.of(screenshot).toAbsolutePath());
                }
            } finally {
                traffic.stop();
            }
        }
    }

    /** Sends the test's requests through {@code POST /json} on a timer, counting them and the refusals per client. */
    static final class Traffic {
        private final HttpClient http = HttpClient.newHttpClient();
        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Map<String, AtomicLong> sent = new ConcurrentHashMap<>();
        private final Map<String, AtomicLong> refused = new ConcurrentHashMap<>();
        private final AtomicLong ticks = new AtomicLong();

        Traffic(ServerProcess server) {
            URI json = server.uri("/json");
            timer.scheduleWithFixedDelay(
                    () -> {
                        try {
                            long tick = ticks.getAndIncrement();
                            List<CompletableFuture<?>> answers = new ArrayList<>();
                            OVER.forEach((client, n) -> {
                                for (int i = 0; i < n; i++) {
                                    answers.add(send(json, client));
                                }
                            });
                            UNDER.forEach((client, every) -> {
                                if (tick % every == 0) {
                                    answers.add(send(json, client));
                                }
                            });
                            CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
                                    .get(60, TimeUnit.SECONDS);
                        } catch (Exception | Error e) {
                            failure.compareAndSet(null, e);
                            throw new IllegalStateException(e);
                        }
                    },
                    0,
                    100,
                    TimeUnit.MILLISECONDS);
        }

        private CompletableFuture<?> send(URI json, String client) {
            sent.computeIfAbsent(client, c -> new AtomicLong()).incrementAndGet();
            HttpRequest request = HttpRequest.newBuilder(json)
                    .timeout(Duration.ofSeconds(30))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"domain\":\"api\",\"descriptors\":[{\"entries\":"
                            + "[{\"key\":\"client_id\",\"value\":\"" + client + "\"}]}]}"))
                    .build();
            return http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).thenAccept(r -> {
                if (r.statusCode() == 429) {
                    refused.computeIfAbsent(client, c -> new AtomicLong()).incrementAndGet();
                } else if (r.statusCode() != 200) {
                    failure.compareAndSet(
                            null,
                            new AssertionError("POST /json for " + client + ": " + r.statusCode() + " " + r.body()));
                }
            });
        }

        @Override
        public String toString() {
            return "sent " + new TreeMap<>(sent) + ", refused " + new TreeMap<>(refused);
        }

        /** Fails if sending failed. */
        void check() {
            Throwable t = failure.get();
            if (t != null) {
                throw new AssertionError("the traffic stopped: " + t, t);
            }
        }

        Set<String> refused(Set<String> clients) {
            Set<String> r = new TreeSet<>();
            for (String c : clients) {
                if (refused.containsKey(c)) {
                    r.add(c);
                }
            }
            return r;
        }

        void stop() {
            timer.shutdownNow();
            try {
                timer.awaitTermination(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static Struct charts(Chromium browser) {
        Value v = browser.evaluate(CHARTS);
        Struct.Builder b = Struct.newBuilder();
        try {
            JsonFormat.parser().merge(v.getStringValue(), b);
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError("the page's charts, not as JSON: " + v, e);
        }
        return b.build();
    }

    private static Struct chart(Struct page, String name) {
        return page.getFieldsOrThrow("charts")
                .getStructValue()
                .getFieldsOrThrow(name)
                .getStructValue();
    }

    private static Map<String, Struct> series(Struct chart) {
        Map<String, Struct> m = new TreeMap<>();
        chart.getFieldsOrThrow("series")
                .getStructValue()
                .getFieldsMap()
                .forEach((k, v) -> m.put(k, v.getStructValue()));
        return m;
    }

    /** The clients whose line has at least {@code points} rates and one of them above zero. */
    private static Set<String> clientsWithData(Struct chart, int points) {
        Set<String> clients = new TreeSet<>();
        series(chart).forEach((client, s) -> {
            if (number(s, "points") >= points && number(s, "max") > 0) {
                clients.add(client);
            }
        });
        return clients;
    }

    private static Map<String, Double> numbers(Struct s) {
        Map<String, Double> m = new TreeMap<>();
        s.getFieldsMap().forEach((k, v) -> m.put(k, v.getNumberValue()));
        return m;
    }

    private static double number(Struct s, String field) {
        return s.getFieldsOrThrow(field).getNumberValue();
    }
}
