package dev.sluice.server.simulate;

import dev.sluice.server.report.HtmlPage;
import dev.sluice.server.simulate.Simulation.Mode;
import dev.sluice.server.simulate.Simulation.Result;
import dev.sluice.server.simulate.Simulation.Setup;
import dev.sluice.server.simulate.Simulation.Traffic;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.IntFunction;

/** What {@code simulate} prints and draws from its results: Markdown tables, CSV rows, a PNG chart, an HTML page. */
final class SimulationReport {

    private SimulationReport() {}

    /** One run, window by window, then its totals. */
    static void windows(Result r, PrintStream out) {
        Setup s = r.setup();
        out.println(s);
        out.println();
        out.println("| from (s) | offered | admitted | of the limit | peak of M | over the limit |"
                + " store calls per instance per interval |");
        out.println("|---:|---:|---:|---:|---:|---:|---:|");
        for (int w = 0; w < r.windows(); w++) {
            out.printf(
                    Locale.ROOT,
                    "| %s | %d | %d | %s | %d | %d | %.2f |%n",
                    seconds(w * s.window().toNanos()),
                    r.offered(w),
                    r.admitted(w),
                    SimulateCommand.percent(r.share(w)),
                    r.peak(w),
                    r.overshoot(w),
                    r.callsPerInstancePerInterval(w));
        }
        out.println();
        out.printf(
                Locale.ROOT,
                "admitted %d of %d offered: %.1f a window on average (%s of the limit), at most %d in one window,"
                        + " at least %d%n",
                r.totalAdmitted(),
                r.totalOffered(),
                r.meanPerWindow(),
                SimulateCommand.percent(r.share()),
                r.maxPerWindow(),
                r.minPerWindow());
        out.printf(
                Locale.ROOT,
                "peak of M %d against a limit of %d: %d over (%s)%s%n",
                r.peakMeasure(),
                s.limit(),
                r.worstOvershoot(),
                SimulateCommand.percent((double) r.worstOvershoot() / s.limit()),
                s.mode() == Mode.SYNCHRONIZED && s.traffic() != Traffic.INSTANCE_DIES && s.traffic() != Traffic.LOG
                        ? "; synchronized mode's bound on M: " + s.bound()
                        : "");
        out.printf(
                Locale.ROOT,
                "store calls per instance per interval %.2f (%d calls, %d rounds); write conflicts %d;"
                        + " Jain's fairness index of what each instance admitted %.2f%n",
                r.callsPerInstancePerInterval(),
                r.storeCalls(),
                r.rounds(),
                r.conflicts(),
                r.fairness());
    }

    /** Several runs, one row each. */
    static void table(List<Result> results, PrintStream out) {
        Setup first = results.get(0).setup();
        out.printf(
                Locale.ROOT,
                "windows of %s, %d %s, %s, seed %d; M = the algorithm's measure of what was admitted on a key;"
                        + " calls = counter store calls per instance per interval; fairness = Jain's index of what each"
                        + " instance admitted%n",
                Names.of(first.window()),
                first.keys(),
                first.keys() == 1 ? "key" : "keys",
                Names.of(first.duration()),
                first.seed());
        out.println();
        out.println("| " + String.join(" | ", COLUMNS) + " |");
        out.println("|---|---:|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (Result r : results) {
            out.println("| " + String.join(" | ", cells(r)) + " |");
        }
    }

    static final String CSV_HEADER = "mode,instances,interval_ms,algorithm,limit,window_ms,traffic,rate,keys,seed,"
            + "from_ms,offered,admitted,share,peak,over,calls_per_instance_per_interval";

