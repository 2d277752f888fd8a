package dev.sluice.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns a JMH JSON result file of this module ({@code -rf json}) into the Markdown tables of {@code docs/benchmarks.md}:
 * throughput with its error, allocation per decision, the share of allowed decisions and the ratios to Bucket4j.
 *
 * <pre>java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.Report results.json</pre>
 *
 * <p>With {@code --peers} first it prints instead the side-by-side table of {@code run-peers.sh}: per keys, load and
 * thread count, Sluice's token bucket, sliding tail and fixed window against every peer, each Sluice subject as a
 * ratio to the best peer of its cell, and the allocation per decision.
 */
public final class Report {

    private static final String PACKAGE = "dev.sluice.bench.";
    private static final String[] ALGORITHMS = {
        "TOKEN_BUCKET", "LEAKY_BUCKET", "FIXED_WINDOW", "SLIDING_TAIL", "SLIDING_WINDOW_COUNTER", "SLIDING_LOG"
    };

    /** One (subject, keys, load, threads) cell: its score, error and secondary results. */
    private static final class Cell {
        double score = Double.NaN;
        double error = Double.NaN;
        final Map<String, Double> secondary = new HashMap<>();
    }

    private final Map<String, Cell> cells = new HashMap<>();
    private final Map<String, double[]> floor = new LinkedHashMap<>();
    private final Map<String, Cell> timeSource = new HashMap<>();

    private Report() {}

    public static void main(String[] args) throws IOException {
        boolean peers = args.length == 2 && "--peers".equals(args[0]);
        if (args.length != 1 && !peers) {
            throw new IllegalArgumentException("usage: Report [--peers] <jmh-results.json>");
        }
        Report r = new Report();
        r.read(Path.of(args[args.length - 1]));
        System.out.print(peers ? r.renderPeers() : r.render());
    }

    @SuppressWarnings("unchecked")
    private void read(Path file) throws IOException {
        List<Object> runs = (List<Object>) new Json(Files.readString(file, StandardCharsets.UTF_8)).value();
        for (Object o : runs) {
            Map<String, Object> run = (Map<String, Object>) o;
            String name = ((String) run.get("benchmark")).substring(PACKAGE.length());
            Map<String, Object> params = (Map<String, Object>) run.getOrDefault("params", Map.of());
            Map<String, Object> primary = (Map<String, Object>) run.get("primaryMetric");
            if (name.startsWith("Floor.")) {
                floor.put(
                        name.substring("Floor.".length()),
                        new double[] {num(primary.get("score")), num(primary.get("scoreError"))});
                continue;
            }
            Map<String, Object> secondary = (Map<String, Object>) run.getOrDefault("secondaryMetrics", Map.of());
            if (name.startsWith("TimeSourceBench.")) {
                Cell c = timeSource.computeIfAbsent(
                        name.substring("TimeSourceBench.".length()) + "|" + params.get("source") + "|"
                                + params.get("load"),
                        k -> new Cell());
                fill(c, primary, secondary);
                continue;
            }
            String threads = name.substring(name.length() - 2, name.length() - 1);
            String subject = subject(name.substring(0, name.length() - 2), String.valueOf(params.get("algorithm")));
            String key = subject + "|" + params.get("keys") + "|" + params.get("load") + "|" + threads;
            fill(cells.computeIfAbsent(key, k -> new Cell()), primary, secondary);
        }
    }

    @SuppressWarnings("unchecked")
    private static void fill(Cell c, Map<String, Object> primary, Map<String, Object> secondary) {
        c.score = num(primary.get("score"));
        c.error = num(primary.get("scoreError"));
        secondary.forEach((metric, m) -> c.secondary.put(metric, num(((Map<String, Object>) m).get("score"))));
    }

