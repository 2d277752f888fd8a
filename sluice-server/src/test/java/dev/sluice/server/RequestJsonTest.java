package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link RequestJson} reads a text only where {@code JsonFormat} makes the same message of it: random requests written
 * by {@code JsonFormat} (compact and indented) and by hand (any whitespace, fields in any order, strings with escapes
 * and non-ASCII characters), and each of those texts again with one character changed, inserted or removed. Whatever
 * it does not read (null) goes to {@code JsonFormat} in the service.
 */
class RequestJsonTest {

    private static final JsonFormat.Parser PARSER = JsonFormat.parser();
    private static final String ALPHABET = "abcXYZ019-_.:/ \u00e9\u20ac\ud83d\ude00\"\\\n<>&='";
    private static final String WHITESPACE = " \t\n\r";

    private final Random random = new Random(20261129);

    @Test
    void everyTextItReadsIsTheMessageJsonFormatMakesOfIt() throws InvalidProtocolBufferException {
        int read = 0;
        int texts = 0;
        for (int n = 0; n < 10_000; n++) {
            RateLimitRequest r = request();
            for (String text : new String[] {
                JsonFormat.printer().omittingInsignificantWhitespace().print(r),
                JsonFormat.printer().print(r),
                byHand(r)
            }) {
                texts++;
                RateLimitRequest fast = RequestJson.parse(text);
                if (fast != null) {
                    read++;
                    assertEquals(jsonFormat(text), fast, text);
                    assertEquals(r, fast, text);
                }
                String changed = change(text);
                RateLimitRequest fastChanged = RequestJson.parse(changed);
                if (fastChanged != null) {
                    RateLimitRequest.Builder b = RateLimitRequest.newBuilder();
                    try {
                        PARSER.merge(changed, b);
                    } catch (InvalidProtocolBufferException | RuntimeException e) {
                        fail("read here, refused by JsonFormat: " + changed + " (" + e + ")");
                    }
                    assertEquals(b.build(), fastChanged, changed);
                }
            }
        }
        assertTrue(
                read > texts / 3, "read " + read + " of " + texts + " texts: the plain shape should be most of them");
    }

    @Test
    void theUsualBodyIsReadAndOtherShapesAreLeftToJsonFormat() throws InvalidProtocolBufferException {
        String usual =
                "{\"domain\":\"oauth-token\",\"descriptors\":[{\"entries\":[{\"key\":\"client_id\",\"value\":\"abc\"}]}]}";
        assertEquals(jsonFormat(usual), RequestJson.parse(usual));
        for (String other : new String[] {
            "{\"domain\":\"d\",\"hitsAddend\":2}",
            "{\"domain\":\"d\",\"hits_addend\":2}",
            "{\"domain\":\"d\",\"descriptors\":[{\"entries\":[],\"hitsAddend\":3}]}",
            "{\"domain\":\"a\\u0062\"}",
            "{\"domain\":\"d\",\"domain\":\"e\"}",
            "{\"domain\":null}",
            "{\"domain\":\"d\"} x",
            "{\"domain\":\"d\",}",
            "{\"unknown\":1}",
            "[]",
            ""
        }) {
            assertNull(RequestJson.parse(other), other);
        }
    }

    private static RateLimitRequest jsonFormat(String text) throws InvalidProtocolBufferException {
        RateLimitRequest.Builder b = RateLimitRequest.newBuilder();
        PARSER.merge(text, b);
        return b.build();
    }

    private RateLimitRequest request() {
        RateLimitRequest.Builder b = RateLimitRequest.newBuilder();
        if (random.nextInt(6) > 0) {
            b.setDomain(string());
        }
        int descriptors = random.nextInt(4);
        for (int i = 0; i < descriptors; i++) {
            RateLimitDescriptor.Builder d = RateLimitDescriptor.newBuilder();
            int entries = random.nextInt(4);
            for (int j = 0; j < entries; j++) {
                RateLimitDescriptor.Entry.Builder e = RateLimitDescriptor.Entry.newBuilder();
                if (random.nextInt(6) > 0) {
                    e.setKey(string());
                }
                if (random.nextInt(6) > 0) {
                    e.setValue(string());
                }
                d.addEntries(e);
            }
            b.addDescriptors(d);
        }
        return b.build();
    }

    /** {@code r} as JSON with whitespace and field order drawn at random, and every field written, empty or not. */
    private String byHand(RateLimitRequest r) {
        StringBuilder s = new StringBuilder();
        s.append(ws()).append('{').append(ws());
        String domain = "\"domain\"" + ws() + ':' + ws() + quote(r.getDomain());
        StringBuilder ds = new StringBuilder("\"descriptors\"" + ws() + ':' + ws() + '[' + ws());
        for (int i = 0; i < r.getDescriptorsCount(); i++) {
            RateLimitDescriptor d = r.getDescriptors(i);
            ds.append(i > 0 ? ws() + ',' + ws() : "").append('{').append(ws());
            ds.append("\"entries\"")
                    .append(ws())
                    .append(':')
                    .append(ws())
                    .append('[')
                    .append(ws());
            for (int j = 0; j < d.getEntriesCount(); j++) {
                RateLimitDescriptor.Entry e = d.getEntries(j);
                String key = "\"key\"" + ws() + ':' + ws() + quote(e.getKey());
                String value = "\"value\"" + ws() + ':' + ws() + quote(e.getValue());
                ds.append(j > 0 ? ws() + ',' + ws() : "").append('{').append(ws());
                ds.append(random.nextBoolean() ? key + ws() + ',' + ws() + value : value + ws() + ',' + ws() + key);
                ds.append(ws()).append('}');
            }
            ds.append(ws()).append(']').append(ws()).append('}');
        }
        ds.append(ws()).append(']');
        s.append(random.nextBoolean() ? domain + ws() + ',' + ws() + ds : ds + ws() + ',' + ws() + domain);
        return s.append(ws()).append('}').append(ws()).toString();
    }

    private String ws() {
        StringBuilder s = new StringBuilder();
        for (int n = random.nextInt(3) == 0 ? random.nextInt(3) : 0; n > 0; n--) {
            s.append(WHITESPACE.charAt(random.nextInt(WHITESPACE.length())));
        }
        return s.toString();
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> b.append(c);
            }
        }
        return b.append('"').toString();
    }

    private String change(String text) {
        StringBuilder s = new StringBuilder(text);
        int at = text.isEmpty() ? 0 : random.nextInt(text.length());
        char c = "{}[]:,\" \\ax0".charAt(random.nextInt(12));
        switch (random.nextInt(3)) {
            case 0 -> s.insert(at, c);
            case 1 -> {
                if (!text.isEmpty()) {
                    s.deleteCharAt(at);
                }
            }
            default -> {
                if (!text.isEmpty()) {
                    s.setCharAt(at, c);
                }
            }
        }
        return s.toString();
    }

    private String string() {
        StringBuilder s = new StringBuilder();
        int n = random.nextInt(10);
        boolean plain = random.nextInt(3) > 0;
        int[] points = ALPHABET.codePoints().toArray();
        for (int i = 0; i < n; i++) {
            s.appendCodePoint(points[random.nextInt(plain ? 15 : points.length)]);
        }
        return s.toString();
    }
}
