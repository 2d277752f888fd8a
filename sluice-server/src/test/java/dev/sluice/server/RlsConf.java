package dev.sluice.server;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * envoyproxy/ratelimit's {@code RateLimitConfig} resources written field by field from the field numbers of its
 * {@code rls_conf.proto}, independently of the descriptors the service reads them with, so that a wrong number there
 * shows here.
 */
final class RlsConf {
    static final String TYPE_URL = "type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig";
    static final int SECOND = 1;
    static final int MINUTE = 2;
    static final int HOUR = 3;
    static final int WEEK = 7;

    private RlsConf() {}

    /** A {@code RateLimitConfig}: name = 1, domain = 2, descriptors = 3. */
    static Any config(String name, String domain, ByteString... descriptors) {
        return Any.newBuilder()
                .setTypeUrl(TYPE_URL)
                .setValue(write(out -> {
                    string(out, 1, name);
                    string(out, 2, domain);
                    for (ByteString d : descriptors) {
                        bytes(out, 3, d);
                    }
                }))
                .build();
    }

    /** A {@code RateLimitDescriptor}: key = 1, value = 2, rate_limit = 3, descriptors = 4. */
    static ByteString descriptor(String key, String value, @Nullable ByteString rateLimit, ByteString... children) {
        return write(out -> {
            string(out, 1, key);
            string(out, 2, value);
            if (rateLimit != null) {
                bytes(out, 3, rateLimit);
            }
            for (ByteString c : children) {
                bytes(out, 4, c);
            }
        });
    }

    /** A descriptor with shadow_mode = 5 and quota_mode = 7 set. */
    static ByteString flagged(String key, ByteString rateLimit, boolean shadow, boolean quota) {
        return descriptor(key, "", rateLimit).concat(write(out -> {
            bool(out, 5, shadow);
            bool(out, 7, quota);
        }));
    }

    /** A {@code RateLimitPolicy}: unit = 1, requests_per_unit = 2, unlimited = 3, name = 4, replaces = 5. */
    static ByteString limit(int unit, int requestsPerUnit) {
        return write(out -> {
            try {
                if (unit != 0) {
                    out.writeEnum(1, unit);
                }
                if (requestsPerUnit != 0) {
                    out.writeUInt32(2, requestsPerUnit);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /** A policy with unlimited = 3. */
    static ByteString unlimited() {
        return write(out -> bool(out, 3, true));
    }

    /** A named policy that replaces others: name = 4, replaces = 5 (each a RateLimitReplace, name = 1). */
    static ByteString named(int unit, int requestsPerUnit, String name, String... replaces) {
        return limit(unit, requestsPerUnit).concat(write(out -> {
            string(out, 4, name);
            for (String r : replaces) {
                bytes(out, 5, write(o -> string(o, 1, r)));
            }
        }));
    }

    private static ByteString write(Consumer<CodedOutputStream> fields) {
        ByteString.Output bytes = ByteString.newOutput();
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        fields.accept(out);
        try {
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteString();
    }

    private static void string(CodedOutputStream out, int field, String s) {
        if (!s.isEmpty()) {
            bytes(out, field, ByteString.copyFromUtf8(s));
        }
    }

    private static void bytes(CodedOutputStream out, int field, ByteString b) {
        try {
            out.writeBytes(field, b);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void bool(CodedOutputStream out, int field, boolean b) {
        try {
            if (b) {
                out.writeBool(field, true);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