    private static String subject(String method, String algorithm) {
        switch (method) {
            case "SluiceBench.tryAcquire":
                return "Sluice " + algorithm;
            case "Bucket4jBench.tryConsume":
                return "Bucket4j tryConsume";
            case "Bucket4jBench.probe":
                return "Bucket4j tryConsumeAndReturnRemaining";
            case "Resilience4jBench.acquirePermission":
                return "Resilience4j acquirePermission";
            case "GuavaBench.tryAcquire":
                return "Guava tryAcquire";
            default:
                return method;
        }
    }

    private String render() {
        StringBuilder out = new StringBuilder();
        List<String> subjects = new ArrayList<>();
        for (String a : ALGORITHMS) {
            subjects.add("Sluice " + a);
        }
        subjects.add("Bucket4j tryConsume");
        subjects.add("Bucket4j tryConsumeAndReturnRemaining");
        subjects.add("Resilience4j acquirePermission");
        subjects.add("Guava tryAcquire");
        for (String keys : new String[] {"1", "1000000"}) {
            for (String load : new String[] {"ALLOWED", "DENIED"}) {
                StringBuilder rows = new StringBuilder();
                for (String s : subjects) {
                    Cell one = cells.get(s + "|" + keys + "|" + load + "|1");
                    Cell two = cells.get(s + "|" + keys + "|" + load + "|2");
                    if (one == null && two == null) {
                        continue;
                    }
                    Cell b1 = cells.get("Bucket4j tryConsume|" + keys + "|" + load + "|1");
                    Cell b2 = cells.get("Bucket4j tryConsume|" + keys + "|" + load + "|2");
                    rows.append("| ")
                            .append(s)
                            .append(" | ")
                            .append(throughput(one))
                            .append(" | ")
                            .append(alloc(one))
                            .append(" | ")
                            .append(ratio(one, b1))
                            .append(" | ")
                            .append(throughput(two))
                            .append(" | ")
                            .append(alloc(two))
                            .append(" | ")
                            .append(ratio(two, b2))
                            .append(" | ")
                            .append(allowed(one, two))
                            .append(" |\n");
                }
                if (rows.length() > 0) {
                    out.append(String.format(
                            Locale.ROOT, "%n#### %s, %s%n%n", "1".equals(keys) ? "1 key" : "1,000,000 keys", load));
                    out.append(
                            "| subject | 1 thread, ops/s | B/op | × Bucket4j | 2 threads, ops/s | B/op | × Bucket4j | allowed |\n");
                    out.append("|---|--:|--:|--:|--:|--:|--:|--:|\n");
                    out.append(rows);
                }
            }
        }
        if (!timeSource.isEmpty()) {
            out.append(String.format(Locale.ROOT, "%n#### Token bucket by time source (1 key, 1 thread)%n%n"));
            out.append("| time source | load | Sluice ops/s | B/op | Bucket4j ops/s | B/op | Sluice / Bucket4j |\n");
            out.append("|---|---|--:|--:|--:|--:|--:|\n");
            for (String source : new String[] {"SYSTEM_UTC", "MILLIS", "CACHED", "SYNTHETIC"}) {
                for (String load : new String[] {"ALLOWED", "DENIED"}) {
                    Cell sl = timeSource.get("sluiceTryAcquire|" + source + "|" + load);
                    Cell bj = timeSource.get("bucket4jTryConsume|" + source + "|" + load);
                    if (sl == null && bj == null) {
                        continue;
                    }
                    out.append("| ")
                            .append(source)
                            .append(" | ")
                            .append(load)
                            .append(" | ")
                            .append(throughput(sl))
                            .append(" | ")
                            .append(alloc(sl))
                            .append(" | ")
                            .append(throughput(bj))
                            .append(" | ")
                            .append(alloc(bj))
                            .append(" | ")
                            .append(ratio(sl, bj))
                            .append(" |\n");
                }
            }
        }
        if (!floor.isEmpty()) {
            out.append(String.format(Locale.ROOT, "%n#### Floor (one thread)%n%n| step | ns |%n|---|--:|%n"));
            floor.forEach(
                    (name, v) -> out.append(String.format(Locale.ROOT, "| %s | %.1f ± %.1f |%n", name, v[0], v[1])));
        }
        return out.toString();
    }

