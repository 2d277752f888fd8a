package dev.sluice.http;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict parser of HTTP structured field lists (RFC 8941 / RFC 9651 §4.2, without dates and display strings), for
 * checking the fields the filter writes: anything the RFC's algorithm fails on throws
 * {@link IllegalArgumentException} naming the position.
 */
final class StructuredFields {

    /** A token bare item (RFC 8941 §3.3.4), kept apart from a string. */
    record Token(String value) {}

    /** A list member: an item or an inner list, with its parameters in order. */
    sealed interface Member permits Item, InnerList {
        Map<String, Object> params();
    }

    /** An item: a bare item (Long, BigDecimal, String, Token, byte[], Boolean) and parameters. */
    record Item(Object value, Map<String, Object> params) implements Member {
        /** The value of parameter {@code key}, which must be present. */
        Object param(String key) {
            Object v = params.get(key);
            if (v == null) {
                throw new AssertionError("no parameter " + key + " in " + this);
            }
            return v;
        }
    }

    /** An inner list of items, and its own parameters. */
    record InnerList(List<Item> items, Map<String, Object> params) implements Member {}

    private final String s;
    private int i;

    private StructuredFields(String s) {
        this.s = s;
    }

    /** Parses a List field value (RFC 8941 §4.2, §4.2.1). */
    static List<Member> parseList(String field) {
        StructuredFields p = new StructuredFields(field);
        p.skipSp();
        List<Member> list = p.list();
        p.skipSp();
        if (p.i != p.s.length()) {
            throw p.error("trailing characters");
        }
        return list;
    }

    /** Parses a List field whose members must all be items. */
    static List<Item> parseItems(String field) {
        List<Item> items = new ArrayList<>();
        for (Member m : parseList(field)) {
            if (!(m instanceof Item item)) {
                throw new IllegalArgumentException("an inner list where an item is expected: " + field);
            }
            items.add(item);
        }
        return items;
    }

    private List<Member> list() {
        List<Member> members = new ArrayList<>();
        while (i < s.length()) {
            members.add(peek() == '(' ? innerList() : item());
            skipOws();
            if (i == s.length()) {
                return members;
            }
            if (s.charAt(i) != ',') {
                throw error("expected ',' between members");
            }
            i++;
            skipOws();
            if (i == s.length()) {
                throw error("a trailing ','");
            }
        }
        return members;
    }

    private InnerList innerList() {
        expect('(');
        List<Item> items = new ArrayList<>();
        while (i < s.length()) {
            skipSp();
            if (peek() == ')') {
                i++;
                return new InnerList(List.copyOf(items), params());
            }
            items.add(item());
            char c = peek();
            if (c != ' ' && c != ')') {
                throw error("expected ' ' or ')' in an inner list");
            }
        }
        throw error("an unterminated inner list");
    }

    private Item item() {
        Object value = bareItem();
        return new Item(value, params());
    }

    private Map<String, Object> params() {
        Map<String, Object> params = new LinkedHashMap<>();
        while (peek() == ';') {
            i++;
            skipSp();
            String key = key();
            Object value = Boolean.TRUE;
            if (peek() == '=') {
                i++;
                value = bareItem();
            }
            params.remove(key); // RFC 8941 §4.2.3.2: a repeated key overwrites, in the place of the last
            params.put(key, value);
        }
        return Collections.unmodifiableMap(params);
    }

    private String key() {
        char c = peek();
        if (!(isLcAlpha(c) || c == '*')) {
            throw error("a key starts with a lowercase letter or '*'");
        }
        int start = i;
        while (i < s.length()) {
            c = s.charAt(i);
            if (!(isLcAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*')) {
                break;
            }
            i++;
        }
        return s.substring(start, i);
    }

    private Object bareItem() {
        char c = peek();
        if (c == '-' || isDigit(c)) {
            return number();
        }
        if (c == '"') {
            return string();
        }
        if (c == ':') {
            return bytes();
        }
        if (c == '?') {
            return bool();
        }
        if (isAlpha(c) || c == '*') {
            return token();
        }
        throw error("not the start of a bare item");
    }

    private Object number() {
        int start = i;
        boolean negative = false;
        if (peek() == '-') {
            negative = true;
            i++;
        }
        if (!isDigit(peek())) {
            throw error("a digit expected");
        }
        boolean decimal = false;
        int digits = 0;
        int point = -1;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (isDigit(c)) {
                digits++;
            } else if (c == '.' && !decimal) {
                if (digits > 12) {
                    throw error("more than 12 digits before a decimal point");
                }
                decimal = true;
                point = i;
            } else {
                break;
            }
            i++;
            if (!decimal && digits > 15) {
                throw error("an integer of more than 15 digits");
            }
            if (decimal && digits > 16) {
                throw error("a decimal of more than 16 digits");
            }
        }
        String text = s.substring(negative ? start + 1 : start, i);
        if (!decimal) {
            long v = Long.parseLong(text);
            return negative ? -v : v;
        }
        if (point == i - 1) {
            throw error("a decimal ends with '.'");
        }
        if (i - point - 1 > 3) {
            throw error("more than 3 fractional digits");
        }
        BigDecimal v = new BigDecimal(text);
        return negative ? v.negate() : v;
    }

    private String string() {
        expect('"');
        StringBuilder sb = new StringBuilder();
        while (i < s.length()) {
            char c = s.charAt(i++);
            if (c == '\\') {
                if (i == s.length()) {
                    throw error("a string ends in '\\'");
                }
                char next = s.charAt(i++);
                if (next != '"' && next != '\\') {
                    throw error("only '\"' and '\\' may be escaped");
                }
                sb.append(next);
            } else if (c == '"') {
                return sb.toString();
            } else if (c < 0x20 || c > 0x7e) {
                throw error("a character outside printable ASCII in a string");
            } else {
                sb.append(c);
            }
        }
        throw error("an unterminated string");
    }

    private Token token() {
        int start = i;
        i++;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (!(isTchar(c) || c == ':' || c == '/')) {
                break;
            }
            i++;
        }
        return new Token(s.substring(start, i));
    }

    private byte[] bytes() {
        expect(':');
        int start = i;
        while (i < s.length() && s.charAt(i) != ':') {
            char c = s.charAt(i);
            if (!(isAlpha(c) || isDigit(c) || c == '+' || c == '/' || c == '=')) {
                throw error("not a base64 character");
            }
            i++;
        }
        if (i == s.length()) {
            throw error("an unterminated byte sequence");
        }
        String b64 = s.substring(start, i++);
        return Base64.getDecoder().decode(b64);
    }

    private Boolean bool() {
        expect('?');
        char c = peek();
        if (c == '1' || c == '0') {
            i++;
            return c == '1';
        }
        throw error("a boolean is ?0 or ?1");
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

    private void skipSp() {
        while (peek() == ' ') {
            i++;
        }
    }

    private void skipOws() {
        while (peek() == ' ' || peek() == '\t') {
            i++;
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException(what + " at " + i + " of [" + s + "]");
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static boolean isLcAlpha(char c) {
        return c >= 'a' && c <= 'z';
    }

    private static boolean isAlpha(char c) {
        return isLcAlpha(c) || (c >= 'A' && c <= 'Z');
    }

    private static boolean isTchar(char c) {
        return isAlpha(c) || isDigit(c) || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
    }
}
