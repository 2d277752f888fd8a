package dev.sluice.server;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.sluice.policy.Limit;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.policy.Rule;
import dev.sluice.server.HttpTransport.Answer;
import dev.sluice.server.HttpTransport.Request;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP side of the service: {@code POST /json}, {@code GET /healthcheck}, {@code GET /metrics}, the admin endpoints
 * {@code GET /rlconfig} and {@code POST /reload}, and the dashboard: its files at {@code /} and the numbers it polls at
 * {@code GET /dashboard/data} ({@link DashboardData}). It serves on an {@link HttpTransport}, which bounds connections,
 * request sizes and times.
 *
 * <p>Where each request is answered: {@code /healthcheck}, {@code /bench/bare}, errors, and {@code /json} on the
 * connection's event loop, {@code /json} decided there ({@link RateLimitAdapter#shouldRateLimitAsync}) and answered
 * at once when no store call is needed (in memory, synchronized mode, a covering leased slice), else when the store's
 * batch answers, holding no thread meanwhile (at most {@value #MAX_WAITING} such checks at once; past that 503); a
 * body over {@value RateLimitAdapter#INLINE_BYTES} bytes and every other endpoint on the transport's bounded pool,
 * whose full queue answers 503.
 */
final class HttpApi implements HttpTransport.Handler, AutoCloseable {
    /** The largest request body read; a larger one is answered 413. */
    static final int MAX_BODY = HttpTransport.MAX_BODY;

    /** The most {@code /json} checks waiting for the store at once; past it they are answered 503 (busy). */
    static final int MAX_WAITING = 4096;

    private static final System.Logger LOG = System.getLogger(HttpApi.class.getName());
    private static final String DASHBOARD = "dev/sluice/server/dashboard/";
    private static final String JSON = "application/json";
    static final String TEXT = "text/plain; charset=utf-8";
    private static final Map<String, String> CONTENT_TYPES = Map.of(
            "html", "text/html; charset=utf-8",
            "css", "text/css; charset=utf-8",
            "js", "text/javascript; charset=utf-8",
            "json", "application/json",
            "svg", "image/svg+xml",
            "png", "image/png",
            "ico", "image/x-icon",
            "txt", "text/plain; charset=utf-8");

    private final HttpTransport transport;
    private final RateLimitAdapter adapter;
    /** {@code /json} checks begun on an event loop and not answered yet. */
    private final AtomicInteger waiting = new AtomicInteger();

    private final PolicyLimiter limiter;
    private final PrometheusMeterRegistry registry;
    private final ServerMetrics metrics;
    private final Supplier<Health> health;
    private final @Nullable String adminToken;
    private final Supplier<ReloadResult> reload;
    private final boolean benchBare;
    /** Null unless the service runs on a {@link ManualClock} (tests only). */
    private final @Nullable ManualClock manualClock;

    /** The {@code /json} checks waiting for the store now (at most {@link #MAX_WAITING}). */
    int waiting() {
        return waiting.get();
    }

    /** What {@code POST /reload} did: whether the configuration changed, and a message for the caller. */
    record ReloadResult(boolean reloaded, String message) {}

    /** What {@code GET /healthcheck} answers: 200 when ready, 500 when not, and a text. */
    record Health(boolean ready, String text) {}

    /** How the HTTP server is bounded: its pool's threads, and its read and idle timeouts ({@link HttpTransport}). */
    record Limits(int threads, Duration readTimeout, Duration idleTimeout) {}

    /**
     * Binds {@code address} and starts serving.
     *
     * @throws IOException if the address cannot be bound
     */
    HttpApi(
            InetSocketAddress address,
            Limits limits,
            RateLimitAdapter adapter,
            PolicyLimiter limiter,
            PrometheusMeterRegistry registry,
            ServerMetrics metrics,
            Supplier<Health> health,
            @Nullable String adminToken,
            Supplier<ReloadResult> reload,
            boolean benchBare,
            @Nullable ManualClock manualClock)
            throws IOException {
        this.manualClock = manualClock;
        this.adapter = adapter;
        this.limiter = limiter;
        this.registry = registry;
        this.metrics = metrics;
        this.health = health;
        this.adminToken = adminToken == null || adminToken.isEmpty() ? null : adminToken;
        this.reload = reload;
        this.benchBare = benchBare;
        this.transport = new HttpTransport(address, limits.threads(), limits.readTimeout(), limits.idleTimeout(), this);
    }

    int port() {
        return transport.port();
    }

    @Override
    public boolean blocking(Request r) {
        return switch (r.path()) {
            case "/healthcheck" -> false;
            case "/json" -> large(r);
            case BareEndpoint.PATH -> large(r);
            default -> true;
        };
    }

    private static boolean large(Request r) {
        byte[] body = r.body();
        return body != null && body.length > RateLimitAdapter.INLINE_BYTES;
    }

    @Override
    public Answer busy(Request r) {
        if (r.path().equals("/json")) {
            metrics.request("http", "unavailable");
        }
        return Answer.error(503, "the service is busy: too many requests waiting, try again")
                .with("Retry-After", "1");
    }

    @Override
    public Answer answer(Request r) {
        String path = r.path();
        String method = r.method();
        switch (path) {
            case "/json" -> {
                Answer wrong = allow(method, "POST");
                if (wrong != null) {
                    return wrong;
                }
                try {
                    return json(r);
                } finally {
                    metrics.answered("http", r.arrived());
                }
            }
            case "/healthcheck" -> {
                Answer wrong = allow(method, "GET");
                if (wrong != null) {
                    return wrong;
                }
                Health h = health.get();
                return Answer.of(h.ready() ? 200 : 500, TEXT, h.text());
            }
            case "/metrics" -> {
                Answer wrong = allow(method, "GET");
                if (wrong != null) {
                    return wrong;
                }
                metrics.refreshLimits(limiter);
                return Answer.of(200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape());
            }
            case BareEndpoint.PATH -> {
                if (!benchBare) {
                    return Answer.error(404, "no such page: " + path + " (a benchmarking aid: serve --bench-bare)");
                }
                Answer wrong = allow(method, "POST");
                return wrong != null ? wrong : bare(r);
            }
            case "/dashboard/data" -> {
                Answer wrong = allow(method, "GET");
                if (wrong != null) {
                    return wrong;
                }
                return Answer.of(200, JSON, DashboardData.json(limiter, registry, System.currentTimeMillis()))
                        .with("Cache-Control", "no-store");
            }
            case "/rlconfig" -> {
                Answer wrong = allow(method, "GET");
                if (wrong == null) {
                    wrong = admin(r);
                }
                return wrong != null ? wrong : Answer.of(200, TEXT, dump(limiter));
            }
            case "/clock" -> {
                ManualClock clock = manualClock;
                if (clock == null) {
                    return Answer.error(404, "no such page: " + path);
                }
                Answer wrong = allow(method, "POST");
                if (wrong == null) {
                    wrong = admin(r);
                }
                return wrong != null ? wrong : setClock(clock, r);
            }
            case "/reload" -> {
                Answer wrong = allow(method, "POST");
                if (wrong == null) {
                    wrong = admin(r);
                }
                if (wrong != null) {
                    return wrong;
                }
                ReloadResult result = reload.get();
                return Answer.of(result.reloaded() ? 200 : 422, TEXT, result.message());
            }
            default -> {
                Answer wrong = allow(method, "GET");
                return wrong != null ? wrong : dashboard(path);
            }
        }
    }

    /** {@code POST /json} on the pool (a large body): decided on the pool's thread, which waits for the store. */
    private Answer json(Request r) {
        byte[] body = r.body();
        if (body == null) {
            metrics.request("http", "invalid");
            return tooLarge();
        }
        try {
            return jsonAnswer(adapter.shouldRateLimit(RateLimitAdapter.fromJson(body)), null);
        } catch (RuntimeException | Error e) { // a request that fails, by a bug or the VM's trouble, is answered 500
            return jsonAnswer(null, e);
        }
    }

    /**
     * {@code POST /json} on an event loop: decided there, and answered when the decision completes, at once when no
     * store call is needed. Null for every other request, and for one that {@link #json} answers at once.
     */
    @Override
    public @Nullable CompletionStage<Answer> answerLater(Request r) {
        byte[] body = r.body();
        if (!r.path().equals("/json") || !r.method().equals("POST") || body == null) {
            return null;
        }
        if (waiting.incrementAndGet() > MAX_WAITING) {
            waiting.decrementAndGet();
            metrics.answered("http", r.arrived());
            return CompletableFuture.completedFuture(busy(r));
        }
        CompletionStage<RateLimitResponse> response;
        try {
            response = adapter.shouldRateLimitAsync(RateLimitAdapter.fromJson(body));
        } catch (RuntimeException | Error e) { // answered below, where the count of waiting requests is given back
            response = CompletableFuture.failedFuture(e);
        }
        return response.handle((answer, failure) -> {
            try {
                return jsonAnswer(answer, failure);
            } finally {
                waiting.decrementAndGet();
                metrics.answered("http", r.arrived());
            }
        });
    }

    /** The answer to {@code /json} for a decision made, or for the failure that stopped it; counted in the metrics. */
    private Answer jsonAnswer(@Nullable RateLimitResponse response, @Nullable Throwable failure) {
        Throwable e = RateLimitAdapter.cause(failure);
        if (e instanceof InvalidRequestException invalid) {
            adapter.refused("http", invalid);
            return Answer.error(400, String.valueOf(invalid.getMessage()));
        }
        if (e instanceof IllegalStateException) { // the limiter is closed: shutting down
            metrics.request("http", "unavailable");
            return Answer.error(503, "the rate limit service is shutting down");
        }
        if (e != null || response == null) {
            metrics.request("http", "unavailable");
            LOG.log(System.Logger.Level.ERROR, "POST /json failed", e);
            return Answer.error(500, "the request failed: " + e);
        }
        boolean over = response.getOverallCode() == RateLimitResponse.Code.OVER_LIMIT;
        metrics.request("http", over ? "over_limit" : "ok");
        try {
            return Answer.of(over ? 429 : 200, JSON, ResponseJson.print(response));
        } catch (InvalidProtocolBufferException p) {
            throw new IllegalStateException("a RateLimitResponse does not print as JSON: " + p, p);
        }
    }

    /** {@code POST /clock} with the epoch milliseconds as the body: moves the {@link ManualClock}. */
    private static Answer setClock(ManualClock clock, Request r) {
        byte[] body = r.body();
        String text = body == null ? "" : new String(body, StandardCharsets.UTF_8).strip();
        try {
            clock.set(Long.parseLong(text));
        } catch (NumberFormatException e) {
            return Answer.error(400, "the body must be epoch milliseconds, was '" + text + "'");
        }
        return Answer.of(200, TEXT, "clock at " + text + "\n");
    }

    /** The {@link BareEndpoint}: the body parsed as {@code POST /json} does, a constant answer. */
    private Answer bare(Request r) {
        byte[] body = r.body();
        if (body == null) {
            return tooLarge();
        }
        try {
            RateLimitAdapter.fromJson(body);
        } catch (InvalidRequestException e) {
            return Answer.error(400, String.valueOf(e.getMessage()));
        }
        return Answer.of(200, JSON, BareEndpoint.OK_JSON);
    }

    private static Answer tooLarge() {
        return Answer.error(413, "request body larger than the limit of " + MAX_BODY + " bytes");
    }

    /** Null if {@code r} carries the admin token; else the answer that refuses it. */
    private @Nullable Answer admin(Request r) {
        return admin(r, adminToken);
    }

    /** Null if {@code r} carries {@code token}; else the answer that refuses it (404 when there is no token). */
    static @Nullable Answer admin(Request r, @Nullable String token) {
        if (token == null) {
            return Answer.error(
                    404, "admin endpoints are off: start the service with SLUICE_ADMIN_TOKEN set to turn them on");
        }
        String given = r.headers().get("Authorization");
        byte[] expected = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
        if (given == null || !MessageDigest.isEqual(expected, given.getBytes(StandardCharsets.UTF_8))) {
            return Answer.error(
                            401, "this admin endpoint needs the header 'Authorization: Bearer <SLUICE_ADMIN_TOKEN>'")
                    .with("WWW-Authenticate", "Bearer");
        }
        return null;
    }

    private static Answer dashboard(String path) {
        String file = path.equals("/") ? "index.html" : path.substring(1);
        if (file.isEmpty()
                || file.contains("..")
                || file.contains("//")
                || file.startsWith("/")
                || file.endsWith("/")) {
            return Answer.error(404, "no such page: " + path);
        }
        try (InputStream in = HttpApi.class.getClassLoader().getResourceAsStream(DASHBOARD + file)) {
            if (in == null) {
                return Answer.error(404, "no such page: " + path);
            }
            int dot = file.lastIndexOf('.');
            String ext = dot < 0 ? "" : file.substring(dot + 1).toLowerCase(Locale.ROOT);
            return new Answer(
                    200,
                    CONTENT_TYPES.getOrDefault(ext, "application/octet-stream"),
                    in.readAllBytes(),
                    Map.of("Cache-Control", "no-cache"));
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + DASHBOARD + file + " from the jar", e);
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

    /** Null if {@code method} is {@code allowed} (or HEAD for GET); else the 405 answer. */
    static @Nullable Answer allow(String method, String allowed) {
        if (method.equals(allowed) || (allowed.equals("GET") && method.equals("HEAD"))) {
            return null;
        }
        return Answer.error(405, "method " + method + " not allowed here: use " + allowed)
                .with("Allow", allowed);
    }

    /** Stops gracefully ({@link HttpTransport#close()}). */
    @Override
    public void close() {
        transport.close();
    }
}