    private static final String[] SLUICE = {"Sluice TOKEN_BUCKET", "Sluice SLIDING_TAIL", "Sluice FIXED_WINDOW"};
    private static final String[] PEERS = {"Bucket4j tryConsume", "Resilience4j acquirePermission", "Guava tryAcquire"};

    private String renderPeers() {
        StringBuilder out = new StringBuilder();
        out.append("| keys | load | threads | Sluice token bucket | Sluice sliding tail | Sluice fixed window "
                + "| Bucket4j | Resilience4j | Guava | best peer | Sluice ÷ best peer (token, tail, fixed) |\n");
        out.append("|--:|---|--:|--:|--:|--:|--:|--:|--:|---|---|\n");
        for (String keys : new String[] {"1", "1000000"}) {
            for (String load : new String[] {"ALLOWED", "DENIED"}) {
                for (String threads : new String[] {"1", "2", "4"}) {
                    String cell = "|" + keys + "|" + load + "|" + threads;
                    String best = null;
                    double bestScore = 0;
                    for (String p : PEERS) {
                        Cell c = cells.get(p + cell);
                        if (c != null && c.score > bestScore) {
                            bestScore = c.score;
                            best = p.substring(0, p.indexOf(' '));
                        }
                    }
                    out.append(String.format(
                            Locale.ROOT, "| %s | %s | %s |", "1".equals(keys) ? "1" : "1,000,000", load, threads));
                    for (String subject : SLUICE) {
                        out.append(' ')
                                .append(perMicro(cells.get(subject + cell)))
                                .append(" |");
                    }
                    for (String subject : PEERS) {
                        out.append(' ')
                                .append(perMicro(cells.get(subject + cell)))
                                .append(" |");
                    }
                    out.append(' ').append(best == null ? "–" : best).append(" | ");
                    List<String> ratios = new ArrayList<>();
                    for (String subject : SLUICE) {
                        Cell c = cells.get(subject + cell);
                        ratios.add(
                                c == null || best == null
                                        ? "–"
                                        : String.format(Locale.ROOT, "%.2f", c.score / bestScore));
                    }
                    out.append(String.join(", ", ratios)).append(" |\n");
                }
            }
        }
        out.append("\nAllocation per decision (B/op, one thread):\n\n| keys | load |");
        List<String> subjects = new ArrayList<>(List.of(SLUICE));
        subjects.addAll(List.of(PEERS));
        for (String subject : subjects) {
            out.append(' ').append(subject).append(" |");
        }
        out.append("\n|--:|---|").append("--:|".repeat(subjects.size())).append('\n');
        for (String keys : new String[] {"1", "1000000"}) {
            for (String load : new String[] {"ALLOWED", "DENIED"}) {
                out.append(String.format(Locale.ROOT, "| %s | %s |", "1".equals(keys) ? "1" : "1,000,000", load));
                for (String subject : subjects) {
                    out.append(' ')
                            .append(alloc(cells.get(subject + "|" + keys + "|" + load + "|1")))
                            .append(" |");
                }
                out.append('\n');
            }
        }
        return out.toString();
    }

    /** Millions of operations a second (ops/µs), with the error. */
    private static String perMicro(Cell c) {
        if (c == null || Double.isNaN(c.score)) {
            return "–";
        }
        return String.format(Locale.ROOT, "%.1f ± %.1f", c.score / 1e6, c.error / 1e6);
    }

    private static String throughput(Cell c) {
        if (c == null || Double.isNaN(c.score)) {
            return "–";
        }
        return String.format(Locale.ROOT, "%,.0f ± %,.0f", c.score, c.error);
    }

    private static String alloc(Cell c) {
        Double b = c == null ? null : c.secondary.get("gc.alloc.rate.norm");
        return b == null ? "–" : String.format(Locale.ROOT, "%.0f", b);
    }

