package dev.sluice.server;

import com.google.gson.Gson;
import com.google.protobuf.Duration;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.Durations;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit;
import java.util.List;

/**
 * A {@code RateLimitResponse} as proto3 JSON, the text {@code JsonFormat.printer().omittingInsignificantWhitespace()}
 * prints, without its walk of the message's descriptors: the fields the service sets (the overall code, each
 * descriptor's code, limit, remaining and reset, the headers to add) written in field-number order, defaults left out,
 * strings escaped as JsonFormat escapes them (a string of plain characters as it is, any other through the same
 * {@link Gson}). A response with any other field set (a raw body, dynamic metadata, a quota, a header's raw value, a
 * code this version does not know, a duration out of range) is printed by JsonFormat itself. {@code ResponseJsonTest}
 * holds the two to the same text. Stateless and thread-safe.
 */
final class ResponseJson {

    private static final JsonFormat.Printer FALLBACK = JsonFormat.printer().omittingInsignificantWhitespace();

    /** What JsonFormat prints strings with: HTML-safe escaping included. */
    private static final Gson GSON = new Gson();

    private ResponseJson() {}

    /** {@code response} as JSON, exactly as JsonFormat prints it without insignificant whitespace. */
    static String print(RateLimitResponse response) throws InvalidProtocolBufferException {
        if (!plain(response)) {
            return FALLBACK.print(response);
        }
        StringBuilder b = new StringBuilder(96 + 128 * response.getStatusesCount());
        b.append('{');
        int fields = 0;
        if (response.getOverallCodeValue() != 0) {
            name(b, fields++, "overallCode")
                    .append('"')
                    .append(response.getOverallCode().name())
                    .append('"');
        }
        if (response.getStatusesCount() > 0) {
            name(b, fields++, "statuses").append('[');
            for (int i = 0; i < response.getStatusesCount(); i++) {
                if (i > 0) {
                    b.append(',');
                }
                status(b, response.getStatuses(i));
            }
            b.append(']');
        }
        fields = headers(b, fields, "responseHeadersToAdd", response.getResponseHeadersToAddList());
        headers(b, fields, "requestHeadersToAdd", response.getRequestHeadersToAddList());
        return b.append('}').toString();
    }

    /** Whether {@code r} sets only the fields written here, each with a value written here. */
    private static boolean plain(RateLimitResponse r) {
        if (!r.getRawBody().isEmpty()
                || r.hasDynamicMetadata()
                || r.hasQuota()
                || r.getOverallCode() == Code.UNRECOGNIZED) {
            return false;
        }
        for (DescriptorStatus s : r.getStatusesList()) {
            if (s.hasQuota()
                    || s.getCode() == Code.UNRECOGNIZED
                    || (s.hasCurrentLimit() && s.getCurrentLimit().getUnit() == RateLimit.Unit.UNRECOGNIZED)
                    || (s.hasDurationUntilReset() && !Durations.isValid(s.getDurationUntilReset()))) {
                return false;
            }
        }
        return plainHeaders(r.getResponseHeadersToAddList()) && plainHeaders(r.getRequestHeadersToAddList());
    }

    private static boolean plainHeaders(List<HeaderValue> headers) {
        for (HeaderValue h : headers) {
            if (!h.getRawValue().isEmpty()) {
                return false;
            }
        }
        return true;
    }

    private static void status(StringBuilder b, DescriptorStatus s) {
        b.append('{');
        int fields = 0;
        if (s.getCodeValue() != 0) {
            name(b, fields++, "code").append('"').append(s.getCode().name()).append('"');
        }
        if (s.hasCurrentLimit()) {
            RateLimit l = s.getCurrentLimit();
            name(b, fields++, "currentLimit").append('{');
            int limitFields = 0;
            if (l.getRequestsPerUnit() != 0) {
                name(b, limitFields++, "requestsPerUnit").append(Integer.toUnsignedString(l.getRequestsPerUnit()));
            }
            if (l.getUnitValue() != 0) {
                name(b, limitFields++, "unit")
                        .append('"')
                        .append(l.getUnit().name())
                        .append('"');
            }
            if (!l.getName().isEmpty()) {
                string(name(b, limitFields, "name"), l.getName());
            }
            b.append('}');
        }
        if (s.getLimitRemaining() != 0) {
            name(b, fields++, "limitRemaining").append(Integer.toUnsignedString(s.getLimitRemaining()));
        }
        if (s.hasDurationUntilReset()) {
            Duration d = s.getDurationUntilReset();
            name(b, fields, "durationUntilReset")
                    .append('"')
                    .append(Durations.toString(d))
                    .append('"');
        }
        b.append('}');
    }

    private static int headers(StringBuilder b, int fields, String field, List<HeaderValue> headers) {
        if (headers.isEmpty()) {
            return fields;
        }
        name(b, fields, field).append('[');
        for (int i = 0; i < headers.size(); i++) {
            HeaderValue h = headers.get(i);
            b.append(i > 0 ? ",{" : "{");
            int headerFields = 0;
            if (!h.getKey().isEmpty()) {
                string(name(b, headerFields++, "key"), h.getKey());
            }
            if (!h.getValue().isEmpty()) {
                string(name(b, headerFields, "value"), h.getValue());
            }
            b.append('}');
        }
        b.append(']');
        return fields + 1;
    }

    /** Appends {@code "field":}, after a comma unless it is the object's first field. */
    private static StringBuilder name(StringBuilder b, int before, String field) {
        if (before > 0) {
            b.append(',');
        }
        return b.append('"').append(field).append("\":");
    }

    /** Appends {@code s} as a JSON string, escaped as JsonFormat escapes it. */
    private static void string(StringBuilder b, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c == '='
                    || c == '\'') {
                b.append(GSON.toJson(s)); // escaped by the same rules JsonFormat prints strings with
                return;
            }
        }
        b.append('"').append(s).append('"');
    }
}
