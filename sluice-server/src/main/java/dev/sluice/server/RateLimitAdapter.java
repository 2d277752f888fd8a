package dev.sluice.server;

import com.google.protobuf.Duration;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.sluice.http.RateLimitFields;
import dev.sluice.policy.Descriptor;
import dev.sluice.policy.DescriptorVerdict;
import dev.sluice.policy.Limit;
import dev.sluice.policy.LimitVerdict;
import dev.sluice.policy.Outcome;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.policy.Rule;
import dev.sluice.policy.Verdict;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Turns Envoy's {@code RateLimitRequest} into one {@link PolicyLimiter#check} and the {@link Verdict} into a
 * {@code RateLimitResponse} filled as envoyproxy/ratelimit fills it. Both transports (gRPC and HTTP {@code /json})
 * go through here, so they answer alike. No rule of its own: every decision is the policy limiter's.
 *
 * <p>How the fields are filled, per descriptor, from the limit that decided it ({@link DescriptorVerdict#limit()}):
 *
 * <ul>
 *   <li>no rule, or a limit replaced by another: {@code code: OK}, nothing else (envoyproxy/ratelimit's "no limit");
 *   <li>{@code unlimited: true}: {@code code: OK}, {@code limit_remaining} 2<sup>32</sup>−1;
 *   <li>otherwise {@code current_limit} ({@code requests_per_unit}, {@code unit}, {@code name}),
 *       {@code duration_until_reset}, and {@code code: OVER_LIMIT} with {@code limit_remaining: 0} when an enforced
 *       limit refused; a dry-run or shadow-ban refusal answers {@code OK} with {@code limit_remaining: 0}, as
 *       envoyproxy/ratelimit's shadow mode does.
 * </ul>
 *
 * <p>A limit given as a {@code window} instead of a {@code unit} carries the unit whose length it is (60 s →
 * {@code MINUTE}), or {@code UNKNOWN} for any other window; its {@code duration_until_reset} is then exact to the
 * millisecond rather than whole seconds.
 */
final class RateLimitAdapter {
    /** The request header that tells the upstream a shadow-ban limit refused the request; its value is the rule. */
    static final String SHADOW_BAN_HEADER = "x-sluice-shadow-ban";

    private static final long MAX_UINT32 = 0xFFFF_FFFFL;
    /** The most of a parser's reason an error message quotes. */
    private static final int MAX_REASON = 200;

    /**
     * The largest request, in bytes as it came (a gRPC message, a {@code /json} body), decoded and decided on the
     * transport's event loop; a larger one (up to 1 MiB) is decoded on a pool thread, so that decoding it does not hold
     * up the other connections of that loop.
     */
    static final int INLINE_BYTES = 16 << 10;

    /**
     * The deepest nesting of objects and arrays a {@code POST /json} body may have: far above a request's own (five
     * levels), far below what makes {@code JsonFormat}'s error reasons overflow a thread's stack.
     */
    static final int MAX_JSON_DEPTH = 64;

    /** What made a check's stage fail: the cause a {@link CompletionException} wraps, else the failure itself. */
    static @Nullable Throwable cause(@Nullable Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    private static final JsonFormat.Parser JSON = JsonFormat.parser();

    private final PolicyLimiter limiter;
    private final HeaderStyle headers;
    private final ServerMetrics metrics;
    private final RequestCaps caps;
    private final BadRequestLog badRequests = new BadRequestLog();

    private final @Nullable EnvoyStats envoyStats;

    /** @param caps what a request may hold; one over them is refused before it is checked */
    RateLimitAdapter(PolicyLimiter limiter, HeaderStyle headers, ServerMetrics metrics, RequestCaps caps) {
        this(limiter, headers, metrics, caps, null);
    }

    /**
     * @param caps       what a request may hold; one over them is refused before it is checked
     * @param envoyStats envoyproxy/ratelimit's stats to count each answer in, or null
     */
    RateLimitAdapter(
            PolicyLimiter limiter,
            HeaderStyle headers,
            ServerMetrics metrics,
            RequestCaps caps,
            @Nullable EnvoyStats envoyStats) {
        this.envoyStats = envoyStats;
        this.limiter = Objects.requireNonNull(limiter);
        this.headers = Objects.requireNonNull(headers);
        this.metrics = Objects.requireNonNull(metrics);
        this.caps = Objects.requireNonNull(caps);
    }

    /**
     * A {@code RateLimitRequest} in protobuf's binary form, as gRPC carries it.
     *
     * @throws InvalidRequestException if it is not one, or a string in it is not UTF-8
     */
    static RateLimitRequest fromProto(byte[] message) {
        try {
            return RateLimitRequest.parseFrom(message);
        } catch (InvalidProtocolBufferException e) {
            String reason = String.valueOf(e.getMessage());
            boolean utf8 = reason.contains("UTF-8"); // protobuf's InvalidProtocolBufferException.invalidUtf8()
            throw new InvalidRequestException(
                    utf8 ? InvalidRequestException.Kind.INVALID_UTF8 : InvalidRequestException.Kind.UNDECODABLE,
                    (utf8 ? "a string of the message is not valid UTF-8: " : "the message is not a RateLimitRequest: ")
                            + excerpt(reason));
        }
    }

    /**
     * A {@code RateLimitRequest} in proto3 JSON, as {@code POST /json} carries it. The body must be UTF-8: a malformed
     * sequence is refused rather than replaced, so that two different byte strings never share one counter.
     *
     * @throws InvalidRequestException if the body is not UTF-8, or not a {@code RateLimitRequest} in proto3 JSON
     */
    static RateLimitRequest fromJson(byte[] body) {
        CharBuffer text = CharBuffer.allocate(body.length); // UTF-8 never has fewer bytes than UTF-16 chars
        ByteBuffer in = ByteBuffer.wrap(body);
        CharsetDecoder decoder = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        CoderResult r = decoder.decode(in, text, true);
        if (!r.isError()) {
            r = decoder.flush(text);
        }
        if (r.isError()) {
            throw new InvalidRequestException(
                    InvalidRequestException.Kind.INVALID_UTF8,
                    "the body is not valid UTF-8: a malformed sequence at byte " + in.position());
        }
        String json = text.flip().toString();
        RateLimitRequest plain = RequestJson.parse(json); // the usual shape, read without JsonFormat's reflection
        if (plain != null) {
            return plain;
        }
        int depth = depth(json);
        if (depth > MAX_JSON_DEPTH) { // JsonFormat's reasons can recurse once per level: refused before it reads
            throw new InvalidRequestException(
                    InvalidRequestException.Kind.UNDECODABLE,
                    "the body is not a RateLimitRequest in proto3 JSON: nested " + depth + " levels deep, more than "
                            + MAX_JSON_DEPTH);
        }
        RateLimitRequest.Builder request = RateLimitRequest.newBuilder();
        try {
            JSON.merge(json, request);
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            throw new InvalidRequestException(
                    InvalidRequestException.Kind.UNDECODABLE,
                    "the body is not a RateLimitRequest in proto3 JSON: " + excerpt(String.valueOf(e.getMessage())));
        }
        return request.build();
    }

    /**
     * The deepest nesting of objects and arrays in {@code json}, outside its strings: a {@code RateLimitRequest} is five
     * levels deep (request, descriptors, descriptor, entries, entry), and unknown fields are refused.
     */
    static int depth(String json) {
        int depth = 0;
        int deepest = 0;
        boolean inString = false;
        for (int i = 0; i < json.length(); i++) {
            char c = json.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++; // the escaped character, a quote included
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                deepest = Math.max(deepest, ++depth);
            } else if (c == '}' || c == ']') {
                depth--;
            }
        }
        return deepest;
    }

    /** A parser's reason, cut short: it can quote the input, which may be a megabyte long. */
    private static String excerpt(String reason) {
        return reason.length() <= MAX_REASON
                ? reason
                : reason.substring(0, MAX_REASON) + "… (" + reason.length() + " characters)";
    }

    /** Counts {@code e}, a request refused on {@code transport}, and logs it if its kind was not logged lately. */
    void refused(String transport, InvalidRequestException e) {
        metrics.request(transport, "invalid");
        badRequests.refused(transport, e);
    }

    /**
     * Decides {@code request}.
     *
     * @throws InvalidRequestException if the request cannot be decided, naming the problem
     */
    RateLimitResponse shouldRateLimit(RateLimitRequest request) {
        long started = System.nanoTime();
        checkCaps(request);
        long[] hits = new long[request.getDescriptorsCount()];
        List<Descriptor> descriptors = validate(request, hits);
        Verdict v = limiter.check(request.getDomain(), descriptors, hits);
        return response(request, hits, started, v);
    }

    /**
     * Decides {@code request} without holding the calling thread while the store answers
     * ({@link PolicyLimiter#checkAsync}): the stage is completed at once when no store call is needed, and otherwise
     * on the thread that completes the store call.
     *
     * @throws InvalidRequestException if the request cannot be decided, naming the problem
     */
    CompletionStage<RateLimitResponse> shouldRateLimitAsync(RateLimitRequest request) {
        long started = System.nanoTime();
        checkCaps(request);
        long[] hits = new long[request.getDescriptorsCount()];
        List<Descriptor> descriptors = validate(request, hits);
        return limiter.checkAsync(request.getDomain(), descriptors, hits)
                .thenApply(v -> response(request, hits, started, v));
    }

    /**
     * The descriptors of {@code request}, within its caps, once it is found valid, and in {@code hits} the cost of each.
     */
    private List<Descriptor> validate(RateLimitRequest request, long[] hits) {
        String domain = request.getDomain();
        if (domain.isEmpty()) {
            throw new InvalidRequestException(InvalidRequestException.Kind.INVALID_FIELD, RequestRules.emptyDomain());
        }
        int n = request.getDescriptorsCount();
        if (n == 0) {
            throw new InvalidRequestException(InvalidRequestException.Kind.INVALID_FIELD, RequestRules.noDescriptors());
        }
        List<Descriptor> descriptors = new ArrayList<>(n);
        long requestHits = Math.max(1, Integer.toUnsignedLong(request.getHitsAddend()));
        for (int i = 0; i < n; i++) {
            RateLimitDescriptor d = request.getDescriptors(i);
            descriptors.add(descriptor(i, d));
            hits[i] = d.hasHitsAddend() ? d.getHitsAddend().getValue() : requestHits;
            if (hits[i] == 0) {
                throw new InvalidRequestException(InvalidRequestException.Kind.INVALID_FIELD, RequestRules.zeroHits(i));
            }
            if (hits[i] < 0) {
                throw new InvalidRequestException(
                        InvalidRequestException.Kind.INVALID_FIELD,
                        "descriptors[" + i + "].hits_addend " + Long.toUnsignedString(hits[i])
                                + " is too large: at most " + Long.MAX_VALUE);
            }
            if (d.hasLimit()) {
                throw new InvalidRequestException(
                        InvalidRequestException.Kind.INVALID_FIELD, RequestRules.limitOverride(i));
            }
        }
        return descriptors;
    }

    /** The answer to {@code request}, costing {@code hits}, whose check started at {@code started} and gave {@code v}. */
    private RateLimitResponse response(RateLimitRequest request, long[] hits, long started, Verdict v) {
        String domain = request.getDomain();
        int n = hits.length;
        if (envoyStats != null) {
            envoyStats.record(domain, v, hits, started);
        }

        RateLimitResponse.Builder response = RateLimitResponse.newBuilder();
        DescriptorVerdict closest = null;
        DescriptorStatus closestStatus = null;
        for (int i = 0; i < n; i++) {
            DescriptorVerdict dv = v.descriptor(i);
            DescriptorStatus s = status(dv);
            response.addStatuses(s);
            // The descriptor closest to its limit, for the headers; one over its limit wins (envoyproxy/ratelimit).
            if (s.hasCurrentLimit()
                    && (closestStatus == null
                            || s.getCode() == Code.OVER_LIMIT
                            || (closestStatus.getCode() != Code.OVER_LIMIT
                                    && Integer.toUnsignedLong(s.getLimitRemaining())
                                            < Integer.toUnsignedLong(closestStatus.getLimitRemaining())))) {
                closest = dv;
                closestStatus = s;
            }
        }
        response.setOverallCode(v.allowed() ? Code.OK : Code.OVER_LIMIT);
        if (headers != HeaderStyle.OFF && closest != null) {
            addHeaders(response, closest);
        }
        Rule shadowBan = v.shadowBanRule().orElse(null);
        if (shadowBan != null) {
            response.addRequestHeadersToAdd(header(SHADOW_BAN_HEADER, shadowBan.path()));
        }
        return response.build();
    }

    /** Refuses a request over the {@link RequestCaps}, or with a string no UTF-8 can carry, before any other work. */
    private void checkCaps(RateLimitRequest request) {
        int n = request.getDescriptorsCount();
        if (n > caps.maxDescriptors()) {
            throw new InvalidRequestException(
                    InvalidRequestException.Kind.OVER_CAP,
                    "the request has " + n + " descriptors, over the limit of " + caps.maxDescriptors()
                            + " (serve --max-descriptors)");
        }
        RequestCaps.checkString("domain", request.getDomain(), caps.maxKeyBytes(), "--max-key-bytes");
        for (int i = 0; i < n; i++) {
            RateLimitDescriptor d = request.getDescriptors(i);
            int entries = d.getEntriesCount();
            if (entries > caps.maxEntries()) {
                throw new InvalidRequestException(
                        InvalidRequestException.Kind.OVER_CAP,
                        "descriptors[" + i + "] has " + entries + " entries, over the limit of " + caps.maxEntries()
                                + " (serve --max-entries)");
            }
            for (int j = 0; j < entries; j++) {
                RateLimitDescriptor.Entry e = d.getEntries(j);
                RequestCaps.checkEntry(i, j, "key", e.getKey(), caps.maxKeyBytes(), "--max-key-bytes");
                RequestCaps.checkEntry(i, j, "value", e.getValue(), caps.maxValueBytes(), "--max-value-bytes");
            }
        }
    }

    private static Descriptor descriptor(int i, RateLimitDescriptor d) {
        if (d.getEntriesCount() == 0) {
            throw new InvalidRequestException(InvalidRequestException.Kind.INVALID_FIELD, RequestRules.noEntries(i));
        }
        List<Descriptor.Entry> entries = new ArrayList<>(d.getEntriesCount());
        for (int j = 0; j < d.getEntriesCount(); j++) {
            RateLimitDescriptor.Entry e = d.getEntries(j);
            if (e.getKey().isEmpty()) {
                throw new InvalidRequestException(
                        InvalidRequestException.Kind.INVALID_FIELD, RequestRules.emptyKey(i, j));
            }
            entries.add(new Descriptor.Entry(e.getKey(), e.getValue()));
        }
        return Descriptor.of(entries);
    }

    private static DescriptorStatus status(DescriptorVerdict dv) {
        Outcome outcome = dv.outcome();
        if (outcome == Outcome.NO_LIMIT || outcome == Outcome.REPLACED) {
            return DescriptorStatus.newBuilder().setCode(Code.OK).build();
        }
        LimitVerdict decisive = dv.limit().orElse(null);
        if (decisive != null
                && decisive.failed()) { // on_store_failure answered: a code, and no count the store never gave
            return DescriptorStatus.newBuilder()
                    .setCode(outcome == Outcome.DENIED || outcome == Outcome.OVER_QUOTA ? Code.OVER_LIMIT : Code.OK)
                    .build();
        }
        if (outcome == Outcome.UNLIMITED) {
            return DescriptorStatus.newBuilder()
                    .setCode(Code.OK)
                    .setLimitRemaining((int) MAX_UINT32)
                    .build();
        }
        LimitVerdict l = dv.limit().orElseThrow();
        boolean denied = l.outcome() == Outcome.DENIED || l.outcome() == Outcome.OVER_QUOTA;
        long remaining = Math.min(MAX_UINT32, Math.max(0, l.reportedRemaining()));
        return DescriptorStatus.newBuilder()
                .setCode(denied ? Code.OVER_LIMIT : Code.OK)
                .setCurrentLimit(currentLimit(l.limit()))
                .setLimitRemaining((int) remaining)
                .setDurationUntilReset(untilReset(l))
                .build();
    }

    static RateLimit currentLimit(Limit limit) {
        return RateLimit.newBuilder()
                .setRequestsPerUnit((int) Math.min(MAX_UINT32, limit.requestsPerUnit()))
                .setUnit(unit(limit))
                .setName(limit.name())
                .build();
    }

    /** Envoy's units by their names in a configuration (lower case). */
    private static final Map<String, RateLimit.Unit> UNITS = units();

    private static Map<String, RateLimit.Unit> units() {
        Map<String, RateLimit.Unit> units = new HashMap<>();
        for (RateLimit.Unit u : RateLimit.Unit.values()) {
            if (u != RateLimit.Unit.UNRECOGNIZED) {
                units.put(u.name().toLowerCase(Locale.ROOT), u);
            }
        }
        return Map.copyOf(units);
    }

    /** The limit's unit; for a window, the unit of the same length, else {@code UNKNOWN}. */
    static RateLimit.Unit unit(Limit limit) {
        String unit = limit.unit();
        if (unit != null) {
            RateLimit.Unit known = UNITS.get(unit); // no upper-cased copy and enum look-up per answer
            return known != null ? known : RateLimit.Unit.valueOf(unit.toUpperCase(Locale.ROOT));
        }
        java.time.Duration w = Objects.requireNonNull(limit.window());
        long s = w.getSeconds();
        if (w.getNano() != 0) {
            return RateLimit.Unit.UNKNOWN;
        }
        if (s == 1) {
            return RateLimit.Unit.SECOND;
        } else if (s == 60) {
            return RateLimit.Unit.MINUTE;
        } else if (s == 3600) {
            return RateLimit.Unit.HOUR;
        } else if (s == 86_400) {
            return RateLimit.Unit.DAY;
        } else if (s == 7 * 86_400) {
            return RateLimit.Unit.WEEK;
        } else if (s == 30 * 86_400) {
            return RateLimit.Unit.MONTH;
        } else if (s == 365 * 86_400) {
            return RateLimit.Unit.YEAR;
        }
        return RateLimit.Unit.UNKNOWN;
    }

    /**
     * Whole seconds, rounded up, for a limit given as a unit: what envoyproxy/ratelimit answers for its fixed windows
     * ({@code unit − now % unit} in whole seconds); milliseconds, rounded up, for a {@code window}.
     */
    private static Duration untilReset(LimitVerdict l) {
        long nanos = Math.max(0, l.resetAfterNanos());
        if (l.limit().unit() != null) {
            return Duration.newBuilder()
                    .setSeconds(ceilDiv(nanos, 1_000_000_000L))
                    .build();
        }
        long millis = ceilDiv(nanos, 1_000_000L);
        return Duration.newBuilder()
                .setSeconds(millis / 1000)
                .setNanos((int) (millis % 1000) * 1_000_000)
                .build();
    }

    private static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }

    /** The fields of the closest descriptor, formatted as every front door formats them ({@link RateLimitFields}). */
    private void addHeaders(RateLimitResponse.Builder response, DescriptorVerdict closest) {
        RateLimitFields fields = RateLimitFields.of(closest);
        if (headers == HeaderStyle.DRAFT03) {
            fields.threeNumberFields("RateLimit-").forEach((k, v) -> response.addResponseHeadersToAdd(header(k, v)));
            return;
        }
        String policy = fields.policyField();
        if (policy != null) {
            response.addResponseHeadersToAdd(header("RateLimit-Policy", policy));
        }
        String rateLimit = fields.rateLimitField();
        if (rateLimit != null) {
            response.addResponseHeadersToAdd(header("RateLimit", rateLimit));
        }
    }

    private static HeaderValue header(String key, String value) {
        return HeaderValue.newBuilder().setKey(key).setValue(value).build();
    }
}
