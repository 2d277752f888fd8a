package dev.sluice.server.replay;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * A CSV log: a header naming a {@code time} column, optionally {@code domain} and {@code hits}, and one column per
 * descriptor key in entry order; then one request of one descriptor per line, its entries the non-empty key cells.
 * Fields may be quoted as RFC 4180 quotes them ({@code "a,b"}, {@code "say ""hi"""}).
 */
final class CsvLines implements LogReader.LineParser {
    private final @Nullable String defaultDomain;
    private final String name;
    private final Interned interned = new Interned();

    private boolean headerRead;
    private int columns;
    private int timeColumn = -1;
    private int domainColumn = -1;
    private int hitsColumn = -1;
    /** Per column: its key's bytes, or null for time, domain and hits. */
    private byte[] @Nullable [] keys = new byte[0][];

    /** Per field of the line being read: where it starts and ends, in {@link #src} of the field. */
    private int[] starts = new int[16];

    private int[] ends = new int[16];
    private byte[][] src = new byte[16][];
    /** Unquoted fields. */
    private byte[] unquoted = new byte[256];

    private int unquotedLength;

    CsvLines(@Nullable String defaultDomain, String name) {
        this.defaultDomain = defaultDomain;
        this.name = name;
    }

    @Override
    public @Nullable TimedRequest parse(byte[] b, int start, int end, long line)
            throws LogReader.LineException, IOException {
        if (!headerRead) {
            header(b, start, end, line);
            return null;
        }
        int n = split(b, start, end);
        if (n != columns) {
            throw malformed(n + " fields, but the header names " + columns + " columns");
        }
        long time = Times.parse(src[timeColumn], starts[timeColumn], ends[timeColumn]);
        String domain;
        if (domainColumn >= 0) {
            if (starts[domainColumn] == ends[domainColumn]) {
                throw malformed("rate limit domain must not be empty");
            }
            domain = interned.domain(src[domainColumn], starts[domainColumn], ends[domainColumn]);
        } else {
            domain = defaultDomain == null ? "" : defaultDomain;
        }
        long hits = 1;
        if (hitsColumn >= 0 && starts[hitsColumn] < ends[hitsColumn]) {
            hits = Times.digits(src[hitsColumn], starts[hitsColumn], ends[hitsColumn]);
            if (hits < 1) {
                throw malformed("hits '"
                        + new String(
                                src[hitsColumn],
                                starts[hitsColumn],
                                ends[hitsColumn] - starts[hitsColumn],
                                StandardCharsets.UTF_8)
                        + "' is not a whole number ≥ 1");
            }
        }
        interned.begin();
        byte[] @Nullable [] k = keys;
        for (int c = 0; c < columns; c++) {
            byte[] key = k[c];
            if (key == null || starts[c] == ends[c]) {
                continue;
            }
            int ks = interned.sigLength;
            interned.put(key, 0, key.length);
            int ke = interned.sigLength;
            interned.put((byte) 0xFE);
            int vs = interned.sigLength;
            interned.put(src[c], starts[c], ends[c]);
            int ve = interned.sigLength;
            interned.put((byte) 0xFF);
            interned.entry(ks, ke, vs, ve);
        }
        if (interned.entries == 0) {
            throw malformed("no descriptor key has a value");
        }
        Interned.Slot slot = interned.lookup();
        return new TimedRequest(time, domain, slot.alone, hits, null, slot.aloneIds, line);
    }

    private void header(byte[] b, int start, int end, long line) throws IOException, LogReader.LineException {
        int n = split(b, start, end);
        List<String> names = new ArrayList<>();
        keys = new byte[n][];
        for (int c = 0; c < n; c++) {
            String column = new String(src[c], starts[c], ends[c] - starts[c], StandardCharsets.UTF_8).strip();
            if (column.isEmpty()) {
                throw new IOException(name + ":" + line + ": CSV header: column " + (c + 1) + " has no name");
            }
            if (names.contains(column)) {
                throw new IOException(name + ":" + line + ": CSV header: column '" + column + "' twice");
            }
            names.add(column);
            switch (column.toLowerCase(Locale.ROOT)) {
                case "time" -> timeColumn = c;
                case "domain" -> domainColumn = c;
                case "hits" -> hitsColumn = c;
                default -> keys[c] = column.getBytes(StandardCharsets.UTF_8);
            }
        }
        if (timeColumn < 0) {
            throw new IOException(name + ":" + line + ": CSV header " + names + " has no 'time' column");
        }
        if (domainColumn < 0 && defaultDomain == null) {
            throw new IOException(name + ":" + line + ": CSV header " + names
                    + " has no 'domain' column: name the domain of every line with --domain");
        }
        if (n - (timeColumn >= 0 ? 1 : 0) - (domainColumn >= 0 ? 1 : 0) - (hitsColumn >= 0 ? 1 : 0) == 0) {
            throw new IOException(name + ":" + line + ": CSV header " + names + " names no descriptor key");
        }
        columns = n;
        headerRead = true;
    }

    /** Splits the line into fields ({@link #starts}, {@link #ends}, {@link #src}); answers how many. */
    private int split(byte[] b, int start, int end) throws LogReader.LineException {
        unquotedLength = 0;
        int n = 0;
        int i = start;
        while (true) {
            if (n == starts.length) {
                starts = Arrays.copyOf(starts, 2 * n);
                ends = Arrays.copyOf(ends, 2 * n);
                src = Arrays.copyOf(src, 2 * n);
            }
            if (i < end && b[i] == '"') {
                int s = unquotedLength;
                i++;
                while (true) {
                    if (i >= end) {
                        throw malformed("a quoted field is not closed");
                    }
                    if (b[i] == '"') {
                        if (i + 1 < end && b[i + 1] == '"') {
                            unquote(b[i]);
                            i += 2;
                            continue;
                        }
                        i++;
                        break;
                    }
                    unquote(b[i++]);
                }
                if (i < end && b[i] != ',') {
                    throw malformed("text after a quoted field's closing quote");
                }
                starts[n] = s;
                ends[n] = unquotedLength;
                src[n] = unquoted; // set again below once unquoted stops growing
                n++;
            } else {
                int s = i;
                while (i < end && b[i] != ',') {
                    i++;
                }
                starts[n] = s;
                ends[n] = i;
                src[n] = b;
                n++;
            }
            if (i >= end) {
                break;
            }
            i++; // the comma
        }
        for (int f = 0; f < n; f++) {
            if (src[f] != b) {
                src[f] = unquoted;
            }
        }
        return n;
    }

    private void unquote(byte c) {
        if (unquotedLength == unquoted.length) {
            unquoted = Arrays.copyOf(unquoted, 2 * unquotedLength);
        }
        unquoted[unquotedLength++] = c;
    }

    private static LogReader.LineException malformed(String message) {
        return new LogReader.LineException(BadLine.Problem.MALFORMED, message);
    }
}
