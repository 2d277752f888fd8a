package dev.sluice.http;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict JSON parser (RFC 8259) for the problem bodies the tests read: objects as ordered maps, arrays as lists,
 * integers as Long, other numbers as Double. A duplicate member, a trailing comma or anything after the value throws.
 */
final class Json {

    private final String s;
    private int i;

    private Json(String s) {
        this.s = s;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> parseObject(String text) {
        Json p = new Json(text);
        p.ws();
        Object v = p.value();
        p.ws();
        if (p.i != text.length()) {
            throw p.error("trailing characters");
        }
        if (!(v instanceof Map)) {
            throw p.error("not an object");
        }
        return (Map<String, Object>) v;
    }

    private Object value() {
        char c = peek();
        switch (c) {
            case '{':
                return object();
            case '[':
                return array();
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", "null");
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw error("not a value");
        }
    }

    private Map<String, Object> object() {
        i++;
        Map<String, Object> m = new LinkedHashMap<>();
        ws();
        if (peek() == '}') {
            i++;
            return m;
        }
        while (true) {
            ws();
            String key = string();
            ws();
            expect(':');
            ws();
            if (m.put(key, value()) != null) {
                throw error("duplicate member " + key);
            }
            ws();
            if (peek() == '}') {
                i++;
                return Collections.unmodifiableMap(m);
            }
            expect(',');
        }
    }

    private List<Object> array() {
        i++;
        List<Object> list = new ArrayList<>();
        ws();
        if (peek() == ']') {
            i++;
            return list;
        }
        while (true) {
            ws();
            list.add(value());
            ws();
            if (peek() == ']') {
                i++;
                return List.copyOf(list);
            }
            expect(',');
        }
    }

    private String string() {
        expect('"');
        StringBuilder sb = new StringBuilder();
        while (i < s.length()) {
            char c = s.charAt(i++);
            if (c == '"') {
                return sb.toString();
            }
            if (c < 0x20) {
                throw error("an unescaped control character");
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            char e = s.charAt(i++);
            switch (e) {
                case '"', '\\', '/' -> sb.append(e);
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'n' -> sb.append('\n');
                case 'r' -> sb.append('\r');
                case 't' -> sb.append('\t');
                case 'u' -> {
                    sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                    i += 4;
                }
                default -> throw error("a bad escape");
            }
        }
        throw error("an unterminated string");
    }

    private Object number() {
        int start = i;
        if (peek() == '-') {
            i++;
        }
        boolean integer = true;
        while (i < s.length() && "0123456789.eE+-".indexOf(s.charAt(i)) >= 0) {
            if ("eE.".indexOf(s.charAt(i)) >= 0) {
                integer = false;
            }
            i++;
        }
        String text = s.substring(start, i);
        return integer ? (Object) Long.parseLong(text) : (Object) Double.parseDouble(text);
    }

    private Object literal(String word, Object value) {
        if (!s.startsWith(word, i)) {
            throw error("not " + word);
        }
        i += word.length();
        return value;
    }

    private void ws() {
        while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
    }

    private char peek() {
        return i < s.length() ? s.charAt(i) : '\0';
    }

    private void expect(char c) {
        if (peek() != c) {
            throw error("expected '" + c + "'");
        }
        i++;
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException(what + " at " + i + " of " + s);
    }
}
