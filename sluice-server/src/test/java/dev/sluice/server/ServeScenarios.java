package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.UInt64Value;
import dev.sluice.testkit.Await;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * envoyproxy/ratelimit's integration scenarios (its {@code test/integration}: the basic and another configs,
 * over-limit answers with exact {@code limit_remaining} and {@code duration_until_reset}, {@code hits_addend}, shadow
 * mode, reload by editing the configuration), against one {@code serve} process on the store a subclass names. The
 * configuration directory is laid out as a Kubernetes ConfigMap mount ({@code ..data} symlink) with one plain file
 * beside it, so both ways of replacing a file are exercised on one process.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ServeScenarios {
    static final String BASIC =
            """
            domain: basic
            descriptors:
              - key: key1
                rate_limit:
                  unit: second
                  requests_per_unit: 50
              - key: key1_local
                rate_limit:
                  unit: second
                  requests_per_unit: 50
              - key: one_per_day
                rate_limit:
                  unit: day
                  requests_per_unit: 1
            """;
    static final String ANOTHER =
            """
            domain: another
            descriptors:
              - key: key2
                rate_limit:
                  unit: minute
                  requests_per_unit: 20
              - key: key3
                rate_limit:
                  unit: day
                  requests_per_unit: 10
              - key: key4
                rate_limit:
                  unit: day
                  requests_per_unit: 20
            """;
    static final String EXTRA =
            """
            domain: extra
            descriptors:
              - key: shadow
                shadow_mode: true
                rate_limit: {unit: hour, requests_per_unit: 1}
              - key: trusted
                rate_limit: {unlimited: true}
              - key: six_hours
                rate_limit: {window: 6h, requests_per_unit: 3}
              - key: banned
                mode: shadow_ban
                rate_limit: {unit: hour, requests_per_unit: 1}
            """;

    Path dir;

    ServerProcess server;

    /** The {@code serve} options that choose the store, e.g. {@code --store redis://…}; none for memory. */
    abstract List<String> storeArgs();

    @BeforeAll
    void start() throws IOException {
        beforeServer();
        dir = Files.createTempDirectory("sluice-config");
        Path v1 = Files.createDirectories(dir.resolve("..2026_01"));
        Files.writeString(v1.resolve("basic.yaml"), BASIC);
        Files.writeString(v1.resolve("another.yaml"), ANOTHER);
        Files.writeString(v1.resolve("k8s.yaml"), k8s(5));
        Files.createSymbolicLink(dir.resolve("..data"), v1.getFileName());
        for (String f : List.of("basic.yaml", "another.yaml", "k8s.yaml")) {
            Files.createSymbolicLink(dir.resolve(f), Path.of("..data", f));
        }
        Files.writeString(dir.resolve("extra.yaml"), EXTRA);
        Files.writeString(dir.resolve("reload.yaml"), reload(1));
        List<String> args = new ArrayList<>(List.of("--config", dir.toString(), "--watch-interval", "200ms"));
        args.addAll(storeArgs());
        server = ServerProcess.serve(args.toArray(String[]::new));
    }

    /** Starts what the store needs before the service starts. */
    void beforeServer() {}

    @AfterAll
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    static String k8s(int limit) {
        return "domain: k8s\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: " + limit
                + "}\n";
    }

    static String reload(int limit) {
        return "domain: reload\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: " + limit
                + "}\n";
    }

    static String unique() {
        return UUID.randomUUID().toString();
    }

    static RateLimit limit(int requestsPerUnit, RateLimit.Unit unit) {
        return RateLimit.newBuilder()
                .setRequestsPerUnit(requestsPerUnit)
                .setUnit(unit)
                .build();
    }

    RateLimitResponse call(RateLimitRequest r) {
        return server.shouldRateLimit(r);
    }

    /** A call whose {@code duration_until_reset} must be {@code unit − now % unit} seconds, as envoyproxy's. */
    static void assertResetOfUnit(long unitSeconds, long before, long after, DescriptorStatus s) {
        long latest = unitSeconds - before % unitSeconds;
        long earliest = unitSeconds - after % unitSeconds;
        long got = s.getDurationUntilReset().getSeconds();
        assertEquals(0, s.getDurationUntilReset().getNanos(), "whole seconds, as envoyproxy/ratelimit: " + s);
        assertTrue(
                (earliest <= got && got <= latest) || (earliest > latest && (got >= earliest || got <= latest)),
                "duration_until_reset " + got + " s, expected between " + earliest + " and " + latest + ": " + s);
    }

    @Test
    void basicConfigAnswersAsEnvoysRatelimit() {
        RateLimitResponse r = call(request("basic", descriptor("key1", unique())));
        assertEquals(Code.OK, r.getOverallCode());
        DescriptorStatus s = r.getStatuses(0);
        assertEquals(Code.OK, s.getCode());
        assertEquals(limit(50, RateLimit.Unit.SECOND), s.getCurrentLimit());
        assertEquals(49, s.getLimitRemaining());
        assertEquals(1, s.getDurationUntilReset().getSeconds());

        RateLimitResponse none = call(request("basic", descriptor("no_such_key", "x")));
        assertEquals(Code.OK, none.getOverallCode());
        assertEquals(DescriptorStatus.newBuilder().setCode(Code.OK).build(), none.getStatuses(0));

        RateLimitResponse unknownDomain = call(request("no-such-domain", descriptor("key1", "x")));
        assertEquals(Code.OK, unknownDomain.getOverallCode());
        assertFalse(unknownDomain.getStatuses(0).hasCurrentLimit());
    }

    @Test
    void overLimitWithExactRemainingAndReset() {
        String v = unique();
        for (int i = 1; i <= 10; i++) {
            long before = Instant.now().getEpochSecond();
            RateLimitResponse r = call(request("another", descriptor("key3", v)));
            long after = Instant.now().getEpochSecond();
            assertEquals(Code.OK, r.getOverallCode(), "request " + i);
            DescriptorStatus s = r.getStatuses(0);
            assertEquals(limit(10, RateLimit.Unit.DAY), s.getCurrentLimit());
            assertEquals(10 - i, s.getLimitRemaining(), "request " + i);
            assertResetOfUnit(86_400, before, after, s);
        }
        for (int i = 0; i < 3; i++) {
            long before = Instant.now().getEpochSecond();
            RateLimitResponse r = call(request("another", descriptor("key3", v)));
            long after = Instant.now().getEpochSecond();
            assertEquals(Code.OVER_LIMIT, r.getOverallCode());
            DescriptorStatus s = r.getStatuses(0);
            assertEquals(Code.OVER_LIMIT, s.getCode());
            assertEquals(limit(10, RateLimit.Unit.DAY), s.getCurrentLimit());
            assertEquals(0, s.getLimitRemaining());
            assertResetOfUnit(86_400, before, after, s);
        }
        // Two descriptors, one over its limit: the request is over the limit.
        String w = unique();
        RateLimitResponse both = call(request("another", descriptor("key4", w), descriptor("key3", v)));
        assertEquals(Code.OVER_LIMIT, both.getOverallCode());
        assertEquals(Code.OK, both.getStatuses(0).getCode());
        assertEquals(Code.OVER_LIMIT, both.getStatuses(1).getCode());
        // All or nothing: key4 was not counted, so its first counted request leaves 19.
        long before = Instant.now().getEpochSecond(); // around the call: a second may turn during it
        RateLimitResponse key4 = call(request("another", descriptor("key4", w)));
        long after = Instant.now().getEpochSecond();
        assertEquals(19, key4.getStatuses(0).getLimitRemaining());
        assertResetOfUnit(86_400, before, after, key4.getStatuses(0));
    }

    @Test
    void hitsAddendPerRequestAndPerDescriptor() {
        String v = unique();
        RateLimitRequest four = request("another", descriptor("key3", v)).toBuilder()
                .setHitsAddend(4)
                .build();
        assertEquals(6, call(four).getStatuses(0).getLimitRemaining());
        RateLimitRequest six = four.toBuilder().setHitsAddend(6).build();
        RateLimitResponse r = call(six);
        assertEquals(Code.OK, r.getOverallCode());
        assertEquals(0, r.getStatuses(0).getLimitRemaining());
        assertEquals(
                Code.OVER_LIMIT, call(request("another", descriptor("key3", v))).getOverallCode());

        // More hits than the limit: refused, and nothing consumed.
        String big = unique();
        RateLimitResponse tooMany = call(request("another", descriptor("key3", big)).toBuilder()
                .setHitsAddend(11)
                .build());
        assertEquals(Code.OVER_LIMIT, tooMany.getOverallCode());
        assertEquals(
                9,
                call(request("another", descriptor("key3", big))).getStatuses(0).getLimitRemaining());

        // A descriptor's own hits_addend overrides the request's.
        String a = unique();
        String b = unique();
        RateLimitDescriptor three = descriptor("key3", a).toBuilder()
                .setHitsAddend(UInt64Value.of(3))
                .build();
        RateLimitResponse mixed = call(request("another", three, descriptor("key4", b)).toBuilder()
                .setHitsAddend(2)
                .build());
        assertEquals(Code.OK, mixed.getOverallCode());
        assertEquals(7, mixed.getStatuses(0).getLimitRemaining());
        assertEquals(18, mixed.getStatuses(1).getLimitRemaining());
    }

    @Test
    void shadowModeAnswersOkWithNothingRemaining() {
        String v = unique();
        RateLimitResponse first = call(request("extra", descriptor("shadow", v)));
        assertEquals(Code.OK, first.getOverallCode());
        assertEquals(0, first.getStatuses(0).getLimitRemaining());
        RateLimitResponse second = call(request("extra", descriptor("shadow", v)));
        assertEquals(Code.OK, second.getOverallCode());
        assertEquals(Code.OK, second.getStatuses(0).getCode());
        assertEquals(limit(1, RateLimit.Unit.HOUR), second.getStatuses(0).getCurrentLimit());
        assertEquals(0, second.getStatuses(0).getLimitRemaining());
        assertEquals(0, second.getRequestHeadersToAddCount());
    }

    @Test
    void shadowBanTellsTheUpstreamInARequestHeader() {
        String v = unique();
        assertEquals(0, call(request("extra", descriptor("banned", v))).getRequestHeadersToAddCount());
        RateLimitResponse banned = call(request("extra", descriptor("banned", v)));
        assertEquals(Code.OK, banned.getOverallCode());
        assertEquals(1, banned.getRequestHeadersToAddCount());
        assertEquals("x-sluice-shadow-ban", banned.getRequestHeadersToAdd(0).getKey());
        assertEquals("banned", banned.getRequestHeadersToAdd(0).getValue());
    }

    @Test
    void unlimitedAndWindowLimits() {
        RateLimitResponse trusted = call(request("extra", descriptor("trusted", unique())));
        assertEquals(
                DescriptorStatus.newBuilder()
                        .setCode(Code.OK)
                        .setLimitRemaining(-1) // 2^32 - 1 as a uint32
                        .build(),
                trusted.getStatuses(0));

        RateLimitResponse window = call(request("extra", descriptor("six_hours", unique())));
        DescriptorStatus s = window.getStatuses(0);
        assertEquals(limit(3, RateLimit.Unit.UNKNOWN), s.getCurrentLimit());
        assertEquals(2, s.getLimitRemaining());
        long millis = s.getDurationUntilReset().getSeconds() * 1000
                + s.getDurationUntilReset().getNanos() / 1_000_000;
        assertTrue(millis > 0 && millis <= 6 * 3600 * 1000, "reset within the 6 h window: " + s);
    }

    @Test
    void httpJsonAnswersTheSameAs200Then429() {
        String v = unique();
        String body = ServerProcess.json(request("basic", descriptor("one_per_day", v)));
        HttpResponse<String> ok = server.post("/json", body);
        assertEquals(200, ok.statusCode(), ok.body());
        assertEquals("application/json", ok.headers().firstValue("Content-Type").orElse(""));
        RateLimitResponse first = ServerProcess.parse(ok.body());
        assertEquals(Code.OK, first.getOverallCode());
        assertEquals(limit(1, RateLimit.Unit.DAY), first.getStatuses(0).getCurrentLimit());
        assertTrue(
                ok.body()
                        .startsWith("{\"overallCode\":\"OK\",\"statuses\":[{\"code\":\"OK\",\"currentLimit\":"
                                + "{\"requestsPerUnit\":1,\"unit\":\"DAY\"},"),
                ok.body());

        HttpResponse<String> over = server.post("/json", body);
        assertEquals(429, over.statusCode(), over.body());
        RateLimitResponse second = ServerProcess.parse(over.body());
        assertEquals(Code.OVER_LIMIT, second.getOverallCode());
        assertEquals(Code.OVER_LIMIT, second.getStatuses(0).getCode());
        assertEquals(0, second.getStatuses(0).getLimitRemaining());
    }

    @Test
    void reloadByReplacingTheFileAndABadFileKeepsTheLastGoodOne() throws IOException {
        assertEquals(1, reloadLimit());
        replace(dir.resolve("reload.yaml"), reload(2));
        Await.until("the new file in force", Await.GENEROUS, () -> reloadLimit() == 2);

        double failures = configFailures();
        replace(dir.resolve("reload.yaml"), "domain: reload\ndescriptors:\n  - key: k\n    ratelimit: {}\n");
        Await.until("the bad file refused and counted", Await.GENEROUS, () -> configFailures() > failures);
        assertEquals(2, reloadLimit(), "the last good configuration stays in force");

        replace(dir.resolve("reload.yaml"), reload(3));
        Await.until("a good file in force again", Await.GENEROUS, () -> reloadLimit() == 3);
    }

    @Test
    void reloadByAConfigMapSymlinkSwap() throws IOException {
        assertEquals(5, k8sLimit());
        Path v2 = Files.createDirectories(dir.resolve("..2026_02"));
        Files.writeString(v2.resolve("basic.yaml"), BASIC);
        Files.writeString(v2.resolve("another.yaml"), ANOTHER);
        Files.writeString(v2.resolve("k8s.yaml"), k8s(7));
        Path tmp = dir.resolve("..data_tmp");
        Files.createSymbolicLink(tmp, v2.getFileName());
        Files.move(tmp, dir.resolve("..data"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        Await.until("the swapped ConfigMap in force", Await.GENEROUS, () -> k8sLimit() == 7);
    }

    private int reloadLimit() {
        return call(request("reload", descriptor("k", unique())))
                .getStatuses(0)
                .getCurrentLimit()
                .getRequestsPerUnit();
    }

    private int k8sLimit() {
        return call(request("k8s", descriptor("k", unique())))
                .getStatuses(0)
                .getCurrentLimit()
                .getRequestsPerUnit();
    }

    double configFailures() {
        return Metrics.value(server.get("/metrics").body(), "sluice_policy_config_loads_total{result=\"failure\"}");
    }

    /** Writes beside the file under a dot-name, then moves it over the file in one step, as a deployment does. */
    static void replace(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
