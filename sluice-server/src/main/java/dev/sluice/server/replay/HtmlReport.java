package dev.sluice.server.replay;

import dev.sluice.policy.Limit;
import dev.sluice.policy.Rule;
import dev.sluice.server.report.HtmlPage;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * {@code replay --report FILE.html}: one self-contained page (inline SVG drawn here, no script, nothing fetched) with,
 * per rule, the busiest keys' hits per window over the log's time against the limit, the keys refused most, and the
 * sweep as a curve. Each time chart has at most {@value #POINTS} points: when the log spans more windows, a point is
 * the busiest window of its span, so a peak is never averaged away.
 */
final class HtmlReport {
    static final int POINTS = 600;
    static final int KEYS_CHARTED = 5;
    private static final int W = HtmlPage.W;
    private static final int H = HtmlPage.H;
    private static final int LEFT = HtmlPage.LEFT;
    private static final int RIGHT = HtmlPage.RIGHT;
    private static final int BOTTOM = HtmlPage.BOTTOM;

    private HtmlReport() {}

    /** One charted key: its row and its points. */
    private static final class Series {
        final Row row;
        final long[] points;
        long window = Long.MIN_VALUE;
        long hits;

        Series(Row row, int n) {
            this.row = row;
            this.points = new long[n];
        }
    }

    static void write(Replayed r, Replay.Settings s, @Nullable Sweep sweep, Path file) throws IOException {
        Map<Rule, List<Row>> byRule = new LinkedHashMap<>();
        for (Row row : CsvRows.sorted(r)) {
            byRule.computeIfAbsent(row.rule, k -> new ArrayList<>()).add(row);
        }
        Map<Row, Series> charted = new HashMap<>(); // a row is equal to itself only
        Map<Rule, List<Series>> seriesByRule = new LinkedHashMap<>();
        Map<Rule, long[]> geometry = new HashMap<>(); // window ms, windows per point, points
        for (Map.Entry<Rule, List<Row>> e : byRule.entrySet()) {
            Limit l = firstLimited(e.getKey());
            if (l == null) {
                continue;
            }
            long w = Math.max(1, java.util.Objects.requireNonNull(l.window()).toMillis());
            long first = Math.floorDiv(r.firstTime, w);
            long windows = Math.floorDiv(r.lastTime, w) - first + 1;
            long perPoint = Math.max(1, (windows + POINTS - 1) / POINTS);
            int points = (int) ((windows + perPoint - 1) / perPoint);
            geometry.put(e.getKey(), new long[] {w, perPoint, points, first});
            List<Row> busiest = new ArrayList<>(e.getValue());
            busiest.sort(Comparator.comparingLong((Row x) -> x.hits).reversed());
            List<Series> list = new ArrayList<>();
            for (Row row : busiest.subList(0, Math.min(KEYS_CHARTED, busiest.size()))) {
                Series series = new Series(row, points);
                charted.put(row, series);
                list.add(series);
            }
            seriesByRule.put(e.getKey(), list);
        }
        if (!charted.isEmpty()) {
            r.readSpill((row, time, hits) -> {
                Series series = charted.get(row);
                if (series == null) {
                    return;
                }
                long[] g = java.util.Objects.requireNonNull(geometry.get(series.row.rule), "charted rules have one");
                long window = Math.floorDiv(time, g[0]);
                if (window != series.window) {
                    series.window = window;
                    series.hits = 0;
                }
                series.hits += hits;
                int point = (int) ((window - g[3]) / g[1]);
                if (series.hits > series.points[point]) {
                    series.points[point] = series.hits;
                }
            });
        }

        StringBuilder b = HtmlPage.start("Sluice replay: " + s.log());
        b.append("<h1>Replay of ")
                .append(HtmlPage.esc(s.log()))
                .append(" through ")
                .append(HtmlPage.esc(s.config().toString()));
        b.append("</h1>\n<p>");
        b.append(String.format(
                Locale.ROOT,
                "%,d requests from %s to %s: %,d allowed, %,d denied (%s), %,d would have been denied by a dry run,"
                        + " %,d shadow-banned. %,d bad lines.",
                r.requests,
                r.requests == 0 ? "-" : Instant.ofEpochMilli(r.firstTime),
                r.requests == 0 ? "-" : Instant.ofEpochMilli(r.lastTime),
                r.allowedRequests,
                r.deniedRequests,
                Summary.percent(r.deniedRequests, r.requests),
                r.wouldDenyRequests,
                r.shadowBannedRequests,
                r.badLines()));
        b.append("</p>\n");
        for (Map.Entry<Rule, List<Row>> e : byRule.entrySet()) {
            Rule rule = e.getKey();
            List<Row> rows = e.getValue();
            String refusal = Summary.refusal(rule.mode());
            b.append("<h2 id=\"")
                    .append(HtmlPage.esc(rows.get(0).domain + "." + rule.path()))
                    .append("\">")
                    .append(HtmlPage.esc(rows.get(0).domain))
                    .append(' ')
                    .append(HtmlPage.esc(rule.path()))
                    .append(": ")
                    .append(HtmlPage.esc(Summary.limits(rule)))
                    .append(", ")
                    .append(rule.mode().configName())
                    .append("</h2>\n");
            List<Series> series = seriesByRule.get(rule);
            long[] g = geometry.get(rule);
            Limit l = firstLimited(rule);
            if (series != null && g != null && l != null) {
                b.append("<h3>Hits per ")
                        .append(HtmlPage.esc(Summary.per(1, l).substring(2)))
                        .append(" of the busiest keys against the limit")
                        .append(g[1] > 1 ? " (each point the busiest of " + g[1] + " windows)" : "")
                        .append("</h3>\n");
                timeChart(b, series, l.requestsPerUnit(), g);
            }
            List<Row> refused = new ArrayList<>();
            for (Row row : rows) {
                if (row.refused() > 0) {
                    refused.add(row);
                }
            }
            refused.sort(Comparator.comparingLong(Row::refused).reversed());
            refused = refused.subList(0, Math.min(s.top(), refused.size()));
            if (refused.isEmpty()) {
                b.append("<p>No key was refused.</p>\n");
            } else {
                b.append("<h3>Requests ").append(refusal).append(" per key</h3>\n");
                bars(b, refused);
                b.append("<table><tr><th>key</th><th>requests</th><th>allowed</th><th>")
                        .append(refusal)
                        .append("</th><th>peak per window</th><th>needed to pass all</th></tr>\n");
                for (Row row : refused) {
                    b.append(String.format(
                            Locale.ROOT,
                            "<tr><td>%s</td><td>%,d</td><td>%,d</td><td>%,d</td><td>%s</td><td>%s</td></tr>%n",
                            HtmlPage.esc(row.key()),
                            row.requests,
                            row.allowed,
                            row.refused(),
                            HtmlPage.esc(Summary.peaks(row)),
                            HtmlPage.esc(Summary.needed(row))));
                }
                b.append("</table>\n");
            }
        }
        if (sweep != null) {
            b.append("<h2 id=\"sweep\">Sweep of ")
                    .append(HtmlPage.esc(sweep.domain + " " + sweep.rule.path()))
                    .append(" (now ")
                    .append(HtmlPage.esc(sweep.limit.toString()))
                    .append(")</h2>\n<p>Each key's requests alone under the candidate limit.</p>\n");
            sweepChart(b, sweep);
            b.append("<table><tr><th>limit</th><th>keys refused</th><th>requests refused</th></tr>\n");
            for (int c = 0; c < sweep.candidates.length; c++) {
                b.append(String.format(
                        Locale.ROOT,
                        "<tr><td>%s</td><td>%,d</td><td>%,d</td></tr>%n",
                        HtmlPage.esc(Summary.per(sweep.candidates[c], sweep.limit)),
                        sweep.keysRefused[c],
                        sweep.requestsRefused[c]));
            }
            b.append("</table>\n");
        }
        b.append("</body></html>\n");
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.append(b);
        }
    }

    private static @Nullable Limit firstLimited(Rule rule) {
        for (Limit l : rule.limits()) {
            if (!l.unlimited() && l.window() != null) {
                return l;
            }
        }
        return null;
    }

    private static void timeChart(StringBuilder b, List<Series> series, long limit, long[] g) {
        List<HtmlPage.Line> lines = new ArrayList<>();
        for (Series s : series) {
            lines.add(new HtmlPage.Line(
                    String.format(
                            Locale.ROOT, "%s: %,d requests, %,d refused", s.row.key(), s.row.requests, s.row.refused()),
                    s.points));
        }
        HtmlPage.lineChart(b, "time", lines, limit, p -> Instant.ofEpochMilli((g[3] + (long) p * g[1]) * g[0])
                .toString()
                .substring(11, 19));
    }

    private static void bars(StringBuilder b, List<Row> rows) {
        long max = 1;
        for (Row r : rows) {
            max = Math.max(max, r.refused());
        }
        int row = 20;
        int label = 260;
        int h = row * rows.size() + 10;
        b.append("<svg class=\"bars\" width=\"")
                .append(W)
                .append("\" height=\"")
                .append(h)
                .append("\" xmlns=\"http://www.w3.org/2000/svg\">\n");
        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            double w = (W - label - 90) * (double) r.refused() / max;
            String key = r.key();
            if (key.length() > 40) {
                key = key.substring(0, 39) + "…";
            }
            b.append(String.format(
                    Locale.ROOT,
                    "<text class=\"legend\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text><rect x=\"%d\" y=\"%d\""
                            + " width=\"%.1f\" height=\"14\" fill=\"#d62728\"/><text class=\"axis\" x=\"%.1f\""
                            + " y=\"%d\">%,d</text>%n",
                    label - 8,
                    10 + row * i + 11,
                    HtmlPage.esc(key),
                    label,
                    10 + row * i,
                    w,
                    label + w + 6,
                    10 + row * i + 11,
                    r.refused()));
        }
        b.append("</svg>\n");
    }

    private static void sweepChart(StringBuilder b, Sweep s) {
        int n = s.candidates.length;
        long maxKeys = 1;
        long maxLimit = 1;
        long minLimit = Long.MAX_VALUE;
        for (int c = 0; c < n; c++) {
            maxKeys = Math.max(maxKeys, s.keysRefused[c]);
            maxLimit = Math.max(maxLimit, s.candidates[c]);
            minLimit = Math.min(minLimit, s.candidates[c]);
        }
        long top = HtmlPage.niceCeiling(maxKeys + maxKeys / 10);
        b.append("<svg class=\"sweep\" width=\"")
                .append(W)
                .append("\" height=\"")
                .append(H)
                .append("\" xmlns=\"http://www.w3.org/2000/svg\">\n");
        HtmlPage.yAxis(b, top);
        long lo = minLimit == maxLimit ? 0 : minLimit;
        StringBuilder pts = new StringBuilder();
        Integer[] order = new Integer[n];
        for (int c = 0; c < n; c++) {
            order[c] = c;
        }
        java.util.Arrays.sort(order, Comparator.comparingLong(c -> s.candidates[c]));
        for (int c : order) {
            double x = LEFT + (W - LEFT - RIGHT) * (double) (s.candidates[c] - lo) / Math.max(1, maxLimit - lo);
            double y = HtmlPage.y(s.keysRefused[c], top);
            pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
            b.append(String.format(
                    Locale.ROOT,
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#1f77b4\"/><text class=\"axis\" x=\"%.1f\""
                            + " y=\"%d\" text-anchor=\"middle\">%d</text>%n",
                    x,
                    y,
                    x,
                    H - BOTTOM + 16,
                    s.candidates[c]));
        }
        b.append("<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"")
                .append(pts)
                .append("\"/>\n");
        b.append(String.format(
                Locale.ROOT,
                "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">candidate limit per %s; keys refused"
                        + " at least once</text>%n",
                (W + LEFT) / 2,
                H - 6,
                HtmlPage.esc(Summary.per(1, s.limit).substring(2))));
        b.append("</svg>\n");
    }
}
