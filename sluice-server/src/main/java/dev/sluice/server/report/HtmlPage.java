package dev.sluice.server.report;

import java.util.List;
import java.util.Locale;
import java.util.function.IntFunction;

/**
 * What the report pages of {@code replay} and {@code simulate} share: one self-contained page (inline SVG drawn here,
 * no script, nothing fetched), its style, and the line chart of counts per window against a limit.
 */
public final class HtmlPage {
    /** The chart's width and height (without its legend), in pixels. */
    public static final int W = 860;

    public static final int H = 260;
    public static final int LEFT = 70;
    public static final int RIGHT = 20;
    public static final int TOP = 20;
    public static final int BOTTOM = 40;
    private static final String[] COLORS = {"#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

    private HtmlPage() {}

    /** A line of a chart: its legend and its value at each point (the array is the caller's, not copied). */
    public static final class Line {
        private final String label;
        private final long[] points;

        public Line(String label, long[] points) {
            this.label = label;
            this.points = points;
        }

        String label() {
            return label;
        }

        long[] points() {
            return points;
        }
    }

    /** The page's head, its style and the opening of its body. */
    public static StringBuilder start(String title) {
        StringBuilder b = new StringBuilder(1 << 16);
        b.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>")
                .append(esc(title))
                .append("</title>\n<style>\n")
                .append("body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:920px}\n")
                .append(
                        "h1{font-size:20px}h2{font-size:17px;margin-top:32px;border-top:1px solid #ddd;padding-top:12px}")
                .append("h3{font-size:14px;margin:16px 0 4px}\n")
                .append("table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right}td:first-child,")
                .append("th:first-child{text-align:left}th{border-bottom:1px solid #999}\n")
                .append("svg{background:#fafafa;border:1px solid #e4e4e4}.axis{font-size:11px;fill:#555}\n")
                .append(".legend{font-size:12px}\n</style></head><body>\n");
        return b;
    }

    /**
     * A chart of {@code lines} (all of one length, at least one point) against a dashed {@code limit}, with a legend
     * line each; five ticks on the x axis, labelled {@code xLabel(point)}.
     */
    public static void lineChart(
            StringBuilder b, String cssClass, List<Line> lines, long limit, IntFunction<String> xLabel) {
        int points = lines.get(0).points().length;
        long max = limit;
        for (Line l : lines) {
            for (long p : l.points()) {
                max = Math.max(max, p);
            }
        }
        max = niceCeiling(max + max / 10);
        int extra = 18 * lines.size();
        b.append("<svg class=\"")
                .append(cssClass)
                .append("\" width=\"")
                .append(W)
                .append("\" height=\"")
                .append(H + extra)
                .append("\" viewBox=\"0 0 ")
                .append(W)
                .append(' ')
                .append(H + extra)
                .append("\" xmlns=\"http://www.w3.org/2000/svg\">\n");
        yAxis(b, max);
        double pw = (double) (W - LEFT - RIGHT) / Math.max(1, points - 1);
        for (int k = 0; k <= 4; k++) {
            int p = (int) Math.round((points - 1) * k / 4.0);
            b.append(String.format(
                    Locale.ROOT,
                    "<text class=\"axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s</text>%n",
                    LEFT + p * pw,
                    H - BOTTOM + 16,
                    k == 0 ? "start" : k == 4 ? "end" : "middle",
                    esc(xLabel.apply(p))));
        }
        for (int i = 0; i < lines.size(); i++) {
            Line l = lines.get(i);
            StringBuilder pts = new StringBuilder();
            for (int p = 0; p < points; p++) {
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", LEFT + p * pw, y(l.points()[p], max)));
            }
            b.append("<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"")
                    .append(COLORS[i % COLORS.length])
                    .append("\" points=\"")
                    .append(pts)
                    .append("\"/>\n");
            b.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"4\" fill=\"%s\"/><text class=\"legend\" x=\"%d\""
                            + " y=\"%d\">%s</text>%n",
                    LEFT,
                    H + 18 * i,
                    COLORS[i % COLORS.length],
                    LEFT + 18,
                    H + 18 * i + 6,
                    esc(l.label())));
        }
        double ly = y(limit, max);
        b.append(String.format(
                Locale.ROOT,
                "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" stroke-dasharray=\"6 4\""
                        + " stroke-width=\"1.5\"/><text class=\"axis\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\""
                        + " fill=\"#d62728\">limit %,d</text>%n",
                LEFT,
                W - RIGHT,
                ly,
                ly,
                W - RIGHT,
                ly - 4,
                limit));
        b.append("</svg>\n");
    }

    /** Five grid lines from 0 to {@code max}, labelled. */
    public static void yAxis(StringBuilder b, long max) {
        for (int k = 0; k <= 4; k++) {
            long v = max * k / 4;
            double y = y(v, max);
            b.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/><text class=\"axis\" x=\"%d\""
                            + " y=\"%.1f\" text-anchor=\"end\">%,d</text>%n",
                    LEFT,
                    W - RIGHT,
                    y,
                    y,
                    LEFT - 6,
                    y + 4,
                    v));
        }
    }

    /** The height of {@code v} on a chart whose axis goes up to {@code max}. */
    public static double y(long v, long max) {
        return TOP + (H - TOP - BOTTOM) * (1 - (double) v / Math.max(1, max));
    }

    /** The smallest of 1, 2, 5 × 10^k at or above {@code v}. */
    public static long niceCeiling(long v) {
        long m = 1;
        while (true) {
            for (long f : new long[] {1, 2, 5}) {
                if (f * m >= v) {
                    return f * m;
                }
            }
            m *= 10;
        }
    }

    /** {@code s} as HTML text or an attribute's value. */
    public static String esc(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> b.append(c);
            }
        }
        return b.toString();
    }
}