    /** A header, then a row per window of every run. */
    static void csv(List<Result> results, PrintStream out) {
        out.println(CSV_HEADER);
        for (Result r : results) {
            Setup s = r.setup();
            for (int w = 0; w < r.windows(); w++) {
                out.printf(
                        Locale.ROOT,
                        "%s,%d,%d,%s,%d,%d,%s,%d,%d,%d,%d,%d,%d,%.4f,%d,%d,%.4f%n",
                        Names.of(s.mode()),
                        s.instances(),
                        s.interval().toMillis(),
                        Names.of(s.algorithm()),
                        s.limit(),
                        s.window().toMillis(),
                        Names.of(s.traffic()),
                        s.rate(),
                        s.keys(),
                        s.seed(),
                        w * s.window().toMillis(),
                        r.offered(w),
                        r.admitted(w),
                        r.share(w),
                        r.peak(w),
                        r.overshoot(w),
                        r.callsPerInstancePerInterval(w));
            }
        }
    }

    /**
     * A panel per algorithm and limit, a line per run; each labelled with what sets it apart from the others.
     *
     * @throws IllegalArgumentException if a panel would have more than {@link SimulationChart#MAX_SERIES} runs
     */
    static void chart(List<Result> results, File file) throws IOException {
        List<SimulationChart.Panel> panels = new ArrayList<>();
        for (Map.Entry<String, List<Result>> e : byPanel(results).entrySet()) {
            List<SimulationChart.Series> series = new ArrayList<>();
            long top = 0;
            long limit = e.getValue().get(0).setup().limit()
                    * e.getValue().get(0).setup().keys();
            for (Result r : e.getValue()) {
                series.add(new SimulationChart.Series(label(r, results), r.admitted()));
                top = Math.max(top, r.maxPerWindow());
            }
            top = Math.max(top, limit) * 11 / 10 + 1;
            int step = niceStep(top);
            int yMax = (int) Math.min(Integer.MAX_VALUE, (top + step - 1) / step * step);
            panels.add(new SimulationChart.Panel(e.getKey(), series, yMax, step, limit));
        }
        Setup first = results.get(0).setup();
        SimulationChart.write(
                file,
                "Admitted per window against the limit (" + first.keys() + (first.keys() == 1 ? " key" : " keys")
                        + ", seed " + first.seed() + ")",
                Names.of(first.window()),
                panels);
    }

    /** The runs by panel: one per algorithm, limit and window, in the order of the runs. */
    private static Map<String, List<Result>> byPanel(List<Result> results) {
        Map<String, List<Result>> byPanel = new LinkedHashMap<>();
        for (Result r : results) {
            byPanel.computeIfAbsent(
                            Names.of(r.setup().algorithm()) + ", " + r.setup().limit() + " per "
                                    + Names.of(r.setup().window()),
                            k -> new ArrayList<>())
                    .add(r);
        }
        return byPanel;
    }

    private static final List<Function<Setup, String>> LABELS = List.of(
            s -> Names.of(s.mode()),
            s -> s.instances() + " instances",
            s -> "every " + Names.of(s.interval()),
            s -> Names.of(s.traffic()),
            s -> s.rate() + "/s");

    /** A run's legend: what sets it apart from the other runs ({@code leased, 10 instances}). */
    private static String label(Result r, List<Result> results) {
        StringBuilder label = new StringBuilder();
        for (Function<Setup, String> l : LABELS) {
            if (results.stream().map(x -> l.apply(x.setup())).distinct().count() > 1) {
                label.append(label.length() == 0 ? "" : ", ").append(l.apply(r.setup()));
            }
        }
        return label.length() == 0 ? r.setup().instances() + " instances" : label.toString();
    }

