package dev.sluice.server.replay;

import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.zip.GZIPInputStream;
import org.jspecify.annotations.Nullable;

/**
 * Reads a request log into {@link TimedRequest}s, in time order: what {@code replay} runs through a policy and
 * {@code simulate} can take its traffic from.
 *
 * <pre>{@code
 * try (LogReader log = LogReader.builder(Path.of("token-requests.jsonl.gz"))
 *         .onBadLine(bad -> System.err.println(bad))
 *         .open()) {
 *     for (TimedRequest r; (r = log.next()) != null; ) {
 *         clock.set(r.timeMillis());
 *         limiter.check(r.domain(), r.descriptors(), r.hitsArray());
 *     }
 * }
 * }</pre>
 *
 * <p>Formats:
 *
 * <ul>
 *   <li>{@link Format#JSON}: one {@code POST /json} request body per line, plus {@code "time"}: epoch milliseconds (a
 *       number or a string of digits) or ISO-8601 with a zone ({@code "2026-11-27T14:00:00.250Z"},
 *       {@code "…+01:00"}). {@code hits_addend} (or {@code hitsAddend}) is read on the request and on each
 *       descriptor, as the service reads it; other fields are ignored.
 *       <pre>{@code {"time":1764252000250,"domain":"oauth-token","descriptors":[{"entries":[{"key":"client_id","value":"abc"}]}]}}</pre>
 *   <li>{@link Format#CSV}: a header line, then one request of one descriptor per line. The header names a
 *       {@code time} column (as above), optionally a {@code domain} column (else every line is of the
 *       {@link Builder#domain(String) default domain}) and a {@code hits} column; every other column is a descriptor
 *       key, in entry order. A line's descriptor is its non-empty key cells, in column order, so that
 *       {@code time,client_id,username} holds client grants ({@code username} empty) and user grants alike. Fields
 *       may be quoted as RFC 4180 quotes them.
 * </ul>
 *
 * <p>The format is {@link Builder#format(Format) given}, or taken from the name ({@code .csv}, {@code .csv.gz}: CSV;
 * anything else JSON). Gzip is recognised by its first bytes, whatever the name. Blank lines are skipped.
 *
 * <p>Time order. Logs gathered from several machines are slightly out of order: lines are held back for the
 * {@link Builder#reorderWindow(Duration) reorder window} (default {@link #DEFAULT_REORDER_WINDOW}) and given out in
 * time order (lines of one time in the order read). A line earlier than one already given out, which the window was
 * too short to reorder, is a bad line ({@link BadLine.Problem#OUT_OF_ORDER}). Memory is the lines of one window, not
 * the log's length.
 *
 * <p>Bad lines (malformed, no time, an {@link Builder#knownDomains unknown domain}, out of order) are never dropped
 * silently: each goes to {@link Builder#onBadLine(Consumer)}, which may throw to stop the reading, and is counted
 * ({@link #badLines()}).
 *
 * <p>Speed: bytes are read in large blocks and each line scanned once in place, without a JSON tree; descriptors seen
 * before are found by their bytes and given out as the same objects. Not thread-safe.
 */
public final class LogReader implements Closeable {

    /** The default {@link Builder#reorderWindow(Duration)}. */
    public static final Duration DEFAULT_REORDER_WINDOW = Duration.ofSeconds(5);

    /** The longest line read; a longer one is a bad line. The service's largest body, and some room for the time. */
    public static final int MAX_LINE_BYTES = (1 << 20) + 1024;

    /** The formats of a log. */
    public enum Format {
        /** JSON lines: a {@code /json} request body and a {@code time} per line. */
        JSON,
        /** A header with a {@code time} column and one column per descriptor key. */
        CSV;

        /** The format a file of this name holds: CSV for {@code .csv} and {@code .csv.gz}, else JSON. */
        public static Format ofName(String name) {
            String n = name.toLowerCase(Locale.ROOT);
            if (n.endsWith(".gz")) {
                n = n.substring(0, n.length() - 3);
            }
            return n.endsWith(".csv") ? CSV : JSON;
        }
    }

    private final InputStream in;
    private final CountingStream counted;
    private final long size;
    private final LineParser parser;
    private final @Nullable Predicate<String> knownDomains;
    private final Consumer<BadLine> onBadLine;
    private final long windowMillis;

    private byte[] buf = new byte[1 << 20];
    private int pos;
    private int limit;
    private boolean eof;
    private long lines;
    private long badLines;

    /** Held lines, sorted by time then line: {@code held[head..tail)}. */
    private TimedRequest[] held = new TimedRequest[1024];

    private int head;
    private int tail;
    private long newest = Long.MIN_VALUE;
    private long givenOut = Long.MIN_VALUE;

