package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.UInt64Value;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimitListener;
import dev.sluice.TimeSource;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.spi.AtomicDecider;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.spi.StoreDecision;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/** The adapter in process: how a verdict becomes Envoy's fields, and what a store failure answers per domain. */
class RateLimitAdapterTest {
    static final String WINDOWS =
            """
            domain: w
            descriptors:
              - key: minute
                rate_limit: {window: 60s, requests_per_unit: 3}
              - key: week
                rate_limit: {window: 7d, requests_per_unit: 3}
              - key: odd
                rate_limit: {window: 1500ms, requests_per_unit: 3}
              - key: hourly
                rate_limit: {unit: hour, requests_per_unit: 3, name: per_hour}
            """;

    static RateLimitAdapter adapter(String yaml) {
        return new RateLimitAdapter(
                PolicyLimiter.builder(Policies.parse("t.yaml", yaml)).build(),
                HeaderStyle.DRAFT03,
                new ServerMetrics(new SimpleMeterRegistry()),
                RequestCaps.DEFAULTS);
    }

    @Test
    void aJsonBodysDepthCountsItsObjectsAndArraysNotWhatItsStringsHold() {
        assertEquals(0, RateLimitAdapter.depth("1"));
        assertEquals(5, RateLimitAdapter.depth(ServerProcess.json(request("d", descriptor("k", "v")))));
        assertEquals(1, RateLimitAdapter.depth("{\"domain\":\"[[{{\\\"[[\\\\\",\"x\":\"]]}\"}"));
        assertEquals(3, RateLimitAdapter.depth("[[],[[]],{}]"));
        InvalidRequestException e = assertThrows(
                InvalidRequestException.class,
                () -> RateLimitAdapter.fromJson(
                        ("{\"domain\":\"x\",\"descriptors\":" + "[".repeat(65) + "]".repeat(65) + "}")
                                .getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        assertEquals(
                "the body is not a RateLimitRequest in proto3 JSON: nested 66 levels deep, more than 64",
                e.getMessage());
    }

    @Test
    void aWindowCarriesTheUnitOfItsLengthOrUnknown() {
        RateLimitAdapter a = adapter(WINDOWS);
        RateLimitResponse r = a.shouldRateLimit(request(
                "w",
                descriptor("minute", "x"),
                descriptor("week", "x"),
                descriptor("odd", "x"),
                descriptor("hourly", "x")));
        assertEquals(RateLimit.Unit.MINUTE, r.getStatuses(0).getCurrentLimit().getUnit());
        assertEquals(RateLimit.Unit.WEEK, r.getStatuses(1).getCurrentLimit().getUnit());
        assertEquals(RateLimit.Unit.UNKNOWN, r.getStatuses(2).getCurrentLimit().getUnit());
        assertEquals(RateLimit.Unit.HOUR, r.getStatuses(3).getCurrentLimit().getUnit());
        assertEquals("per_hour", r.getStatuses(3).getCurrentLimit().getName());
        // A 1.5 s fixed window: the reset to the millisecond, at most the window.
        long millis = r.getStatuses(2).getDurationUntilReset().getSeconds() * 1000
                + r.getStatuses(2).getDurationUntilReset().getNanos() / 1_000_000;
        assertEquals(0, r.getStatuses(2).getDurationUntilReset().getNanos() % 1_000_000);
        assertEquals(true, millis > 0 && millis <= 1500, "reset " + millis + " ms");
        // A unit: whole seconds.
        assertEquals(0, r.getStatuses(3).getDurationUntilReset().getNanos());
        // draft-03 headers of the closest descriptor: all have 2 left; the first found stays.
        assertEquals("RateLimit-Limit", r.getResponseHeadersToAdd(0).getKey());
        assertEquals("3", r.getResponseHeadersToAdd(0).getValue());
        assertEquals("2", r.getResponseHeadersToAdd(1).getValue());
    }

    /** envoyproxy/ratelimit's TestServiceQuotaModeOnlySomeOverTheLimit, on the wire. */
    @Test
    void aQuotaLimitOverIsReportedOverWhileTheRequestIsAllowed() {
        RateLimitAdapter a = adapter(
                """
                domain: q
                descriptors:
                  - key: foo
                    quota_mode: true
                    rate_limit: {unit: hour, requests_per_unit: 1}
                  - key: hello
                    quota_mode: true
                    rate_limit: {unit: hour, requests_per_unit: 5}
                """);
        a.shouldRateLimit(request("q", descriptor("foo", "bar")));
        RateLimitResponse r = a.shouldRateLimit(request("q", descriptor("foo", "bar"), descriptor("hello", "world")));
        assertEquals(RateLimitResponse.Code.OK, r.getOverallCode());
        assertEquals(RateLimitResponse.Code.OVER_LIMIT, r.getStatuses(0).getCode());
        assertEquals(0, r.getStatuses(0).getLimitRemaining());
        assertEquals(RateLimitResponse.Code.OK, r.getStatuses(1).getCode());
        assertEquals(4, r.getStatuses(1).getLimitRemaining());
    }

    @Test
    void descriptorsOfDifferentHitsAreDecidedTogether() {
        RateLimitAdapter a = adapter(WINDOWS);
        RateLimitResponse r = a.shouldRateLimit(request(
                        "w",
                        descriptor("hourly", "a").toBuilder()
                                .setHitsAddend(UInt64Value.of(2))
                                .build(),
                        descriptor("hourly", "b"))
                .toBuilder()
                .setHitsAddend(3)
                .build());
        assertEquals(Code.OK, r.getOverallCode());
        assertEquals(1, r.getStatuses(0).getLimitRemaining());
        assertEquals(0, r.getStatuses(1).getLimitRemaining());
    }

    /** A request of mixed costs is one decision: one descriptor over its limit refuses it, and nothing is taken. */
    @Test
    void aRequestOfMixedHitsIsDecidedAllOrNothing() {
        RateLimitAdapter a = adapter(WINDOWS);
        RateLimitResponse spend = a.shouldRateLimit(request(
                "w",
                descriptor("minute", "x").toBuilder()
                        .setHitsAddend(UInt64Value.of(3))
                        .build()));
        assertEquals(0, spend.getStatuses(0).getLimitRemaining());
        RateLimitResponse r = a.shouldRateLimit(request(
                "w",
                descriptor("hourly", "x").toBuilder()
                        .setHitsAddend(UInt64Value.of(2))
                        .build(),
                descriptor("minute", "x")));
        assertEquals(Code.OVER_LIMIT, r.getOverallCode(), "minute has nothing left");
        assertEquals(Code.OK, r.getStatuses(0).getCode());
        assertEquals(Code.OVER_LIMIT, r.getStatuses(1).getCode());
        RateLimitResponse alone = a.shouldRateLimit(request("w", descriptor("hourly", "x")));
        assertEquals(2, alone.getStatuses(0).getLimitRemaining(), "the refused request took none of hourly's 3");
    }

    @Test
    void aStoreThatCannotAnswerIsAnsweredByTheDomainsOnStoreFailure() {
        String yaml = "domain: open\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 3}\n";
        ExecutorService gone = Executors.newSingleThreadExecutor();
        gone.shutdown(); // every check is rejected at once, as when every store thread waits on a dead store
        // a shared store's decision needs the executor; an in-memory one is decided on the caller's thread
        AtomicDecider allows = new AtomicDecider() {
            @Override
            public StoreDecision decide(String key, long cost, boolean consume, long nowNanos) {
                return new StoreDecision(true, 2, 0, 0, 0);
            }

            @Override
            public boolean giveBack(String key, long cost, long place, long nowNanos) {
                return false;
            }
        };
        SharedStoreOptions options = new SharedStoreOptions(
                TimeSource.CLOCK,
                FailurePolicy.FAIL_OPEN,
                Duration.ofSeconds(30),
                Duration.ofSeconds(1),
                "test",
                RateLimitListener.NONE);
        RateLimitStore shared = config -> SharedRateLimiter.create(config, allows, options);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        for (String answer : new String[] {"allow", "deny"}) {
            RateLimitAdapter a = new RateLimitAdapter(
                    PolicyLimiter.builder(Policies.parse(
                                    "t.yaml",
                                    yaml.replace(
                                            "domain: open", "domain: " + answer + "\non_store_failure: " + answer)))
                            .store(shared)
                            .deadline(Duration.ofMillis(17), gone)
                            .meterRegistry(registry)
                            .build(),
                    HeaderStyle.OFF,
                    new ServerMetrics(registry),
                    RequestCaps.DEFAULTS);
            RateLimitResponse r = a.shouldRateLimit(request(answer, descriptor("k", "v")));
            Code expected = answer.equals("allow") ? Code.OK : Code.OVER_LIMIT;
            assertEquals(expected, r.getOverallCode(), answer);
            assertEquals(expected, r.getStatuses(0).getCode(), answer);
            assertFalse(r.getStatuses(0).hasCurrentLimit(), answer);
            assertEquals(
                    1.0,
                    registry.get("sluice.policy.store.failures")
                            .tag("domain", answer)
                            .tag("cause", "timeout")
                            .tag("answer", answer)
                            .counter()
                            .count());
        }
    }

    @Test
    void badRequestsNameTheProblem() {
        RateLimitAdapter a = adapter(WINDOWS);
        InvalidRequestException e =
                assertThrows(InvalidRequestException.class, () -> a.shouldRateLimit(request("w", descriptor("", "x"))));
        assertEquals("descriptors[0].entries[0].key must not be empty", e.getMessage());
    }

    @Test
    void aStringOverItsCapIsNamedByItsPlace() {
        RateLimitAdapter a = adapter(WINDOWS);
        RateLimitDescriptor second = descriptor("k", "v").toBuilder()
                .addEntries(
                        RateLimitDescriptor.Entry.newBuilder().setKey("user").setValue("x".repeat(1025)))
                .build();
        InvalidRequestException e = assertThrows(
                InvalidRequestException.class, () -> a.shouldRateLimit(request("w", descriptor("k", "v"), second)));
        assertEquals(
                "descriptors[1].entries[1].value is 1025 bytes, over the limit of 1024 bytes (serve --max-value-bytes)",
                e.getMessage());
        InvalidRequestException surrogate = assertThrows(
                InvalidRequestException.class, () -> a.shouldRateLimit(request("w", descriptor("k\ud800", "v"))));
        assertEquals(
                "descriptors[0].entries[0].key is not valid Unicode: an unpaired surrogate at character 1",
                surrogate.getMessage());
    }
}
