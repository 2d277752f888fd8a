package dev.sluice.server.simulate;

import dev.sluice.server.simulate.Simulation.Mode;
import dev.sluice.server.simulate.Simulation.Result;
import dev.sluice.server.simulate.Simulation.Setup;
import dev.sluice.server.simulate.Simulation.Traffic;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/** What {@code simulate} prints and draws from its results: Markdown tables, CSV rows, a PNG chart. */
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
        out.println("| mode | instances | interval | algorithm | limit | traffic | rate | admitted a window (mean)"
                + " | most | least | of the limit | peak of M | over the limit | calls | fairness |");
        out.println("|---|---:|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (Result r : results) {
            Setup s = r.setup();
            out.printf(
                    Locale.ROOT,
                    "| %s | %d | %s | %s | %d | %s | %d/s | %.1f | %d | %d | %s | %d | %d | %.2f | %.2f |%n",
                    Names.of(s.mode()),
                    s.instances(),
                    Names.of(s.interval()),
                    Names.of(s.algorithm()),
                    s.limit(),
                    Names.of(s.traffic()),
                    s.rate(),
                    r.meanPerWindow(),
                    r.maxPerWindow(),
                    r.minPerWindow(),
                    SimulateCommand.percent(r.share()),
                    r.peakMeasure(),
                    r.worstOvershoot(),
                    r.callsPerInstancePerInterval(),
                    r.fairness());
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
        Map<String, List<Result>> byPanel = new LinkedHashMap<>();
        for (Result r : results) {
            byPanel.computeIfAbsent(
                            Names.of(r.setup().algorithm()) + ", " + r.setup().limit() + " per "
                                    + Names.of(r.setup().window()),
                            k -> new ArrayList<>())
                    .add(r);
        }
        List<Function<Setup, String>> labels = List.of(
                s -> Names.of(s.mode()),
                s -> s.instances() + " instances",
                s -> "every " + Names.of(s.interval()),
                s -> Names.of(s.traffic()),
                s -> s.rate() + "/s");
        List<SimulationChart.Panel> panels = new ArrayList<>();
        for (Map.Entry<String, List<Result>> e : byPanel.entrySet()) {
            List<SimulationChart.Series> series = new ArrayList<>();
            long top = 0;
            long limit = e.getValue().get(0).setup().limit()
                    * e.getValue().get(0).setup().keys();
            for (Result r : e.getValue()) {
                StringBuilder label = new StringBuilder();
                for (Function<Setup, String> l : labels) {
                    if (results.stream().map(x -> l.apply(x.setup())).distinct().count() > 1) {
                        label.append(label.length() == 0 ? "" : ", ").append(l.apply(r.setup()));
                    }
                }
                series.add(new SimulationChart.Series(
                        label.length() == 0 ? r.setup().instances() + " instances" : label.toString(), r.admitted()));
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
}
