package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Await;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.grpc.Status;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A bounded fuzz run over the service's three inputs, as a separate process: HTTP ({@code /json} bodies, headers,
 * request lines), gRPC ({@code RateLimitRequest} bytes, random and mutated, and their message framing) and policy files
 * (mutated YAML through {@code POST /reload} and {@code check-config}). Every case is derived from one seed, so a
 * failure names the seed and the case that reproduce it.
 *
 * <p>What each case must get: an answer, and never one that blames the service. HTTP: a status below 500 (a request
 * the service cannot take is 4xx), never a connection closed without one. gRPC: {@code OK}, {@code INVALID_ARGUMENT},
 * {@code RESOURCE_EXHAUSTED} (a message over the size cap) or {@code DEADLINE_EXCEEDED} (a request that never arrives
 * in full: {@code --grpc-read-timeout}), never {@code INTERNAL}, {@code UNKNOWN} or {@code UNAVAILABLE}, never a
 * stream reset without its status. Policy files: {@code /reload} 200 or 422, {@code check-config} exit status 0 or 1,
 * never a stack trace. Throughout, a prober decides a normal request over each door every 100 ms, each within
 * {@link #PROBE_BOUND}; at the end the process is up and its peak resident memory under {@link #MAX_RSS_BYTES}.
 *
 * <p>CI runs {@link #CASES} cases a door (1,000 HTTP, 1,000 gRPC, 300 policy files through {@code check-config},
 * the first 100 of them also through {@code /reload}). A longer run:
 * {@code -Dsluice.it.fuzz.cases=100000}, and another seed: {@code -Dsluice.it.fuzz.seed=N} (see
 * {@code docs/benchmarks.md}).
 */
class FuzzIT {
    /** Cases per door: HTTP and gRPC each; three in ten as many policy files, one in ten as many reloads. */
    static final int CASES = Integer.getInteger("sluice.it.fuzz.cases", 1000);

    static final long SEED = Long.getLong("sluice.it.fuzz.seed", 20261127L);

    /** The peak resident memory allowed to the server, started with -Xmx256m. */
    static final long MAX_RSS_BYTES = HostileInputIT.MAX_RSS_BYTES;

    /** How long a normal request may take while the fuzz runs: generous, for a loaded machine of two cores. */
    static final Duration PROBE_BOUND = Duration.ofSeconds(10);

    private static final String TOKEN = "fuzz-token";

    @TempDir
    static Path dir;

    static ServerProcess server;

    static Prober prober;

    @BeforeAll
    static void start() throws IOException {
        Files.createDirectories(dir.resolve("config"));
        Files.writeString(dir.resolve("config/fuzz.yaml"), POLICY);
        server = ServerProcess.serve(
                Map.of("SLUICE_ADMIN_TOKEN", TOKEN),
                "--config",
                dir.resolve("config").toString(),
                "--http-read-timeout",
                "1s",
                "--grpc-read-timeout",
                "1s");
        // the clients' first calls, outside the bound: a channel's first connection, the HTTP client's start
        assertEquals(Code.OK, server.shouldRateLimit(normal("warm-up")).getOverallCode());
        assertEquals(
                200, server.post("/json", ServerProcess.json(normal("warm-up"))).statusCode());
        prober = new Prober();
        prober.start();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (prober != null) {
                prober.finish();
            }
            if (server != null) {
                assertTrue(server.process().isAlive(), "the server is down");
                assertEquals(200, server.get("/healthcheck").statusCode());
                long rss = HostileInputIT.peakRss(server);
                System.out.printf(
                        "fuzz, seed %d, %d cases a door: %d probes, slowest %d ms; peak RSS %d MiB%n",
                        SEED, CASES, prober.probes.get(), prober.slowest.get() / 1_000_000, rss >> 20);
                assertTrue(rss < MAX_RSS_BYTES, "peak RSS " + (rss >> 20) + " MiB");
                List<String> traces = server.stderr().stream()
                        .filter(l -> l.startsWith("\tat "))
                        .toList();
                assertEquals(List.of(), traces, "stack traces in the log");
            }
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    static final String POLICY =
            """
            domain: fuzz
            algorithm: sliding_tail
            descriptors:
              - key: client_id
                detailed_metric: true
                rate_limit: {unit: second, requests_per_unit: 50}
                descriptors:
                  - key: username
                    rate_limit: {unit: minute, requests_per_unit: 20}
              - key: client_id
                value: trusted
                rate_limit: {unlimited: true}
              - key: client_id
                value: partner
                rate_limits:
                  - {unit: second, requests_per_unit: 500}
                  - {window: 6h, requests_per_unit: 1000000, name: daily}
                mode: dry_run
              - key: path
                value: "/api/*"
                shadow_mode: true
                rate_limit: {unit: hour, requests_per_unit: 3}
            """;

    static RateLimitRequest normal(String client) {
        return request("fuzz", descriptor("client_id", client));
    }

    // ---- HTTP

    @Test
    void http() throws Exception {
        Random random = new Random(SEED);
        List<byte[]> cases = new ArrayList<>();
        for (int i = 0; i < CASES; i++) {
            cases.add(
                    switch (i % 3) {
                        case 0 -> jsonCase(random);
                        case 1 -> headerCase(random);
                        default -> requestLineCase(random);
                    });
        }
        Map<Integer, Integer> statuses = Collections.synchronizedMap(new TreeMap<>());
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < cases.size(); i++) {
                int n = i;
                done.add(pool.submit(() -> {
                    int status = exchange(cases.get(n), n);
                    statuses.merge(status, 1, Integer::sum);
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.println("fuzz, HTTP: statuses " + statuses);
        assertTrue(statuses.keySet().stream().allMatch(s -> s < 500), "statuses " + statuses);
    }

    /** Sends one case on a connection of its own; its status, which must come. */
    static int exchange(byte[] request, int n) {
        try (Socket s = new Socket("127.0.0.1", server.httpPort())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            try {
                out.write(request);
                out.flush();
            } catch (IOException e) {
                // the server answered and closed before it had read everything: its answer is still there to read
            }
            return status(s.getInputStream());
        } catch (IOException e) {
            throw new AssertionError(
                    "seed " + SEED + ", HTTP case " + n + ": no answer to " + excerpt(request) + ": " + e, e);
        }
    }

    /** The status of the final answer on {@code in}, after any 1xx ones; its body, if any, is left unread. */
    static int status(InputStream in) throws IOException {
        int status = statusLine(in);
        while (status < 200) {
            skipHead(in);
            status = statusLine(in);
        }
        return status;
    }

    static void skipHead(InputStream in) throws IOException {
        int c;
        int run = 0; // characters since the last line end
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                if (run == 0) {
                    return;
                }
                run = 0;
            } else if (c != '\r') {
                run++;
            }
        }
        throw new IOException("the connection closed in an interim answer's head");
    }

    static int statusLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            line.write(c);
        }
        String first = line.toString(StandardCharsets.ISO_8859_1);
        Matcher m = Pattern.compile("HTTP/1\\.[01] (\\d{3})( .*)?\r?").matcher(first);
        if (!m.matches()) {
            throw new IOException(
                    c < 0 ? "the connection closed after '" + first + "'" : "not a status line: " + first);
        }
        return Integer.parseInt(m.group(1));
    }

    static String excerpt(byte[] request) {
        String s = new String(request, 0, Math.min(request.length, 200), StandardCharsets.ISO_8859_1);
        return "'" + s.replace("\r", "\\r").replace("\n", "\\n") + (request.length > 200 ? "…'" : "'");
    }

    static byte[] post(String path, List<String> headers, byte[] body) {
        StringBuilder head = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: fuzz\r\n");
        for (String h : headers) {
            head.append(h).append("\r\n");
        }
        head.append("\r\n");
        return concat(head.toString().getBytes(StandardCharsets.ISO_8859_1), body);
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] all = new byte[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    static final String[] JSON_TOKENS = {
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"",
        "\\",
        "\\u",
        "\\ud800",
        "\\u0000",
        "null",
        "true",
        "-1",
        "0",
        "1e999",
        "99999999999999999999999",
        "\"domain\"",
        "\"descriptors\"",
        "\"entries\"",
        "\"key\"",
        "\"value\"",
        "\"hitsAddend\"",
        "\"hits_addend\"",
        "\"limit\"",
        "\"requestsPerUnit\"",
        "\"unit\"",
        "\"SECOND\"",
        "\"x\"",
        "[[[[[[[[",
        "{{{{",
        "\u00e9",
        "\ud83d\ude00",
        " ",
        "\t",
        "\n"
    };

    static byte[] validJson(Random random) {
        StringBuilder descriptors = new StringBuilder();
        int n = 1 + random.nextInt(3);
        for (int i = 0; i < n; i++) {
            descriptors
                    .append(i == 0 ? "" : ",")
                    .append("{\"entries\":[{\"key\":\"client_id\",\"value\":\"c")
                    .append(random.nextInt(100))
                    .append("\"}")
                    .append(random.nextBoolean() ? ",{\"key\":\"username\",\"value\":\"u\"}" : "")
                    .append("]}");
        }
        return ("{\"domain\":\"fuzz\",\"descriptors\":[" + descriptors + "]"
                        + (random.nextBoolean() ? ",\"hitsAddend\":" + random.nextInt(3) : "") + "}")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** A {@code /json} body: a valid request mutated a few times, with its true Content-Length. */
    static byte[] jsonCase(Random random) {
        byte[] body = mutate(random, validJson(random), JSON_TOKENS);
        return post("/json", List.of("Content-Type: application/json", "Content-Length: " + body.length), body);
    }

    static final String[] HEADER_LINES = {
        "Content-Length: -1",
        "Content-Length: abc",
        "Content-Length: 99999999999999999999",
        "Content-Length: 1, 2",
        "Content-Length: 0",
        "Transfer-Encoding: chunked",
        "Transfer-Encoding: gzip, chunked",
        "Transfer-Encoding: identity",
        "Transfer-Encoding: chunked\r\nContent-Length: 5",
        "Content-Type: application/json; charset=latin1",
        "Content-Type: text/plain",
        "Content-Type: ",
        "Expect: 100-continue",
        "Expect: something-else",
        "Connection: close",
        "Connection: upgrade\r\nUpgrade: h2c",
        "Upgrade: websocket",
        "Host: ",
        "Host: a\r\nHost: b",
        "Authorization: Bearer " + TOKEN,
        "Authorization: Bearer wrong",
        "Authorization: ",
        " folded: continuation",
        "No-Colon",
        ": no-name",
        "X-Nul: a\u0000b",
        "X-Ctl: \u0001\u007f",
        "X-Latin1: \u00ff\u00e9",
        "X-Long: " + "x".repeat(9000),
        "Cookie: " + "a=b; ".repeat(2000),
        "Accept-Encoding: gzip, deflate, br",
        "X-Forwarded-For: 1.2.3.4"
    };

    static final String[] PATHS = {"/json", "/healthcheck", "/metrics", "/rlconfig", "/reload", "/dashboard/data", "/"};

    /** Headers: a valid request's head with lines added, replaced or bent; a body that the framing may not match. */
    static byte[] headerCase(Random random) {
        byte[] body = validJson(random);
        List<String> headers = new ArrayList<>();
        headers.add("Content-Type: application/json");
        headers.add("Content-Length: " + body.length);
        int n = 1 + random.nextInt(3);
        for (int i = 0; i < n; i++) {
            String line = HEADER_LINES[random.nextInt(HEADER_LINES.length)];
            if (line.startsWith("Content-Length") || line.startsWith("Transfer-Encoding")) {
                headers.remove(1 % Math.max(1, headers.size()));
            }
            headers.add(random.nextInt(headers.size() + 1), line);
        }
        if (headers.stream().anyMatch(h -> h.toLowerCase(Locale.ROOT).contains("chunked"))) {
            body = random.nextBoolean()
                    ? concat(
                            (Integer.toHexString(body.length) + "\r\n").getBytes(StandardCharsets.US_ASCII),
                            concat(body, "\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII)))
                    : new String[] {"zz\r\n", "-1\r\n", "ffffffffffffffff\r\nx\r\n0\r\n\r\n", "0;ext=\"\r\n\r\n"}
                            [random.nextInt(4)].getBytes(StandardCharsets.US_ASCII);
        }
        byte[] request = post(PATHS[random.nextInt(PATHS.length)], headers, body);
        if (random.nextInt(4) == 0) { // bare LF line ends
            request = new String(request, StandardCharsets.ISO_8859_1)
                    .replace("\r\n", "\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
        }
        return request;
    }

    static final String[] METHODS = {
        "GET",
        "POST",
        "PUT",
        "DELETE",
        "HEAD",
        "OPTIONS",
        "TRACE",
        "CONNECT",
        "PRI",
        "get",
        "G\u00c9T",
        "",
        "POST POST",
        "X".repeat(300)
    };
    static final String[] TARGETS = {
        "/json",
        "/healthcheck",
        "/metrics",
        "/",
        "*",
        "/json?x=1",
        "/json#f",
        "/%00",
        "/%zz",
        "/../../etc/passwd",
        "//json",
        "http://fuzz/json",
        "/" + "a".repeat(9000),
        "/\u00e9",
        "/dashboard/../json",
        "",
        "/ /",
        "/json\u0000"
    };
    static final String[] VERSIONS = {
        "HTTP/1.1",
        "HTTP/1.0",
        "HTTP/0.9",
        "HTTP/2.0",
        "HTTP/1.2",
        "HTTP/9.9",
        "HTTP/1",
        "http/1.1",
        "HTTPS/1.1",
        "",
        "HTTP/1.1 extra",
        "HTTP/1.1\u0000"
    };

    /** A request line from its parts, some bent; a head that ends, and a body as Content-Length says. */
    static byte[] requestLineCase(Random random) {
        byte[] body = random.nextBoolean() ? validJson(random) : new byte[0];
        String line = METHODS[random.nextInt(METHODS.length)] + " " + TARGETS[random.nextInt(TARGETS.length)] + " "
                + VERSIONS[random.nextInt(VERSIONS.length)];
        if (random.nextInt(5) == 0) {
            line = line.replace(' ', random.nextBoolean() ? '\t' : ' ').replace(" ", "  ");
        }
        String head = line + "\r\nHost: fuzz\r\nContent-Length: " + body.length + "\r\n\r\n";
        return concat(head.getBytes(StandardCharsets.ISO_8859_1), body);
    }

    // ---- gRPC

    @Test
    void grpc() throws Exception {
        Random random = new Random(SEED + 1);
        Map<Integer, Integer> codes = new TreeMap<>();
        List<String> bad = new ArrayList<>();
        int batch = 50; // streams on a connection at once, under its 100
        for (int from = 0; from < CASES; from += batch) {
            try (RawHttp2 c = new RawHttp2(server.grpcPort())) {
                Map<Integer, Integer> caseOf = new TreeMap<>();
                Set<Integer> framingBroken = new java.util.HashSet<>();
                for (int i = from; i < Math.min(CASES, from + batch); i++) {
                    int id = grpcCase(random, c, i, framingBroken);
                    caseOf.put(id, i);
                }
                c.flush();
                Await.until(
                        "seed " + SEED + ": every gRPC case from " + from + " answered",
                        Await.GENEROUS,
                        () -> c.ended.keySet().containsAll(caseOf.keySet()) || c.closedByServer());
                for (var e : caseOf.entrySet()) {
                    Integer code = c.ended.get(e.getKey());
                    codes.merge(code == null ? -9999 : code, 1, Integer::sum);
                    boolean expected = code != null
                            && (GRPC_ANSWERS.contains(code)
                                    || (code == Status.Code.INTERNAL.value() && framingBroken.contains(e.getKey())));
                    if (!expected) {
                        bad.add("case " + e.getValue() + ": " + (code == null ? "no answer" : describe(code)));
                    }
                }
                assertTrue(!c.closedByServer(), "seed " + SEED + ": the connection of cases from " + from + " closed");
            }
        }
        System.out.println("fuzz, gRPC: codes " + codes);
        assertEquals(List.of(), bad, "seed " + SEED + ": gRPC answers " + codes);
    }

    static final Set<Integer> GRPC_ANSWERS = Set.of(
            Status.Code.OK.value(),
            Status.Code.INVALID_ARGUMENT.value(),
            Status.Code.RESOURCE_EXHAUSTED.value(),
            Status.Code.DEADLINE_EXCEEDED.value());

    static String describe(int code) {
        return code >= 0 ? Status.fromCodeValue(code).getCode().toString() : "RST_STREAM " + (-1 - code);
    }

    /**
     * Opens one case's stream on {@code c} and sends what the case sends; its stream id, added to {@code framingBroken}
     * if the case breaks gRPC's message framing (the flag byte or the length): grpc-java's transport answers those
     * {@code INTERNAL} before the service sees them, as gRPC's status codes prescribe for a broken protocol.
     */
    static int grpcCase(Random random, RawHttp2 c, int n, Set<Integer> framingBroken) throws IOException {
        byte[] message =
                switch (n % 4) {
                    case 0 -> randomBytes(random, random.nextInt(300));
                    case 1, 2 -> mutate(random, validRequest(random).toByteArray(), null);
                    default -> validRequest(random).toByteArray();
                };
        int id = c.open(RawHttp2.SHOULD_RATE_LIMIT);
        if (n % 4 != 3 || random.nextInt(3) == 0) {
            c.data(id, frame(message, 0), true);
            return id;
        }
        // the message framing bent: a wrong length, the compressed flag, split across frames, two messages, none
        int bent = random.nextInt(6);
        if (bent <= 2) {
            framingBroken.add(id);
        }
        switch (bent) {
            case 0 -> c.data(id, frame(message, 0, message.length + 1 + random.nextInt(100)), true);
            case 1 -> c.data(id, frame(message, 0, Math.max(0, message.length - 1 - random.nextInt(5))), true);
            case 2 -> c.data(id, frame(message, 1 + random.nextInt(255)), true);
            case 3 -> {
                byte[] framed = frame(message, 0);
                int cut = random.nextInt(framed.length + 1);
                c.data(id, java.util.Arrays.copyOfRange(framed, 0, cut), false);
                c.data(id, java.util.Arrays.copyOfRange(framed, cut, framed.length), true);
            }
            case 4 -> c.data(id, concat(frame(message, 0), frame(message, 0)), true);
            default -> c.data(id, new byte[0], true);
        }
        return id;
    }

    /** {@code message} in gRPC's framing: a flag byte and its length. */
    static byte[] frame(byte[] message, int flag) {
        return frame(message, flag, message.length);
    }

    /** {@code message} after a flag byte and a length that may not be its own. */
    static byte[] frame(byte[] message, int flag, int length) {
        byte[] data = new byte[5 + message.length];
        data[0] = (byte) flag;
        data[1] = (byte) (length >>> 24);
        data[2] = (byte) (length >>> 16);
        data[3] = (byte) (length >>> 8);
        data[4] = (byte) length;
        System.arraycopy(message, 0, data, 5, message.length);
        return data;
    }

    static RateLimitRequest validRequest(Random random) {
        RateLimitRequest.Builder r = RateLimitRequest.newBuilder().setDomain("fuzz");
        int n = 1 + random.nextInt(3);
        for (int i = 0; i < n; i++) {
            RateLimitDescriptor.Builder d = RateLimitDescriptor.newBuilder()
                    .addEntries(RateLimitDescriptor.Entry.newBuilder()
                            .setKey("client_id")
                            .setValue("c" + random.nextInt(100)));
            if (random.nextBoolean()) {
                d.addEntries(RateLimitDescriptor.Entry.newBuilder()
                        .setKey("username")
                        .setValue("u"));
            }
            r.addDescriptors(d);
        }
        if (random.nextBoolean()) {
            r.setHitsAddend(random.nextInt(3));
        }
        return r.build();
    }

    // ---- policy files

    static final String[] YAML_TOKENS = {
        "-1",
        "0",
        "999999999999999999999",
        "1e400",
        "",
        "~",
        "null",
        "[",
        "]",
        "{",
        "}",
        "*",
        "&a",
        "*a",
        "!!binary",
        "<<: *a",
        ":",
        "- ",
        "\t",
        "  ",
        "#",
        "'",
        "\"",
        "\\",
        "%YAML 1.1",
        "---",
        "...",
        "unit",
        "window",
        "0s",
        "-5m",
        "1d",
        "year",
        "fortnight",
        "requests_per_unit",
        "rate_limit",
        "rate_limits",
        "descriptors",
        "key",
        "value",
        "domain",
        "algorithm",
        "token_bucket",
        "mode",
        "enforce",
        "shadow_ban",
        "unlimited",
        "true",
        "yes",
        "replaces",
        "name",
        "\u00e9",
        "\ud83d\ude00",
        "x".repeat(2000),
        "[".repeat(200),
        "{a: ".repeat(50)
    };

    @Test
    void policyFiles() throws Exception {
        Random random = new Random(SEED + 2);
        byte[] base = POLICY.getBytes(StandardCharsets.UTF_8);
        Path file = dir.resolve("config/fuzz.yaml");
        Path checked = Files.createDirectories(dir.resolve("checked"));
        Map<Integer, Integer> reloads = new TreeMap<>();
        int cases = CASES * 3 / 10; // through check-config, in one process
        int reloadCases = CASES / 10; // a reload is the dearest case (tens of ms each): the first of them only
        try {
            for (int i = 0; i < cases; i++) {
                byte[] yaml = lineMutate(random, mutate(random, base, YAML_TOKENS));
                Files.write(checked.resolve(String.format(Locale.ROOT, "case-%04d.yaml", i)), yaml);
                if (i >= reloadCases) {
                    continue;
                }
                Files.write(file, yaml);
                HttpResponse<String> reload = server.send(HttpRequest.newBuilder(server.uri("/reload"))
                        .timeout(Duration.ofSeconds(30))
                        .header("Authorization", "Bearer " + TOKEN)
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build());
                reloads.merge(reload.statusCode(), 1, Integer::sum);
                assertTrue(
                        reload.statusCode() == 200 || reload.statusCode() == 422,
                        "seed " + SEED + ", policy case " + i + ": /reload " + reload.statusCode() + " "
                                + reload.body());
                assertTrue(!reload.body().isEmpty(), "policy case " + i + ": an empty answer");
            }
        } finally {
            Files.writeString(file, POLICY);
        }
        HttpResponse<String> restored = server.post("/reload", "", "Authorization", "Bearer " + TOKEN);
        assertTrue(restored.statusCode() == 200, restored.body());
        assertEquals(Code.OK, server.shouldRateLimit(normal("after-policies")).getOverallCode());
        System.out.println("fuzz, policy files: /reload statuses " + reloads);

        ServerProcess.Result check = ServerProcess.run("check-config", checked.toString());
        assertTrue(check.status() == 0 || check.status() == 1, "check-config exit status " + check.status());
        for (String output : List.of(check.out(), check.err())) {
            assertTrue(
                    output.lines().noneMatch(l -> l.startsWith("\tat ") || l.contains("Exception")),
                    "seed " + SEED + ": a stack trace from check-config: " + output);
        }
    }

    // ---- mutations

    /** {@code input} with one to four mutations: bytes flipped, inserted, deleted, repeated, or tokens inserted. */
    static byte[] mutate(Random random, byte[] input, String[] tokens) {
        byte[] b = input;
        int n = 1 + random.nextInt(4);
        for (int i = 0; i < n; i++) {
            int at = b.length == 0 ? 0 : random.nextInt(b.length);
            b = switch (random.nextInt(tokens == null ? 5 : 6)) {
                case 0 -> {
                    byte[] c = b.clone();
                    if (c.length > 0) {
                        c[at] ^= (byte) (1 << random.nextInt(8));
                    }
                    yield c;
                }
                case 1 -> splice(b, at, at, randomBytes(random, 1 + random.nextInt(8)));
                case 2 -> splice(b, at, Math.min(b.length, at + 1 + random.nextInt(16)), new byte[0]);
                case 3 -> {
                    int end = Math.min(b.length, at + 1 + random.nextInt(32));
                    yield splice(b, at, at, java.util.Arrays.copyOfRange(b, at, end));
                }
                case 4 -> java.util.Arrays.copyOf(b, at); // truncated
                default -> splice(b, at, at, tokens[random.nextInt(tokens.length)].getBytes(StandardCharsets.UTF_8));
            };
        }
        return b;
    }

    /** {@code yaml} with a line deleted, repeated, moved, or indented differently, half the time. */
    static byte[] lineMutate(Random random, byte[] yaml) {
        if (random.nextBoolean()) {
            return yaml;
        }
        List<String> lines = new ArrayList<>(List.of(new String(yaml, StandardCharsets.UTF_8).split("\n", -1)));
        int at = random.nextInt(lines.size());
        switch (random.nextInt(4)) {
            case 0 -> lines.remove(at);
            case 1 -> lines.add(at, lines.get(at));
            case 2 -> lines.add(random.nextInt(lines.size()), lines.remove(at));
            default -> lines.set(
                    at, " ".repeat(random.nextInt(7)) + lines.get(at).strip());
        }
        return String.join("\n", lines).getBytes(StandardCharsets.UTF_8);
    }

    static byte[] splice(byte[] b, int from, int to, byte[] insert) {
        byte[] c = new byte[b.length - (to - from) + insert.length];
        System.arraycopy(b, 0, c, 0, from);
        System.arraycopy(insert, 0, c, from, insert.length);
        System.arraycopy(b, to, c, from + insert.length, b.length - to);
        return c;
    }

    static byte[] randomBytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    // ---- the normal client

    /** Decides a normal request over each door every 100 ms while the fuzz runs; each must come within the bound. */
    static final class Prober extends Thread {
        final AtomicBoolean running = new AtomicBoolean(true);
        final AtomicLong probes = new AtomicLong();
        final AtomicLong slowest = new AtomicLong();
        volatile Throwable failed;

        Prober() {
            super("fuzz-prober");
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (running.get()) {
                    long start = System.nanoTime();
                    Code code = server.grpc()
                            .withDeadlineAfter(PROBE_BOUND.toMillis(), TimeUnit.MILLISECONDS)
                            .shouldRateLimit(normal("probe-" + probes.get() % 10))
                            .getOverallCode();
                    if (code != Code.OK && code != Code.OVER_LIMIT) { // a mutated policy in force may limit it
                        throw new AssertionError("the gRPC probe answered " + code);
                    }
                    HttpResponse<String> json = server.send(HttpRequest.newBuilder(server.uri("/json"))
                            .timeout(PROBE_BOUND)
                            .POST(HttpRequest.BodyPublishers.ofString(
                                    ServerProcess.json(normal("probe-" + probes.get() % 10))))
                            .build());
                    if (json.statusCode() != 200 && json.statusCode() != 429) {
                        throw new AssertionError("the /json probe answered " + json.statusCode() + " " + json.body());
                    }
                    long took = System.nanoTime() - start;
                    slowest.accumulateAndGet(took, Math::max);
                    probes.incrementAndGet();
                    Thread.sleep(100);
                }
            } catch (Throwable t) {
                failed = t;
            }
        }

        void finish() throws InterruptedException {
            running.set(false);
            join(PROBE_BOUND.toMillis() * 3);
            if (failed != null) {
                throw new AssertionError("a normal request was not answered in time", failed);
            }
            assertTrue(probes.get() > 0, "no probe answered");
        }
    }
}
