package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.ByteString;
import com.google.protobuf.Duration;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link ResponseJson} prints every response exactly as {@code JsonFormat.printer().omittingInsignificantWhitespace()}
 * does: random responses of the shapes the service answers (codes, limits with and without names, remaining counts up
 * to the largest unsigned 32-bit value, resets with and without fractions of a second, headers), strings drawn from
 * characters JSON and JsonFormat escape, and responses with fields it leaves to JsonFormat.
 */
class ResponseJsonTest {

    private static final JsonFormat.Printer JSON_FORMAT = JsonFormat.printer().omittingInsignificantWhitespace();

    /** Plain letters, and every kind of character an escape is for: quotes, HTML, controls, non-ASCII, separators. */
    private static final String ALPHABET =
            "aZ09-_ .:;/,\"\\<>&='\n\t\r\b\f\u0000\u001f\u007f\u00e9\u2028\u2029\u20ac\ud83d\ude00";

    private final Random random = new Random(20261129);

    @Test
    void everyResponseOfTheServicesShapesPrintsAsJsonFormatPrintsIt() throws InvalidProtocolBufferException {
        for (int i = 0; i < 20_000; i++) {
            RateLimitResponse r = response(false);
            assertEquals(JSON_FORMAT.print(r), ResponseJson.print(r), r.toString());
        }
    }

    @Test
    void responsesWithOtherFieldsPrintAsJsonFormatPrintsThem() throws InvalidProtocolBufferException {
        for (int i = 0; i < 2_000; i++) {
            RateLimitResponse r = response(true);
            assertEquals(JSON_FORMAT.print(r), ResponseJson.print(r), r.toString());
        }
    }

    @Test
    void theReadmesAnswer() throws InvalidProtocolBufferException {
        assertEquals(
                "{\"overallCode\":\"OK\",\"statuses\":[{\"code\":\"OK\",\"currentLimit\":{\"requestsPerUnit\":20,"
                        + "\"unit\":\"MINUTE\"},\"limitRemaining\":19,\"durationUntilReset\":\"47s\"}]}",
                ResponseJson.print(readmeAnswer()));
    }

    /** The answer the README shows: one descriptor, 20 a minute, 19 left, 47 s to its reset. */
    static RateLimitResponse readmeAnswer() {
        return RateLimitResponse.newBuilder()
                .setOverallCode(Code.OK)
                .addStatuses(DescriptorStatus.newBuilder()
                        .setCode(Code.OK)
                        .setCurrentLimit(
                                RateLimit.newBuilder().setRequestsPerUnit(20).setUnit(RateLimit.Unit.MINUTE))
                        .setLimitRemaining(19)
                        .setDurationUntilReset(Duration.newBuilder().setSeconds(47)))
                .build();
    }

    private RateLimitResponse response(boolean others) {
        RateLimitResponse.Builder b = RateLimitResponse.newBuilder();
        if (random.nextInt(4) > 0) {
            b.setOverallCodeValue(random.nextInt(3));
        }
        int statuses = random.nextInt(5);
        for (int i = 0; i < statuses; i++) {
            DescriptorStatus.Builder s = DescriptorStatus.newBuilder();
            if (random.nextInt(4) > 0) {
                s.setCodeValue(random.nextInt(3));
            }
            if (random.nextInt(4) > 0) {
                RateLimit.Builder l = RateLimit.newBuilder();
                if (random.nextInt(5) > 0) {
                    l.setRequestsPerUnit(number());
                }
                if (random.nextInt(5) > 0) {
                    l.setUnitValue(random.nextInt(RateLimit.Unit.values().length - 1));
                }
                if (random.nextBoolean()) {
                    l.setName(string());
                }
                s.setCurrentLimit(l);
            }
            if (random.nextInt(4) > 0) {
                s.setLimitRemaining(number());
            }
            if (random.nextInt(4) > 0) {
                long seconds = random.nextInt(3) == 0 ? 0 : random.nextInt(100_000);
                int nanos = random.nextInt(3) == 0
                        ? 0
                        : random.nextInt(4) == 0 ? 500_000_000 : random.nextInt(1_000_000_000);
                s.setDurationUntilReset(
                        Duration.newBuilder().setSeconds(seconds).setNanos(nanos));
            }
            b.addStatuses(s);
        }
        int headers = random.nextInt(4);
        for (int i = 0; i < headers; i++) {
            b.addResponseHeadersToAdd(header());
        }
        if (random.nextInt(4) == 0) {
            b.addRequestHeadersToAdd(header());
        }
        if (others) {
            switch (random.nextInt(3)) {
                case 0 -> b.setRawBody(ByteString.copyFromUtf8(string()));
                case 1 -> b.setDynamicMetadata(Struct.newBuilder()
                        .putFields(
                                string(),
                                Value.newBuilder().setStringValue(string()).build()));
                default -> b.addResponseHeadersToAdd(header().toBuilder().setRawValue(ByteString.copyFromUtf8("raw")));
            }
        }
        return b.build();
    }

    private int number() {
        return switch (random.nextInt(4)) {
            case 0 -> 0;
            case 1 -> -1 - random.nextInt(1000); // above Integer.MAX_VALUE as an unsigned 32-bit value
            default -> random.nextInt(1_000_000);
        };
    }

    private HeaderValue header() {
        HeaderValue.Builder h = HeaderValue.newBuilder();
        if (random.nextInt(5) > 0) {
            h.setKey(string());
        }
        if (random.nextInt(5) > 0) {
            h.setValue(string());
        }
        return h.build();
    }

    private String string() {
        StringBuilder s = new StringBuilder();
        int n = random.nextInt(12);
        boolean plain = random.nextBoolean();
        int[] points = ALPHABET.codePoints().toArray();
        for (int i = 0; i < n; i++) {
            s.appendCodePoint(points[random.nextInt(plain ? 10 : points.length)]);
        }
        return s.toString();
    }
}