    private LogReader(Builder b, InputStream raw, long size) throws IOException {
        this.counted = new CountingStream(raw);
        this.size = size;
        BufferedInputStream buffered = new BufferedInputStream(counted, 1 << 16);
        buffered.mark(2);
        int b0 = buffered.read();
        int b1 = buffered.read();
        buffered.reset();
        this.in = b0 == 0x1f && b1 == 0x8b ? new GZIPInputStream(buffered, 1 << 16) : buffered;
        Format format = b.format != null ? b.format : Format.ofName(b.name);
        this.parser = format == Format.CSV ? new CsvLines(b.domain, b.name) : new JsonLines();
        this.knownDomains = b.knownDomains;
        this.onBadLine = b.onBadLine;
        this.windowMillis = b.reorderWindow.toMillis();
    }

    /** A reader of the log in {@code path}; its name chooses the format unless {@link Builder#format} does. */
    public static Builder builder(Path path) {
        return new Builder(Objects.requireNonNull(path, "path must not be null"), null, path.toString());
    }

    /**
     * A reader of the log {@code in} (standard input, say), called {@code name} in messages and to choose its format.
     * The reader closes it.
     */
    public static Builder builder(InputStream in, String name) {
        return new Builder(null, Objects.requireNonNull(in, "in must not be null"), name);
    }

    /**
     * The next request in time order, or null at the end of the log.
     *
     * @throws IOException if reading fails, or a CSV log's header is not one (no {@code time} column, no domain)
     */
    public @Nullable TimedRequest next() throws IOException {
        while (true) {
            if (head < tail && (eof || held[head].timeMillis() <= newest - windowMillis)) {
                TimedRequest r = held[head++]; // its slot is overwritten later: what is held is one window
                givenOut = r.timeMillis();
                return r;
            }
            if (eof) {
                return null;
            }
            readOne();
        }
    }

    /** Reads one line, holding it if it is a request; sets {@link #eof} at the end. */
    private void readOne() throws IOException {
        int start = pos;
        int scan = pos;
        long dropped = 0; // bytes of an overlong line already let go
        int end;
        while (true) {
            int nl = -1;
            for (int i = scan; i < limit; i++) {
                if (buf[i] == '\n') {
                    nl = i;
                    break;
                }
            }
            if (nl >= 0) {
                end = nl;
                pos = nl + 1;
                break;
            }
            int kept = limit - start;
            if (kept > MAX_LINE_BYTES) { // keep its beginning, for the report, and let the rest go
                dropped += kept - BadLine.MAX_TEXT;
                kept = BadLine.MAX_TEXT;
            }
            if (start > 0 || kept < limit - start) {
                System.arraycopy(buf, start, buf, 0, kept);
            } else if (kept == buf.length) {
                buf = Arrays.copyOf(buf, buf.length * 2);
            }
            start = 0;
            scan = kept;
            limit = kept;
            int n = in.read(buf, limit, buf.length - limit);
            if (n < 0) {
                eof = true;
                pos = limit;
                if (kept == 0 && dropped == 0) {
                    return;
                }
                end = kept;
                break;
            }
            limit += n;
        }
        lines++;
        if (end > start && buf[end - 1] == '\r') {
            end--;
        }
        if (dropped > 0 || end - start > MAX_LINE_BYTES) {
            bad(new BadLine(
                    lines,
                    BadLine.Problem.MALFORMED,
                    "the line is " + (dropped + end - start) + " bytes long, over " + MAX_LINE_BYTES,
                    text(start, end)));
            return;
        }
        if (blank(start, end)) {
            return;
        }
        TimedRequest r;
        try {
            r = parser.parse(buf, start, end, lines);
        } catch (LineException e) {
            bad(new BadLine(lines, e.problem, String.valueOf(e.getMessage()), text(start, end)));
            return;
        }
        if (r == null) {
            return; // the header of a CSV log
        }
        Predicate<String> known = knownDomains;
        if (known != null && !known.test(r.domain())) {
            bad(new BadLine(
                    lines,
                    BadLine.Problem.UNKNOWN_DOMAIN,
                    "the configuration defines no domain '" + r.domain() + "'",
                    text(start, end)));
            return;
        }
        long t = r.timeMillis();
        if (t < givenOut) {
            bad(new BadLine(
                    lines,
                    BadLine.Problem.OUT_OF_ORDER,
                    "time " + t + " is " + (givenOut - t) + " ms before a request already given out (reorder window "
                            + windowMillis + " ms)",
                    text(start, end)));
            return;
        }
        hold(r);
        newest = Math.max(newest, t);
    }

    /** Puts {@code r} among the held lines, after those of its time or earlier. */
    private void hold(TimedRequest r) {
        if (tail == held.length) {
            if (head < held.length / 2) {
                held = Arrays.copyOf(held, held.length * 2);
            }
            System.arraycopy(held, head, held, 0, tail - head);
            tail -= head;
            head = 0;
        }
        long t = r.timeMillis();
        if (tail == head || held[tail - 1].timeMillis() <= t) {
            held[tail++] = r;
            return;
        }
        int lo = head;
        int hi = tail - 1; // the first held line later than t: one is, the last
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (held[mid].timeMillis() <= t) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        System.arraycopy(held, lo, held, lo + 1, tail - lo);
        held[lo] = r;
        tail++;
    }

