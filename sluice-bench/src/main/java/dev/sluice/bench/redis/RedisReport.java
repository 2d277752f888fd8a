package dev.sluice.bench.redis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns the JMH CSV of the Redis set ({@code -rf csv}) into the table of {@code docs/benchmarks.md}: decisions per
 * second with their error for 1 and 64 callers, on one key and on 100,000 keys, with Sluice's ratio to Bucket4j and
 * to the trivial-EVALSHA ceiling.
 *
 * <pre>java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.redis.RedisReport jmh-redis.csv</pre>
 */
public final class RedisReport {

    private static final String PACKAGE = "dev.sluice.bench.redis.";

    private final Map<String, double[]> cells = new HashMap<>(); // "subject|keys|threads" -> {score, error}

    private RedisReport() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: RedisReport <jmh-results.csv>");
        }
        RedisReport r = new RedisReport();
        r.read(Path.of(args[0]));
        System.out.print(r.render());
    }

    private void read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        List<String> header = fields(lines.get(0));
        int keysColumn = header.indexOf("Param: keys");
        for (String line : lines.subList(1, lines.size())) {
            List<String> f = fields(line);
            String name = f.get(0);
            if (!name.startsWith(PACKAGE) || name.contains(":")) { // secondary results: "...:allowed"
                continue;
            }
            String method = name.substring(PACKAGE.length());
            String threads = method.endsWith("64T") ? "64" : "1";
            String subject = method.substring(0, method.indexOf('.'));
            cells.put(
                    subject + "|" + f.get(keysColumn) + "|" + threads,
                    new double[] {number(f.get(4)), number(f.get(5))});
        }
    }

    private String render() {
        StringBuilder out = new StringBuilder();
        out.append("| callers | keys | Sluice (token bucket), ops/s | Bucket4j Lettuce CAS, ops/s"
                + " | trivial EVALSHA, ops/s | Sluice ÷ Bucket4j | Sluice ÷ trivial |\n");
        out.append("|--:|--:|--:|--:|--:|--:|--:|\n");
        for (String threads : new String[] {"1", "64"}) {
            for (String keys : new String[] {"1", "100000"}) {
                double[] sluice = cells.get("SluiceRedisBench|" + keys + "|" + threads);
                double[] bucket4j = cells.get("Bucket4jRedisBench|" + keys + "|" + threads);
                double[] trivial = cells.get("EvalshaCeilingBench|" + keys + "|" + threads);
                if (sluice == null && bucket4j == null && trivial == null) {
                    continue;
                }
                out.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %s | %s | %s | %s | %s |%n",
                        threads,
                        "1".equals(keys) ? "1" : "100,000",
                        score(sluice),
                        score(bucket4j),
                        score(trivial),
                        ratio(sluice, bucket4j, "×"),
                        ratio(sluice, trivial, "%")));
            }
        }
        return out.toString();
    }

    private static String score(double[] cell) {
        if (cell == null) {
            return "–";
        }
        return String.format(Locale.ROOT, "%,.0f ± %,.0f", cell[0], cell[1]);
    }

    private static String ratio(double[] a, double[] b, String unit) {
        if (a == null || b == null) {
            return "–";
        }
        double r = a[0] / b[0];
        return "%".equals(unit)
                ? String.format(Locale.ROOT, "%.0f %%", 100 * r)
                : String.format(Locale.ROOT, "%.1f ×", r);
    }

    private static double number(String s) {
        return s.isEmpty() || "NaN".equals(s) ? Double.NaN : Double.parseDouble(s);
    }

    /** The fields of one CSV line as JMH writes it: quoted strings, bare numbers, commas between. */
    private static List<String> fields(String line) {
        List<String> fields = new ArrayList<>();
        StringBuilder f = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == '"') {
                quoted = !quoted;
            } else if (c == ',' && !quoted) {
                fields.add(f.toString());
                f.setLength(0);
            } else {
                f.append(c);
            }
        }
        fields.add(f.toString());
        return fields;
    }
}
