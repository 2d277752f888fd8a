package dev.sluice.server;

import java.util.Locale;

/** Which rate-limit headers {@code ShouldRateLimit} asks Envoy to add to the response ({@code --response-headers}). */
enum HeaderStyle {
    /** None, envoyproxy/ratelimit's default. */
    OFF,
    /**
     * {@code RateLimit-Limit}, {@code RateLimit-Remaining}, {@code RateLimit-Reset} (seconds), of the descriptor closest
     * to its limit: envoyproxy/ratelimit's {@code LIMIT_RESPONSE_HEADERS_ENABLED}, the IETF draft 03 fields.
     */
    DRAFT03,
    /**
     * The IETF draft 10 structured fields: {@code RateLimit-Policy: "rule";q=100;w=60} and
     * {@code RateLimit: "rule";r=0;t=30}, of the same descriptor.
     */
    DRAFT10;

    static HeaderStyle parse(Options o) {
        String v = o.string("response-headers", "off");
        try {
            return valueOf(v.toUpperCase(Locale.ROOT).replace("-", ""));
        } catch (IllegalArgumentException e) {
            throw o.bad("response-headers", v, "off, draft03 or draft10");
        }
    }
}
