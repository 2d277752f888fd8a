package dev.sluice.server.replay;

import dev.sluice.policy.Descriptor;
import dev.sluice.server.RequestRules;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A JSON line of a log: a {@code POST /json} request body (Envoy's {@code RateLimitRequest} in proto3 JSON) with a
 * {@code time}. Scanned once, byte by byte, in place: no tree, and no string made for a descriptor seen lately
 * ({@link Interned}). It refuses what the service refuses (an empty domain, no descriptors, a descriptor without
 * entries, an empty key, a descriptor's {@code hits_addend} of 0, a {@code limit} override), naming it as the service
 * does; fields it does not know are skipped.
 */
final class JsonLines implements LogReader.LineParser {
    private static final int MAX_DEPTH = 64;
    private static final long MAX_UINT32 = 0xFFFF_FFFFL;

    private static final byte[] DOMAIN = ascii("domain");
    private static final byte[] DESCRIPTORS = ascii("descriptors");
    private static final byte[] HITS = ascii("hits_addend");
    private static final byte[] HITS_CAMEL = ascii("hitsAddend");
    private static final byte[] TIME = ascii("time");
    private static final byte[] ENTRIES = ascii("entries");
    private static final byte[] KEY = ascii("key");
    private static final byte[] VALUE = ascii("value");
    private static final byte[] LIMIT = ascii("limit");

    private final Interned interned = new Interned();
    private final List<Descriptor> several = new ArrayList<>();
    private long[] ownHits = new long[8];
    private int[] ids = new int[8];
    /** The numbers of the descriptors {@link #descriptors()} read last ({@link Interned.Slot#id}). */
    private int[] lastIds = new int[0];

    private byte[] b = new byte[0];
    private int p;
    private int end;
    private int lineStart;

    @Override
    public TimedRequest parse(byte[] bytes, int start, int stop, long line) throws LogReader.LineException {
        this.b = bytes;
        this.p = start;
        this.end = stop;
        this.lineStart = start;
        ws();
        expect('{');
        String domain = null;
        long time = -1;
        long hits = 1;
        List<Descriptor> descriptors = null;
        long[] descriptorHits = null;
        if (!closes('}')) {
            do {
                int ks = p;
                int ke = memberName();
                if (is(ks, ke, DOMAIN)) {
                    if (!nullValue()) {
                        interned.begin();
                        string();
                        domain = interned.domain(interned.sig, 0, interned.sigLength);
                    }
                } else if (is(ks, ke, DESCRIPTORS)) {
                    if (!nullValue()) {
                        descriptors = descriptors();
                        descriptorHits = ownHitsOrNull(descriptors.size());
                    }
                } else if (is(ks, ke, HITS) || is(ks, ke, HITS_CAMEL)) {
                    if (!nullValue()) {
                        long h = count("hits_addend");
                        if (h > MAX_UINT32) {
                            throw malformed("hits_addend " + h + " is over the largest uint32, " + MAX_UINT32);
                        }
                        hits = Math.max(1, h);
                    }
                } else if (is(ks, ke, TIME)) {
                    time = time();
                } else {
                    skip(0);
                }
            } while (another('}'));
        }
        ws();
        if (p != end) {
            throw malformed("text after the request's closing brace at byte " + (p - start));
        }
        if (time < 0) {
            throw new LogReader.LineException(BadLine.Problem.MISSING_TIME, "no \"time\" (epoch ms or ISO-8601)");
        }
        if (domain == null || domain.isEmpty()) {
            throw malformed(RequestRules.emptyDomain());
        }
        if (descriptors == null || descriptors.isEmpty()) {
            throw malformed(RequestRules.noDescriptors());
        }
        if (descriptorHits != null) {
            for (int i = 0; i < descriptorHits.length; i++) {
                if (descriptorHits[i] < 0) {
                    descriptorHits[i] = hits;
                }
            }
        }
        return new TimedRequest(time, domain, descriptors, hits, descriptorHits, lastIds, line);
    }

    /** The descriptors' own hits, -1 where one has none; null when none has. */
    private long @Nullable [] ownHitsOrNull(int n) {
        for (int i = 0; i < n; i++) {
            if (ownHits[i] >= 0) {
                return Arrays.copyOf(ownHits, n);
            }
        }
        return null;
    }

    private List<Descriptor> descriptors() throws LogReader.LineException {
        expect('[');
        if (closes(']')) {
            lastIds = new int[0];
            return List.of();
        }
        List<Descriptor> alone = null;
        int[] aloneIds = null;
        several.clear();
        int i = 0;
        do {
            if (i == ownHits.length) {
                ownHits = Arrays.copyOf(ownHits, 2 * i);
                ids = Arrays.copyOf(ids, 2 * i);
            }
            ownHits[i] = -1;
            Interned.Slot slot = descriptor(i);
            if (i == 0) {
                alone = slot.alone;
                aloneIds = slot.aloneIds;
            }
            ids[i] = slot.id;
            several.add(slot.descriptor);
            i++;
        } while (another(']'));
        if (i == 1 && alone != null && aloneIds != null) {
            lastIds = aloneIds;
            return alone;
        }
        lastIds = Arrays.copyOf(ids, i);
        return List.copyOf(several);
    }

    private Interned.Slot descriptor(int i) throws LogReader.LineException {
        expect('{');
        interned.begin();
        boolean entries = false;
        if (!closes('}')) {
            do {
                int ks = p;
                int ke = memberName();
                if (is(ks, ke, ENTRIES)) {
                    if (!nullValue()) {
                        entries(i);
                        entries = true;
                    }
                } else if (is(ks, ke, HITS) || is(ks, ke, HITS_CAMEL)) {
                    if (!nullValue()) {
                        long h = count("descriptors[" + i + "].hits_addend");
                        if (h == 0) {
                            throw malformed(RequestRules.zeroHits(i));
                        }
                        ownHits[i] = h;
                    }
                } else if (is(ks, ke, LIMIT)) {
                    if (!nullValue()) {
                        throw malformed(RequestRules.limitOverride(i));
                    }
                } else {
                    skip(0);
                }
            } while (another('}'));
        }
        if (!entries || interned.entries == 0) {
            throw malformed(RequestRules.noEntries(i));
        }
        return interned.lookup();
    }

    private void entries(int i) throws LogReader.LineException {
        expect('[');
        if (closes(']')) {
            return;
        }
        int j = 0;
        do {
            entry(i, j++);
        } while (another(']'));
    }

    private void entry(int i, int j) throws LogReader.LineException {
        expect('{');
        int ks = -1;
        int ke = -1;
        int vs = -1;
        int ve = -1;
        if (!closes('}')) {
            do {
                int fs = p;
                int fe = memberName();
                boolean isKey = is(fs, fe, KEY);
                if (isKey || is(fs, fe, VALUE)) {
                    if ((isKey ? ks : vs) >= 0) {
                        throw malformed("descriptors[" + i + "].entries[" + j + "] has two \""
                                + (isKey ? "key" : "value") + "\" fields");
                    }
                    if (!nullValue()) {
                        int s = interned.sigLength;
                        string();
                        if (isKey) {
                            ks = s;
                            ke = interned.sigLength;
                            interned.put((byte) 0xFE);
                        } else {
                            vs = s;
                            ve = interned.sigLength;
                            interned.put((byte) 0xFF);
                        }
                    }
                } else {
                    skip(0);
                }
            } while (another('}'));
        }
        if (ks < 0 || ke == ks) {
            throw malformed(RequestRules.emptyKey(i, j));
        }
        if (vs < 0) { // proto3: an absent string is empty
            vs = interned.sigLength;
            ve = vs;
            interned.put((byte) 0xFF);
        }
        interned.entry(ks, ke, vs, ve);
    }

    /** A {@code time}: a number, or a string of digits or ISO-8601. */
    private long time() throws LogReader.LineException {
        int c = peek();
        if (c == '"') {
            int s = interned.sigLength;
            string();
            long t = Times.parse(interned.sig, s, interned.sigLength);
            interned.sigLength = s;
            return t;
        }
        int s = p;
        while (p < end
                && ((b[p] >= '0' && b[p] <= '9')
                        || b[p] == '-'
                        || b[p] == '.'
                        || b[p] == 'e'
                        || b[p] == 'E'
                        || b[p] == '+')) {
            p++;
        }
        long t = Times.digits(b, s, p);
        if (t < 0 || p == s) {
            throw new LogReader.LineException(
                    BadLine.Problem.MISSING_TIME,
                    "time "
                            + (p == s
                                    ? "is not a number or a string"
                                    : new String(b, s, p - s, StandardCharsets.UTF_8)
                                            + " is not epoch milliseconds, a whole number ≥ 0"));
        }
        return Times.inRange(t, b, s, p);
    }

    /** A whole number ≥ 0, given as a number or a string of digits (proto3 JSON writes 64-bit numbers as strings). */
    private long count(String field) throws LogReader.LineException {
        boolean quoted = peek() == '"';
        if (quoted) {
            p++;
        }
        int s = p;
        while (p < end && b[p] >= '0' && b[p] <= '9') {
            p++;
        }
        long v = Times.digits(b, s, p);
        if (quoted) {
            if (p >= end || b[p] != '"') {
                v = -1;
            } else {
                p++;
            }
        }
        if (v < 0 || p == s) {
            throw malformed(field + " is not a whole number ≥ 0");
        }
        if (!quoted && p < end && (b[p] == '.' || b[p] == 'e' || b[p] == 'E')) {
            throw malformed(field + " is not a whole number ≥ 0");
        }
        return v;
    }

    /** Consumes {@code null} if it is next: proto3 JSON's "the default". */
    private boolean nullValue() throws LogReader.LineException {
        if (peek() == 'n') {
            literal("null");
            return true;
        }
        return false;
    }

    /** An object's field name, from its opening quote: answers where its closing quote is. */
    private int key() throws LogReader.LineException {
        expect('"');
        int s = p;
        while (p < end) {
            byte c = b[p];
            if (c == '"') {
                return p++;
            }
            if (c == '\\') {
                return escapedKey(s);
            }
            p++;
        }
        throw malformed("a field name is not closed");
    }

    /** Field names with escapes are taken as unknown fields: no field this reader knows needs one. */
    private int escapedKey(int s) throws LogReader.LineException {
        p = s - 1;
        int save = interned.sigLength;
        string();
        interned.sigLength = save;
        return s; // an empty span: matches no name
    }

    private boolean is(int ks, int ke, byte[] name) {
        // ks is where the quote was: the name starts one after
        return Arrays.equals(b, ks + 1, ke, name, 0, name.length);
    }

    /** A string, unescaped into {@link Interned#sig} as UTF-8. */
    private void string() throws LogReader.LineException {
        expect('"');
        Interned to = interned;
        int run = p;
        while (true) {
            if (p >= end) {
                throw malformed("a string is not closed");
            }
            byte c = b[p];
            if (c == '"') {
                to.put(b, run, p);
                p++;
                return;
            }
            if (c == '\\') {
                to.put(b, run, p);
                p++;
                escape(to);
                run = p;
                continue;
            }
            if (c >= 0 && c < 0x20) {
                throw malformed("a control character (0x" + Integer.toHexString(c) + ") in a string");
            }
            p++;
        }
    }

    private void escape(Interned to) throws LogReader.LineException {
        if (p >= end) {
            throw malformed("a string is not closed");
        }
        byte c = b[p++];
        switch (c) {
            case '"', '\\', '/' -> to.put(c);
            case 'b' -> to.put((byte) '\b');
            case 'f' -> to.put((byte) '\f');
            case 'n' -> to.put((byte) '\n');
            case 'r' -> to.put((byte) '\r');
            case 't' -> to.put((byte) '\t');
            case 'u' -> {
                int cp = hex4();
                if (Character.isHighSurrogate((char) cp)) {
                    if (p + 1 < end && b[p] == '\\' && b[p + 1] == 'u') {
                        p += 2;
                        int low = hex4();
                        if (!Character.isLowSurrogate((char) low)) {
                            throw malformed("a \\u escape of a lone surrogate");
                        }
                        cp = Character.toCodePoint((char) cp, (char) low);
                    } else {
                        throw malformed("a \\u escape of a lone surrogate");
                    }
                } else if (Character.isLowSurrogate((char) cp)) {
                    throw malformed("a \\u escape of a lone surrogate");
                }
                byte[] utf8 = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
                to.put(utf8, 0, utf8.length);
            }
            default -> throw malformed("an unknown escape \\" + (char) c + " in a string");
        }
    }

    private int hex4() throws LogReader.LineException {
        if (p + 4 > end) {
            throw malformed("a \\u escape is cut short");
        }
        int v = 0;
        for (int k = 0; k < 4; k++) {
            int d = Character.digit(b[p++], 16);
            if (d < 0) {
                throw malformed("a \\u escape is not four hex digits");
            }
            v = v * 16 + d;
        }
        return v;
    }

    /** Skips any value. */
    private void skip(int depth) throws LogReader.LineException {
        if (depth > MAX_DEPTH) {
            throw malformed("nested more than " + MAX_DEPTH + " deep");
        }
        int c = peek();
        switch (c) {
            case '"' -> {
                int save = interned.sigLength;
                string();
                interned.sigLength = save;
            }
            case '{', '[' -> {
                p++;
                int close = c == '{' ? '}' : ']';
                if (closes(close)) {
                    return;
                }
                do {
                    if (c == '{') {
                        memberName();
                    }
                    skip(depth + 1);
                } while (another(close));
            }
            case 't' -> literal("true");
            case 'f' -> literal("false");
            case 'n' -> literal("null");
            default -> {
                int s = p;
                while (p < end
                        && ((b[p] >= '0' && b[p] <= '9')
                                || b[p] == '-'
                                || b[p] == '+'
                                || b[p] == '.'
                                || b[p] == 'e'
                                || b[p] == 'E')) {
                    p++;
                }
                if (p == s) {
                    throw expected("a value", c);
                }
            }
        }
    }

    private void literal(String word) throws LogReader.LineException {
        for (int k = 0; k < word.length(); k++) {
            if (p >= end || b[p] != word.charAt(k)) {
                throw malformed("a value is not JSON (expected " + word + ")");
            }
            p++;
        }
    }

    private void ws() {
        while (p < end) {
            byte c = b[p];
            if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
                return;
            }
            p++;
        }
    }

    private int peek() {
        return p < end ? b[p] & 0xFF : -1;
    }

    private int next() {
        return p < end ? b[p++] & 0xFF : -1;
    }

    /**
     * After an object's '{' or an array's '[': whether it closes at once, its {@code close} ('}' or ']') read if so,
     * and the space before it either way.
     */
    private boolean closes(int close) {
        ws();
        if (peek() == close) {
            p++;
            return true;
        }
        return false;
    }

    /**
     * After a member of an object or an element of an array: whether another follows (its ',' read, and the space
     * after it), or the object or array ends ({@code close} read).
     */
    private boolean another(int close) throws LogReader.LineException {
        ws();
        int c = next();
        if (c == ',') {
            ws();
            return true;
        }
        if (c == close) {
            return false;
        }
        throw expected("',' or '" + (char) close + "'", c);
    }

    /** A member's name, the ':' after it and the space around that: the end of the name ({@link #key()}). */
    private int memberName() throws LogReader.LineException {
        int nameEnd = key();
        ws();
        expect(':');
        ws();
        return nameEnd;
    }

    private void expect(char c) throws LogReader.LineException {
        int n = next();
        if (n != c) {
            throw expected("'" + c + "'", n);
        }
    }

    private LogReader.LineException expected(String what, int found) {
        return malformed("not a JSON request: expected " + what + " at byte " + (p - lineStart) + ", found "
                + (found < 0 ? "the end of the line" : "'" + (char) found + "'"));
    }

    private static LogReader.LineException malformed(String message) {
        return new LogReader.LineException(BadLine.Problem.MALFORMED, message);
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
