package dev.sluice.server;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.sluice.policy.Limit;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.policy.Rule;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP side of the service, on the JDK's HTTP server: {@code POST /json}, {@code GET /healthcheck},
 * {@code GET /metrics}, the admin endpoints {@code GET /rlconfig} and {@code POST /reload}, and the dashboard: its files
 * at {@code /} and the numbers it polls at {@code GET /dashboard/data} ({@link DashboardData}).
 *
 * <p>Bounded: a fixed pool of threads with a bounded queue (a full queue makes the accepting thread run the request
 * itself, which slows accepting instead of growing memory), request bodies of at most {@link #MAX_BODY} bytes.
 */
final class HttpApi implements AutoCloseable {
    /** The largest request body read; a larger one is answered 413. */
    static final int MAX_BODY = 1 << 20;

    /**
     * How much of a body over {@link #MAX_BODY} is read and dropped before the 413, so that a client still sending
     * reads the answer instead of a broken connection; a body announced larger than this is refused at once.
     */
    private static final long MAX_DRAIN = 16L << 20;

    private static final System.Logger LOG = System.getLogger(HttpApi.class.getName());
    private static final String DASHBOARD = "dev/sluice/server/dashboard/";
    private static final String JSON = "application/json";
    private static final Map<String, String> CONTENT_TYPES = Map.of(
            "html", "text/html; charset=utf-8",
            "css", "text/css; charset=utf-8",
            "js", "text/javascript; charset=utf-8",
            "json", "application/json",
            "svg", "image/svg+xml",
            "png", "image/png",
            "ico", "image/x-icon",
            "txt", "text/plain; charset=utf-8");

    static {
        // The JDK's server writes an answer's headers and body in two writes and leaves Nagle's algorithm on: with a
        // client that keeps its connection alive and delays its ACKs (Linux: 40 ms), every answer after the first
        // waits for that ACK; TCP_NODELAY sends each answer at once. Read once, when the first server starts; an
        // explicit -D setting wins.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    private final HttpServer server;
    private final ThreadPoolExecutor executor;
    private final RateLimitAdapter adapter;
    private final PolicyLimiter limiter;
    private final PrometheusMeterRegistry registry;
    private final ServerMetrics metrics;
    private final BooleanSupplier ready;
    private final @Nullable String adminToken;
    private final Supplier<ReloadResult> reload;
    private final boolean benchBare;
    private final JsonFormat.Parser parser = JsonFormat.parser();
    private final JsonFormat.Printer printer = JsonFormat.printer().omittingInsignificantWhitespace();

    /** What {@code POST /reload} did: whether the configuration changed, and a message for the caller. */
    record ReloadResult(boolean reloaded, String message) {}

    HttpApi(
            InetSocketAddress address,
            int threads,
            RateLimitAdapter adapter,
            PolicyLimiter limiter,
            PrometheusMeterRegistry registry,
            ServerMetrics metrics,
            BooleanSupplier ready,
            @Nullable String adminToken,
            Supplier<ReloadResult> reload,
            boolean benchBare)
            throws IOException {
        this.adapter = adapter;
        this.limiter = limiter;
        this.registry = registry;
        this.metrics = metrics;
        this.ready = ready;
        this.adminToken = adminToken == null || adminToken.isEmpty() ? null : adminToken;
        this.reload = reload;
        this.benchBare = benchBare;
        AtomicInteger n = new AtomicInteger();
        this.executor = new ThreadPoolExecutor(
                threads,
                threads,
                60,
                TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(1024),
                r -> {
                    Thread t = new Thread(r, "sluice-http-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                },
                new ThreadPoolExecutor.CallerRunsPolicy());
        this.server = HttpServer.create(address, 256);
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        server.start();
    }

    int port() {
        return server.getAddress().getPort();
    }

    private void handle(HttpExchange x) throws IOException {
        try (x) {
            String path = x.getRequestURI().getPath();
            String method = x.getRequestMethod();
            switch (path) {
                case "/json" -> {
                    if (allow(x, method, "POST")) {
                        long start = System.nanoTime();
                        try {
                            json(x);
                        } finally {
                            metrics.answered("http", start);
                        }
                    }
                }
                case "/healthcheck" -> {
                    if (allow(x, method, "GET")) {
                        boolean ok = ready.getAsBoolean();
                        send(x, ok ? 200 : 500, "text/plain; charset=utf-8", ok ? "OK" : "not ready");
                    }
                }
                case "/metrics" -> {
                    if (allow(x, method, "GET")) {
                        metrics.refreshLimits(limiter);
                        send(x, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape());
                    }
                }
                case BareEndpoint.PATH -> {
                    if (!benchBare) {
                        error(x, 404, "no such page: " + path + " (a benchmarking aid: serve --bench-bare)");
                    } else if (allow(x, method, "POST")) {
                        bare(x);
                    }
                }
                case "/dashboard/data" -> {
                    if (allow(x, method, "GET")) {
                        x.getResponseHeaders().set("Cache-Control", "no-store");
                        send(x, 200, JSON, DashboardData.json(limiter, registry, System.currentTimeMillis()));
                    }
                }
                case "/rlconfig" -> {
                    if (allow(x, method, "GET") && admin(x)) {
                        send(x, 200, "text/plain; charset=utf-8", dump(limiter));
                    }
                }
                case "/reload" -> {
                    if (allow(x, method, "POST") && admin(x)) {
                        ReloadResult r = reload.get();
                        send(x, r.reloaded() ? 200 : 422, "text/plain; charset=utf-8", r.message());
                    }
                }
                default -> {
                    if (allow(x, method, "GET")) {
                        dashboard(x, path);
                    }
                }
            }
        } catch (IOException e) { // the client went away
            LOG.log(System.Logger.Level.DEBUG, "HTTP exchange failed: " + e);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "HTTP request failed: " + x.getRequestURI(), e);
            throw e;
        }
    }

    private void json(HttpExchange x) throws IOException {
        byte[] body = readBody(x);
        if (body == null) {
            metrics.request("http", "invalid");
            error(x, 413, "request body larger than the limit of " + MAX_BODY + " bytes");
            return;
        }
        RateLimitRequest.Builder request = RateLimitRequest.newBuilder();
        try {
            parser.merge(new String(body, StandardCharsets.UTF_8), request);
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            metrics.request("http", "invalid");
            error(x, 400, "the body is not a RateLimitRequest in proto3 JSON: " + e.getMessage());
            return;
        }
        RateLimitResponse response;
        try {
            response = adapter.shouldRateLimit(request.build());
        } catch (InvalidRequestException e) {
            metrics.request("http", "invalid");
            error(x, 400, String.valueOf(e.getMessage()));
            return;
        } catch (IllegalStateException e) {
            metrics.request("http", "unavailable");
            error(x, 503, "the rate limit service is shutting down");
            return;
        }
        boolean over = response.getOverallCode() == RateLimitResponse.Code.OVER_LIMIT;
        metrics.request("http", over ? "over_limit" : "ok");
        send(x, over ? 429 : 200, JSON, printer.print(response));
    }

    /** The {@link BareEndpoint}: the body read and parsed as {@code POST /json} does, a constant answer. */
    private void bare(HttpExchange x) throws IOException {
        byte[] body = readBody(x);
        if (body == null) {
            error(x, 413, "request body larger than the limit of " + MAX_BODY + " bytes");
            return;
        }
        RateLimitRequest.Builder request = RateLimitRequest.newBuilder();
        try {
            parser.merge(new String(body, StandardCharsets.UTF_8), request);
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            error(x, 400, "the body is not a RateLimitRequest in proto3 JSON: " + e.getMessage());
            return;
        }
        send(x, 200, JSON, BareEndpoint.OK_JSON);
    }

    /** The body, or null if it is larger than {@link #MAX_BODY}. */
    private static byte @Nullable [] readBody(HttpExchange x) throws IOException {
        String length = x.getRequestHeaders().getFirst("Content-Length");
        if (length != null) {
            try {
                if (Long.parseLong(length.trim()) > MAX_DRAIN) {
                    return null;
                }
            } catch (NumberFormatException e) {
                // the server refuses a malformed length before it gets here; read what comes
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        long read = 0;
        try (InputStream in = x.getRequestBody()) {
            int r;
            while ((r = in.read(buf)) >= 0) {
                read += r;
                if (read > MAX_BODY) {
                    if (read > MAX_DRAIN) {
                        return null;
                    }
                    continue; // too large: read on, keeping nothing, to answer 413 to a client still sending
                }
                out.write(buf, 0, r);
            }
        }
        return read > MAX_BODY ? null : out.toByteArray();
    }

    private boolean admin(HttpExchange x) throws IOException {
        String token = adminToken;
        if (token == null) {
            error(x, 404, "admin endpoints are off: start the service with SLUICE_ADMIN_TOKEN set to turn them on");
            return false;
        }
        String given = x.getRequestHeaders().getFirst("Authorization");
        byte[] expected = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
        if (given == null || !MessageDigest.isEqual(expected, given.getBytes(StandardCharsets.UTF_8))) {
            x.getResponseHeaders().set("WWW-Authenticate", "Bearer");
            error(x, 401, "this admin endpoint needs the header 'Authorization: Bearer <SLUICE_ADMIN_TOKEN>'");
            return false;
        }
        return true;
    }

    private void dashboard(HttpExchange x, String path) throws IOException {
        String file = path.equals("/") ? "index.html" : path.substring(1);
        if (file.isEmpty() || file.contains("..") || file.contains("//") || file.startsWith("/")) {
            error(x, 404, "no such page: " + path);
            return;
        }
        try (InputStream in = HttpApi.class.getClassLoader().getResourceAsStream(DASHBOARD + file)) {
            if (in == null || file.endsWith("/")) {
                error(x, 404, "no such page: " + path);
                return;
            }
            int dot = file.lastIndexOf('.');
            String ext = dot < 0 ? "" : file.substring(dot + 1).toLowerCase(Locale.ROOT);
            byte[] bytes = in.readAllBytes();
            x.getResponseHeaders().set("Content-Type", CONTENT_TYPES.getOrDefault(ext, "application/octet-stream"));
            x.getResponseHeaders().set("Cache-Control", "no-cache");
            x.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    /** The configuration in force, one line per limited rule, for {@code GET /rlconfig}. */
    static String dump(PolicyLimiter limiter) {
        Policies policies = limiter.policies();
        StringBuilder b = new StringBuilder();
        b.append("# configuration version ").append(limiter.version()).append('\n');
        for (String domain : policies.domains()) {
            for (Rule rule : policies.rules(domain)) {
                b.append(domain).append('.').append(rule.path()).append(':');
                for (Limit l : rule.limits()) {
                    b.append(' ').append(l);
                }
                b.append(", mode ").append(rule.mode().configName());
                b.append(" (").append(rule.source()).append(")\n");
            }
        }
        return b.toString();
    }

    private static boolean allow(HttpExchange x, String method, String allowed) throws IOException {
        if (method.equals(allowed) || (allowed.equals("GET") && method.equals("HEAD"))) {
            return true;
        }
        x.getResponseHeaders().set("Allow", allowed);
        error(x, 405, "method " + method + " not allowed here: use " + allowed);
        return false;
    }

    private static void error(HttpExchange x, int status, String message) throws IOException {
        send(x, status, JSON, "{\"error\":" + DashboardData.quote(message) + "}");
    }

    private static void send(HttpExchange x, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        x.getResponseHeaders().set("Content-Type", contentType);
        boolean head = x.getRequestMethod().equals("HEAD");
        x.sendResponseHeaders(status, head ? -1 : bytes.length);
        if (!head) {
            try (OutputStream out = x.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    /** Stops accepting, lets running exchanges finish for up to a second, then stops the threads. */
    @Override
    public void close() {
        server.stop(1);
        executor.shutdown();
    }
}