    private boolean blank(int start, int end) {
        for (int i = start; i < end; i++) {
            byte c = buf[i];
            if (c != ' ' && c != '\t' && c != '\r') {
                return false;
            }
        }
        return true;
    }

    private String text(int start, int end) {
        int n = Math.min(end - start, BadLine.MAX_TEXT * 4);
        String s = new String(buf, start, n, StandardCharsets.UTF_8);
        return s.length() > BadLine.MAX_TEXT || n < end - start
                ? s.substring(0, Math.min(s.length(), BadLine.MAX_TEXT)) + "…"
                : s;
    }

    private void bad(BadLine line) {
        badLines++;
        onBadLine.accept(line);
    }

    /** Lines read so far, blank and bad ones included (the header of a CSV log too). */
    public long linesRead() {
        return lines;
    }

    /** Lines that were not requests ({@link Builder#onBadLine}). */
    public long badLines() {
        return badLines;
    }

    /** Bytes read so far from the file or stream, before decompression: compare with {@link #size()}. */
    public long bytesRead() {
        return counted.count;
    }

    /** The file's size in bytes, or -1 for a stream. */
    public long size() {
        return size;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    /** Builds a {@link LogReader}. */
    public static final class Builder {
        private final @Nullable Path path;
        private final @Nullable InputStream stream;
        private final String name;
        private @Nullable Format format;
        private @Nullable String domain;
        private @Nullable Predicate<String> knownDomains;
        private Consumer<BadLine> onBadLine = bad -> {};
        private Duration reorderWindow = DEFAULT_REORDER_WINDOW;

        private Builder(@Nullable Path path, @Nullable InputStream stream, String name) {
            this.path = path;
            this.stream = stream;
            this.name = Objects.requireNonNull(name, "name must not be null");
        }

        /** The format, whatever the name says. */
        public Builder format(Format format) {
            this.format = Objects.requireNonNull(format, "format must not be null");
            return this;
        }

        /** The domain of the lines of a CSV log without a {@code domain} column. */
        public Builder domain(@Nullable String domain) {
            if (domain != null && domain.isEmpty()) {
                throw new IllegalArgumentException("domain must not be empty");
            }
            this.domain = domain;
            return this;
        }

        /** The domains a line may name; a line of another is a bad line. Default: any. */
        public Builder knownDomains(Predicate<String> known) {
            this.knownDomains = Objects.requireNonNull(known, "known must not be null");
            return this;
        }

        /** Where bad lines go, in the order read; it may throw to stop the reading. Default: nowhere (still counted). */
        public Builder onBadLine(Consumer<BadLine> onBadLine) {
            this.onBadLine = Objects.requireNonNull(onBadLine, "onBadLine must not be null");
            return this;
        }

        /**
         * How far out of time order a line may be and still be given out in order; default
         * {@link #DEFAULT_REORDER_WINDOW}. Zero: the log must be in order (equal times are).
         *
         * @throws IllegalArgumentException if negative
         */
        public Builder reorderWindow(Duration window) {
            Objects.requireNonNull(window, "window must not be null");
            if (window.isNegative()) {
                throw new IllegalArgumentException("reorder window must be >= 0, was " + window);
            }
            this.reorderWindow = window;
            return this;
        }

        /**
         * Opens the log.
         *
         * @throws IOException if the file cannot be opened
         */
        public LogReader open() throws IOException {
            Path p = path;
            if (p != null) {
                InputStream raw = Files.newInputStream(p);
                try {
                    return new LogReader(this, raw, Files.size(p));
                } catch (IOException | RuntimeException e) {
                    raw.close();
                    throw e;
                }
            }
            return new LogReader(this, Objects.requireNonNull(stream, "a stream when no path"), -1);
        }
    }

    /** Turns one line into a request; null for a line that is not one but is no problem (a CSV header). */
    interface LineParser {
        @Nullable
        TimedRequest parse(byte[] b, int start, int end, long line) throws LineException, IOException;
    }

    /** A line that is not a request. Without a stack trace: it is an answer, not a defect. */
    static final class LineException extends Exception {
        private static final long serialVersionUID = 1L;
        final BadLine.Problem problem;

        LineException(BadLine.Problem problem, String message) {
            super(message, null, false, false);
            this.problem = problem;
        }
    }

    /** Counts the bytes read through it. */
    private static final class CountingStream extends FilterInputStream {
        long count;

        CountingStream(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                count++;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                count += n;
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long s = super.skip(n);
            count += s;
            return s;
        }
    }
}
