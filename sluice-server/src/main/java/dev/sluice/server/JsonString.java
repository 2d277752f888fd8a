package dev.sluice.server;

import java.util.Locale;

/**
 * A string written as JSON (RFC 8259 §7) that is also a YAML double-quoted scalar, for every text the service writes
 * by hand: its log lines, its error bodies, the dashboard's data and the YAML it makes of Envoy's rate limit configs.
 */
final class JsonString {
    private JsonString() {}

    /**
     * {@code s} in double quotes: the quote and the backslash escaped, newline, carriage return and tab as {@code \n},
     * {@code \r}, {@code \t}, and as {@code \}{@code uXXXX} every other control character (C0, DEL and C1), the
     * characters a reader may take for a line's end or drop (U+2028, U+2029, U+FEFF) and the two that YAML refuses to
     * read as they are (U+FFFE, U+FFFF).
     */
    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20
                            || c == 0x7f
                            || (c >= 0x80 && c <= 0x9f)
                            || c == 0x2028
                            || c == 0x2029
                            || c == 0xfeff
                            || c >= 0xfffe) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
