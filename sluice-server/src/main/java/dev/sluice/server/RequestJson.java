package dev.sluice.server;

import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
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
        boolean domain = false;
        boolean descriptors = false;
        if (!open('{')) {
            return null;
        }
        if (!close('}')) {
            do {
                String name = string();
                if (name == null || !colon()) {
                    return null;
                }
                if (name.equals("domain") && !domain) {
                    String v = string();
                    if (v == null) {
                        return null;
                    }
                    b.setDomain(v);
                    domain = true;
                } else if (name.equals("descriptors") && !descriptors) {
                    if (!descriptors(b)) {
                        return null;
                    }
                    descriptors = true;
                } else {
                    return null;
                }
            } while (comma());
            if (!close('}')) {
                return null;
            }
        }
        skip();
        return i == s.length() ? b.build() : null;
    }

    private boolean descriptors(RateLimitRequest.Builder b) {
        if (!open('[')) {
            return false;
        }
        if (close(']')) {
            return true;
        }
        do {
            RateLimitDescriptor.Builder d = RateLimitDescriptor.newBuilder();
            if (!open('{')) {
                return false;
            }
            if (!close('}')) {
                String name = string();
                if (name == null || !name.equals("entries") || !colon() || !entries(d) || comma() || !close('}')) {
                    return false;
                }
            }
            b.addDescriptors(d);
        } while (comma());
        return close(']');
    }

    private boolean entries(RateLimitDescriptor.Builder d) {
        if (!open('[')) {
            return false;
        }
        if (close(']')) {
            return true;
        }
        do {
            RateLimitDescriptor.Entry.Builder e = RateLimitDescriptor.Entry.newBuilder();
            if (!open('{')) {
                return false;
            }
            boolean key = false;
            boolean value = false;
            if (!close('}')) {
                do {
                    String name = string();
                    if (name == null || !colon()) {
                        return false;
                    }
                    String v = string();
                    if (v == null) {
                        return false;
                    }
                    if (name.equals("key") && !key) {
                        e.setKey(v);
                        key = true;
                    } else if (name.equals("value") && !value) {
                        e.setValue(v);
                        value = true;
                    } else {
                        return false;
                    }
                } while (comma());
                if (!close('}')) {
                    return false;
                }
            }
            d.addEntries(e);
        } while (comma());
        return close(']');
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

    private boolean open(char c) {
        return next(c);
    }

    private boolean close(char c) {
        int at = i;
        if (next(c)) {
            return true;
        }
        i = at;
        return false;
    }

    private boolean colon() {
        return next(':');
    }

    private boolean comma() {
        int at = i;
        if (next(',')) {
            return true;
        }
        i = at;
        return false;
    }

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
