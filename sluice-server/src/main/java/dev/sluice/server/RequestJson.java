package dev.sluice.server;

import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import java.util.function.BooleanSupplier;
import java.util.function.ToIntFunction;
import org.jspecify.annotations.Nullable;

/**
 * The usual {@code POST /json} body read without {@code JsonFormat}: an object with {@code domain} and
 * {@code descriptors}, each descriptor an object with {@code entries}, each entry an object with {@code key} and
 * {@code value}, every string free of escapes and control characters, each field at most once, JSON whitespace
 * anywhere between tokens. Any other text (another field, a cost, a number, an escape, a duplicate, a syntax error) is
 * not read here: {@link #parse} answers null, and the caller reads it with {@code JsonFormat}, whose answer or error
 * it then is. So for every text read here the message is the one {@code JsonFormat} makes of it
 * ({@code RequestJsonTest}). Stateless and thread-safe.
 */
final class RequestJson {

    private final String s;
    private int i;

    private RequestJson(String text) {
        this.s = text;
    }

    /** The request {@code text} holds, or null when it is not the plain shape read here. */
    static @Nullable RateLimitRequest parse(String text) {
        return new RequestJson(text).request();
    }

    private @Nullable RateLimitRequest request() {
        RateLimitRequest.Builder b = RateLimitRequest.newBuilder();
        boolean read = object(name -> {
            if (name.equals("domain")) {
                String v = string();
                if (v == null) {
                    return 0;
                }
                b.setDomain(v);
                return 1;
            }
            return name.equals("descriptors") && array(() -> descriptor(b)) ? 2 : 0;
        });
        if (!read) {
            return null;
        }
        skip();
        return i == s.length() ? b.build() : null;
    }

    /**
     * An object whose fields {@code field} reads, each given its name once its colon is consumed and answering the
     * field's bit (a power of two), or 0 for a field it does not read; false if not such an object, or a field comes
     * twice.
     */
    private boolean object(ToIntFunction<String> field) {
        if (!next('{')) {
            return false;
        }
        if (next('}')) {
            return true;
        }
        int seen = 0;
        do {
            String name = string();
            if (name == null || !next(':')) {
                return false;
            }
            int bit = field.applyAsInt(name);
            if (bit == 0 || (seen & bit) != 0) {
                return false;
            }
            seen |= bit;
        } while (next(','));
        return next('}');
    }

    /** An array of the elements {@code element} reads, each added where it belongs; false if not. */
    private boolean array(BooleanSupplier element) {
        if (!next('[')) {
            return false;
        }
        if (next(']')) {
            return true;
        }
        do {
            if (!element.getAsBoolean()) {
                return false;
            }
        } while (next(','));
        return next(']');
    }

    /** A descriptor: an object with at most its entries. */
    private boolean descriptor(RateLimitRequest.Builder b) {
        RateLimitDescriptor.Builder d = RateLimitDescriptor.newBuilder();
        if (!object(name -> name.equals("entries") && array(() -> entry(d)) ? 1 : 0)) {
            return false;
        }
        b.addDescriptors(d);
        return true;
    }

    /** An entry: an object with at most its key and its value, each a string. */
    private boolean entry(RateLimitDescriptor.Builder d) {
        RateLimitDescriptor.Entry.Builder e = RateLimitDescriptor.Entry.newBuilder();
        boolean read = object(name -> {
            boolean key = name.equals("key");
            if (!key && !name.equals("value")) {
                return 0;
            }
            String v = string();
            if (v == null) {
                return 0;
            }
            if (key) {
                e.setKey(v);
                return 1;
            }
            e.setValue(v);
            return 2;
        });
        if (!read) {
            return false;
        }
        d.addEntries(e);
        return true;
    }

    /** A string with no escape and no control character, or null (the position then no longer matters). */
    private @Nullable String string() {
        skip();
        if (i >= s.length() || s.charAt(i) != '"') {
            return null;
        }
        int start = ++i;
        for (; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"') {
                return s.substring(start, i++);
            }
            if (c == '\\' || c < 0x20) {
                return null;
            }
        }
        return null;
    }

    /**
     * Consumes {@code c} after any whitespace, if it is next. When it is not, only whitespace was consumed, which the
     * next token skips anyway.
     */
    private boolean next(char c) {
        skip();
        if (i < s.length() && s.charAt(i) == c) {
            i++;
            return true;
        }
        return false;
    }

    /** Skips JSON whitespace: space, tab, line feed, carriage return. */
    private void skip() {
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            i++;
        }
    }
}
