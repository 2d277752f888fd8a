package dev.sluice.http;

import java.util.List;

/**
 * The {@code application/problem+json} body (RFC 9457) of a refusal, written by hand: one object, five members. Uses
 * no servlet type, so any front door that answers a refusal over HTTP writes the same body.
 */
public final class ProblemJson {

    /** The problem type of draft-ietf-httpapi-ratelimit-headers-10 §5.1. */
    public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

    public static final String TITLE = "Request cannot be satisfied as assigned quota has been exceeded";

    private ProblemJson() {}

    /** The media type of the body. */
    public static final String MEDIA_TYPE = "application/problem+json";

    /** The body of a {@code 429} refused under {@code fields}: its {@link RateLimitFields#refusalDetail()} and violated limits. */
    public static String quotaExceeded(RateLimitFields fields) {
        return quotaExceeded(fields.refusalDetail(), fields.violated());
    }

    /** The body of a {@code 429}: type, title, status, detail and {@code violated-policies}. */
    public static String quotaExceeded(String detail, List<String> violatedPolicies) {
        StringBuilder sb = new StringBuilder(256);
        sb.append("{\"type\":");
        string(sb, QUOTA_EXCEEDED);
        sb.append(",\"title\":");
        string(sb, TITLE);
        sb.append(",\"status\":429,\"detail\":");
        string(sb, detail);
        sb.append(",\"violated-policies\":[");
        for (int i = 0; i < violatedPolicies.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            string(sb, violatedPolicies.get(i));
        }
        return sb.append("]}").toString();
    }

    /** Appends {@code s} as a JSON string (RFC 8259 §7): quote, backslash and control characters escaped. */
    static StringBuilder string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20 || c == '\u2028' || c == '\u2029') {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"');
    }
}