    /**
     * {@code simulate --report FILE.html}: one self-contained page with the runs' table, the combinations left out and
     * why, and per algorithm and limit two charts, a line per run: what was admitted per window against the limit of
     * every key, and the peak of the measure M per window against the limit.
     */
    static void page(List<Result> results, List<String> leftOut, Path file) throws IOException {
        Setup first = results.get(0).setup();
        StringBuilder b = HtmlPage.start("Sluice simulate: " + first);
        b.append("<h1>Simulation of a fleet</h1>\n<p>")
                .append(HtmlPage.esc(
                        results.size() == 1
                                ? first.toString()
                                : results.size() + " runs: windows of " + Names.of(first.window()) + ", " + first.keys()
                                        + (first.keys() == 1 ? " key" : " keys") + ", " + Names.of(first.duration())
                                        + ", seed "
                                        + first.seed()))
                .append(". M is the algorithm's own measure of what was admitted on a key; calls are counter store"
                        + " calls per instance per interval.</p>\n");
        if (!leftOut.isEmpty()) {
            b.append("<p class=\"left-out\">Left out:</p>\n<ul>\n");
            for (String why : leftOut) {
                b.append("<li>").append(HtmlPage.esc(why)).append("</li>\n");
            }
            b.append("</ul>\n");
        }
        b.append("<table class=\"runs\">\n<tr><th>")
                .append(String.join("</th><th>", COLUMNS))
                .append("</th></tr>\n");
        for (Result r : results) {
            b.append("<tr><td>").append(String.join("</td><td>", cells(r))).append("</td></tr>\n");
        }
        b.append("</table>\n");
        for (Map.Entry<String, List<Result>> e : byPanel(results).entrySet()) {
            List<Result> runs = e.getValue();
            Setup s = runs.get(0).setup();
            long windowNanos = s.window().toNanos();
            IntFunction<String> from = w -> seconds(w * windowNanos) + " s";
            List<HtmlPage.Line> admitted = new ArrayList<>();
            List<HtmlPage.Line> peaks = new ArrayList<>();
            for (Result r : runs) {
                admitted.add(new HtmlPage.Line(label(r, results), r.admitted()));
                peaks.add(new HtmlPage.Line(label(r, results), r.peak()));
            }
            b.append("<h2>").append(HtmlPage.esc(e.getKey())).append("</h2>\n");
            b.append("<h3>Admitted per window, against the limit of every key</h3>\n");
            HtmlPage.lineChart(b, "admitted", admitted, s.limit() * s.keys(), from);
            b.append("<h3>Peak of M on a key per window, against the limit</h3>\n");
            HtmlPage.lineChart(b, "peak", peaks, s.limit(), from);
        }
        b.append("</body></html>\n");
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(file, b, StandardCharsets.UTF_8);
    }

    /** 1, 2 or 5 times a power of ten, so that about ten lines span {@code top}. */
    private static int niceStep(long top) {
        long step = 1;
        while (true) {
            for (long m : new long[] {1, 2, 5}) {
                if (top / (step * m) <= 10) {
                    return (int) Math.min(Integer.MAX_VALUE, step * m);
                }
            }
            step *= 10;
        }
    }

    /** Nanoseconds as seconds, with no more decimals than needed: {@code 0}, {@code 0.1}, {@code 12}. */
    private static String seconds(long nanos) {
        String s = String.format(Locale.ROOT, "%.3f", nanos / 1e9);
        s = s.replaceAll("0+$", "");
        return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
    }

    /** The columns of the table of runs, in the text and the page alike. */
    private static final List<String> COLUMNS = List.of(
            "mode",
            "instances",
            "interval",
            "algorithm",
            "limit",
            "traffic",
            "rate",
            "admitted a window (mean)",
            "most",
            "least",
            "of the limit",
            "peak of M",
            "over the limit",
            "calls",
            "fairness");

    /** The cells of one run's row, in the order of {@link #COLUMNS}. */
    private static List<String> cells(Result r) {
        Setup s = r.setup();
        return List.of(
                Names.of(s.mode()),
                Integer.toString(s.instances()),
                Names.of(s.interval()),
                Names.of(s.algorithm()),
                Long.toString(s.limit()),
                Names.of(s.traffic()),
                s.rate() + "/s",
                String.format(Locale.ROOT, "%.1f", r.meanPerWindow()),
                Long.toString(r.maxPerWindow()),
                Long.toString(r.minPerWindow()),
                SimulateCommand.percent(r.share()),
                Long.toString(r.peakMeasure()),
                Long.toString(r.worstOvershoot()),
                String.format(Locale.ROOT, "%.2f", r.callsPerInstancePerInterval()),
                String.format(Locale.ROOT, "%.2f", r.fairness()));
    }
}