    private static String ratio(Cell c, Cell bucket4j) {
        if (c == null || bucket4j == null || Double.isNaN(c.score) || Double.isNaN(bucket4j.score)) {
            return "–";
        }
        return String.format(Locale.ROOT, "%.2f", c.score / bucket4j.score);
    }

    private static String allowed(Cell one, Cell two) {
        double a = 0;
        double d = 0;
        for (Cell c : new Cell[] {one, two}) {
            if (c != null) {
                a += c.secondary.getOrDefault("allowed", 0.0);
                d += c.secondary.getOrDefault("denied", 0.0);
            }
        }
        if (a + d == 0) {
            return "–";
        }
        double share = 100 * a / (a + d);
        if (a == 0 || d == 0) {
            return a == 0 ? "0 %" : "100 %";
        }
        if (share < 0.01) {
            return "< 0.01 %";
        }
        return share > 99.99 ? "> 99.99 %" : String.format(Locale.ROOT, "%.2f %%", share);
    }

    private static double num(Object o) {
        if (o instanceof Double) {
            return (Double) o;
        }
        try {
            return Double.parseDouble(String.valueOf(o));
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    /** A minimal reader of the JSON JMH writes: objects, arrays, strings, numbers, booleans and null. */
    private static final class Json {
        private final String text;
        private int pos;

        Json(String text) {
            this.text = text;
        }

        Object value() {
            skipBlanks();
            char ch = text.charAt(pos);
            switch (ch) {
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
                    return literal("null", null);
                default:
                    return number();
            }
        }

        private Map<String, Object> object() {
            Map<String, Object> m = new LinkedHashMap<>();
            pos++;
            skipBlanks();
            if (text.charAt(pos) == '}') {
                pos++;
                return m;
            }
            while (true) {
                skipBlanks();
                String k = string();
                skipBlanks();
                expect(':');
                m.put(k, value());
                skipBlanks();
                if (text.charAt(pos++) == '}') {
                    return m;
                }
            }
        }

        private List<Object> array() {
            List<Object> l = new ArrayList<>();
            pos++;
            skipBlanks();
            if (text.charAt(pos) == ']') {
                pos++;
                return l;
            }
            while (true) {
                l.add(value());
                skipBlanks();
                if (text.charAt(pos++) == ']') {
                    return l;
                }
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char ch = text.charAt(pos++);
                if (ch == '"') {
                    return b.toString();
                }
                if (ch == '\\') {
                    char e = text.charAt(pos++);
                    switch (e) {
                        case 'n':
                            b.append('\n');
                            break;
                        case 't':
                            b.append('\t');
                            break;
                        case 'r':
                            b.append('\r');
                            break;
                        case 'b':
                            b.append('\b');
                            break;
                        case 'f':
                            b.append('\f');
                            break;
                        case 'u':
                            b.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                            pos += 4;
                            break;
                        default:
                            b.append(e);
                    }
                } else {
                    b.append(ch);
                }
            }
        }

        private Object number() {
            int start = pos;
            while (pos < text.length() && "+-0123456789.eE".indexOf(text.charAt(pos)) >= 0) {
                pos++;
            }
            if (start == pos) {
                // JMH writes "NaN" as a string; anything else here is malformed
                throw new IllegalArgumentException("unexpected '" + text.charAt(pos) + "' at " + pos);
            }
            return Double.parseDouble(text.substring(start, pos));
        }

        private Object literal(String word, Object v) {
            if (!text.startsWith(word, pos)) {
                throw new IllegalArgumentException("expected " + word + " at " + pos);
            }
            pos += word.length();
            return v;
        }

        private void expect(char ch) {
            if (text.charAt(pos) != ch) {
                throw new IllegalArgumentException(
                        "expected '" + ch + "' at " + pos + ", found '" + text.charAt(pos) + "'");
            }
            pos++;
        }

        private void skipBlanks() {
            while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
                pos++;
            }
        }
    }
}
