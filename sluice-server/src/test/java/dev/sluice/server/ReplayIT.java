package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Value;
import dev.sluice.policy.Descriptor;
import dev.sluice.policy.Policies;
import dev.sluice.policy.Rule;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code replay} as users meet it: the real jar. It answers as the service does (the same log sent to a real service
 * on a hand-moved clock gives the same per-key counts), draws its progress bar on a terminal only, and writes a report
 * that a real browser renders, as it renders {@code simulate}'s.
 *
 * <p>The progress bar and the report share one generated log ({@link #tokens}); each replay of the jar runs while the
 * test does its other work (sending the log to the service, the run on a terminal), and is waited for where its
 * answer is compared.
 *
 * <p>With {@code -Dsluice.replay.screenshot=FILE} the report test also saves a PNG of the page (the one in
 * {@code docs/images/replay-report.png}).
 */
class ReplayIT {
    @TempDir
    static Path dir;

    /** A token log long enough for the progress bar to be drawn before the replay ends: 20,000 lines over a minute. */
    static Path tokens;

    @BeforeAll
    static void tokenLog() throws IOException {
        tokens = dir.resolve("tokens.jsonl");
        dev.sluice.server.replay.TokenLog.write(tokens, 20_000, 60, 1);
    }

    /** Runs the jar with {@code args} on another thread. */
    private static CompletableFuture<ServerProcess.Result> runLater(String... args) {
        return CompletableFuture.supplyAsync(() -> ServerProcess.run(args));
    }

    /** Every mode and algorithm the comparison covers, with cost and replaces. */
    static final String POLICY =
            """
            domain: oauth-token
            algorithm: sliding_tail
            descriptors:
              - key: client_id
                rate_limit: {unit: second, requests_per_unit: 4}
                descriptors:
                  - key: username
                    algorithm: fixed_window
                    rate_limit: {unit: minute, requests_per_unit: 3}
              - key: client_id
                value: trusted-backend
                rate_limit: {unlimited: true}
              - key: client_id
                value: partner
                mode: dry_run
                algorithm: token_bucket
                rate_limit: {unit: second, requests_per_unit: 2}
              - key: client_id
                value: scraper
                mode: shadow_ban
                algorithm: leaky_bucket
                rate_limit: {window: 2s, requests_per_unit: 3}
              - key: client_id
                value: batch
                algorithm: sliding_window_counter
                rate_limit: {unit: second, requests_per_unit: 5}
              - key: ip
                algorithm: sliding_log
                rate_limit: {unit: second, requests_per_unit: 6, name: per-ip}
              - key: vip
                rate_limit: {unit: second, requests_per_unit: 100, replaces: [{name: per-ip}]}
            """;

    /** One request of the log: its time, its {@code /json} body, and its descriptors. */
    record Line(long time, String body, List<Descriptor> descriptors) {}

    private static List<Line> log(int n) {
        Random random = new Random(7);
        String[] clients = {"a", "b", "trusted-backend", "partner", "scraper", "batch"};
        List<Line> lines = new ArrayList<>();
        long time = 1_795_780_800_000L;
        for (int i = 0; i < n; i++) {
            time += random.nextInt(8) == 0 ? random.nextInt(1500) : random.nextInt(120);
            List<Descriptor> ds = new ArrayList<>();
            int kind = random.nextInt(10);
            String client = clients[random.nextInt(clients.length)];
            int hits = random.nextInt(6) == 0 ? 2 : 0;
            if (kind < 6) {
                ds.add(Descriptor.of("client_id", client));
            } else if (kind < 8) {
                ds.add(Descriptor.of("client_id", client, "username", random.nextBoolean() ? "bob" : "eve"));
            } else {
                ds.add(Descriptor.of("ip", "10.0.0." + random.nextInt(2)));
                if (random.nextBoolean()) {
                    ds.add(Descriptor.of("vip", "yes"));
                }
                ds.add(Descriptor.of("client_id", client));
            }
            StringBuilder b = new StringBuilder("{\"domain\":\"oauth-token\",\"descriptors\":[");
            for (int d = 0; d < ds.size(); d++) {
                b.append(d == 0 ? "" : ",").append("{\"entries\":[");
                List<Descriptor.Entry> entries = ds.get(d).entries();
                for (int e = 0; e < entries.size(); e++) {
                    b.append(e == 0 ? "" : ",")
                            .append("{\"key\":\"")
                            .append(entries.get(e).key())
                            .append("\",\"value\":\"")
                            .append(entries.get(e).value())
                            .append("\"}");
                }
                b.append("]}");
            }
            b.append("]").append(hits > 0 ? ",\"hits_addend\":" + hits : "").append("}");
            lines.add(new Line(time, b.toString(), ds));
        }
        return lines;
    }

    private static String key(Descriptor d) {
        StringBuilder b = new StringBuilder();
        for (Descriptor.Entry e : d.entries()) {
            b.append(b.length() == 0 ? "" : ",").append(e.key()).append('=').append(e.value());
        }
        return b.toString();
    }

    @Test
    void theServiceOnAHandMovedClockCountsAsReplayDoes() throws Exception {
        Path config = Files.writeString(dir.resolve("policy.yaml"), POLICY);
        List<Line> lines = log(600);
        StringBuilder jsonl = new StringBuilder();
        for (Line l : lines) {
            jsonl.append("{\"time\":")
                    .append(l.time())
                    .append(',')
                    .append(l.body().substring(1))
                    .append('\n');
        }
        Path logFile = Files.writeString(dir.resolve("log.jsonl"), jsonl);
        CompletableFuture<ServerProcess.Result> replayed =
                runLater("replay", "--config", config.toString(), "--log", logFile.toString(), "--csv");

        Policies policies = Policies.load(config);
        // per rule and key: requests, allowed, denied, as the service answered them
        Map<String, long[]> counts = new TreeMap<>();
        String token = "replay-test-token";
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        try (ServerProcess server = ServerProcess.serve(
                Map.of("SLUICE_ADMIN_TOKEN", token, "JAVA_TOOL_OPTIONS", "-D" + ManualClock.PROPERTY + "=true"),
                "--config",
                config.toString())) {
            URI base = URI.create("http://127.0.0.1:" + server.httpPort());
            for (Line l : lines) {
                HttpResponse<String> moved = http.send(
                        HttpRequest.newBuilder(base.resolve("/clock"))
                                .header("Authorization", "Bearer " + token)
                                .POST(HttpRequest.BodyPublishers.ofString(Long.toString(l.time())))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, moved.statusCode(), moved.body());
                HttpResponse<String> answer = http.send(
                        HttpRequest.newBuilder(base.resolve("/json"))
                                .POST(HttpRequest.BodyPublishers.ofString(l.body()))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                RateLimitResponse r = ServerProcess.parse(answer.body());
                boolean allowed = r.getOverallCode() == RateLimitResponse.Code.OK;
                assertEquals(allowed ? 200 : 429, answer.statusCode());
                for (int i = 0; i < l.descriptors().size(); i++) {
                    Descriptor d = l.descriptors().get(i);
                    Rule rule = policies.match("oauth-token", d).orElse(null);
                    if (rule == null) {
                        continue;
                    }
                    long[] c = counts.computeIfAbsent(
                            "oauth-token," + rule.path() + "," + csvField(key(d)), k -> new long[3]);
                    c[0]++;
                    c[1] += allowed ? 1 : 0;
                    c[2] += r.getStatuses(i).getCode() == RateLimitResponse.Code.OVER_LIMIT ? 1 : 0;
                }
            }
            assertTrue(
                    server.stderr().stream().anyMatch(s -> s.contains("a test clock")),
                    server.stderr().toString());
        }
        StringBuilder expected = new StringBuilder("domain,rule,key,requests,allowed,denied\n");
        Map<String, Integer> order = new TreeMap<>();
        for (Rule r : policies.rules("oauth-token")) {
            order.put(r.path(), order.size());
        }
        List<Map.Entry<String, long[]>> rows = new ArrayList<>(counts.entrySet());
        rows.sort((x, y) -> {
            String[] a = x.getKey().split(",", 3);
            String[] b = y.getKey().split(",", 3);
            int c = Integer.compare(order.get(a[1]), order.get(b[1]));
            return c != 0 ? c : a[2].replace("\"", "").compareTo(b[2].replace("\"", ""));
        });
        long denied = 0;
        for (Map.Entry<String, long[]> e : rows) {
            long[] c = e.getValue();
            expected.append(e.getKey())
                    .append(',')
                    .append(c[0])
                    .append(',')
                    .append(c[1])
                    .append(',')
                    .append(c[2]);
            expected.append('\n');
            denied += c[2];
        }
        assertTrue(denied > 30, "the log exercises the limits: " + denied + " denials");

        ServerProcess.Result replay = replayed.get(90, TimeUnit.SECONDS);
        assertEquals(0, replay.status(), replay.err());
        assertEquals(expected.toString().strip(), replay.out().strip());
    }

    private static String csvField(String s) {
        return s.contains(",") ? "\"" + s + "\"" : s;
    }

    @Test
    void theProgressBarIsDrawnOnATerminalAndNotWhenPiped() throws Exception {
        Path config = Files.writeString(dir.resolve("bar.yaml"), POLICY);
        Path logFile = tokens;
        CompletableFuture<ServerProcess.Result> pipedRun =
                runLater("replay", "--config", config.toString(), "--log", logFile.toString(), "--csv");
        String command = String.join(
                " ",
                ServerProcess.javaJar("replay", "--config", config.toString(), "--log", logFile.toString(), "--csv"));
        // script(1) runs the command on a new pseudo-terminal: standard error is a terminal there
        Process p = new ProcessBuilder("script", "-qfec", command + " > " + dir.resolve("bar.csv"), "/dev/null")
                .redirectErrorStream(true)
                .start();
        String terminal = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), terminal);
        assertTrue(terminal.contains("\rreplay ["), "a bar: " + terminal);
        assertTrue(terminal.contains("lines/s"), terminal);
        String csv = Files.readString(dir.resolve("bar.csv"));
        assertTrue(csv.startsWith("domain,rule,key,requests,allowed,denied\n"), "nothing but the result: " + csv);
        assertFalse(csv.contains("lines/s"));

        ServerProcess.Result piped = pipedRun.get(90, TimeUnit.SECONDS);
        assertEquals(0, piped.status(), piped.err());
        assertEquals("", piped.err(), "quiet when not a terminal");
        assertEquals(csv.strip(), piped.out().strip());
    }

    @Test
    void theReportsRenderInABrowser() throws Exception {
        Path config = Files.writeString(dir.resolve("report.yaml"), POLICY);
        Path report = dir.resolve("report.html");
        CompletableFuture<ServerProcess.Result> replayed = runLater(
                "replay",
                "--config",
                config.toString(),
                "--log",
                tokens.toString(),
                "--report",
                report.toString(),
                "--sweep",
                "oauth-token.client_id=2,4,8,16,32,64");
        Path fleet = dir.resolve("fleet.html");
        ByteArrayOutputStream simulated = new ByteArrayOutputStream();
        PrintStream quiet = new PrintStream(simulated, true, StandardCharsets.UTF_8);
        int simulateStatus = dev.sluice.server.simulate.SimulateCommand.run(
                List.of(
                        "--mode",
                        "exact,synchronized,leased",
                        "--algorithm",
                        "sliding_tail,token_bucket",
                        "--duration",
                        "5s",
                        "--report",
                        fleet.toString()),
                quiet,
                quiet);
        assertEquals(0, simulateStatus, simulated.toString(StandardCharsets.UTF_8));
        ServerProcess.Result r = replayed.get(90, TimeUnit.SECONDS);
        assertEquals(0, r.status(), r.err());
        assertTrue(r.out().contains("sweep of oauth-token client_id"), r.out());
        try (Chromium browser = Chromium.start(1000, 1400)) {
            browser.navigate(fleet.toUri());
            Value panels = browser.evaluate("document.querySelectorAll('svg.admitted, svg.peak').length");
            assertEquals(4, panels.getNumberValue(), "simulate: two charts per algorithm");
            Value runs = browser.evaluate("document.querySelectorAll('svg.admitted polyline').length");
            assertEquals(4, runs.getNumberValue(), "simulate: a line per run");
            Value drawn = browser.evaluate("document.querySelector('svg.admitted polyline').getBBox().width");
            assertTrue(drawn.getNumberValue() > 700, "simulate: a line across the chart: " + drawn);
            Value simulateFetched = browser.evaluate("performance.getEntriesByType('resource').length");
            assertEquals(0, simulateFetched.getNumberValue(), "simulate: nothing fetched");

            browser.navigate(report.toUri());
            Value svgs = browser.evaluate("document.querySelectorAll('svg').length");
            assertTrue(svgs.getNumberValue() >= 3, "charts drawn: " + svgs);
            Value lines = browser.evaluate("document.querySelectorAll('svg.time polyline').length");
            assertTrue(lines.getNumberValue() >= 1, "busiest keys charted: " + lines);
            Value sweep = browser.evaluate("document.querySelector('svg.sweep polyline').getBBox().width");
            assertTrue(sweep.getNumberValue() > 100, "a sweep curve: " + sweep);
            Value fetched = browser.evaluate("performance.getEntriesByType('resource').length");
            assertEquals(0, fetched.getNumberValue(), "nothing fetched");
            String screenshot = System.getProperty("sluice.replay.screenshot", "");
            if (!screenshot.isEmpty()) {
                Files.write(Path.of(screenshot), browser.screenshot());
                System.out.println(
                        "[replay] screenshot saved to " + Path.of(screenshot).toAbsolutePath());
            }
        }
    }
}
