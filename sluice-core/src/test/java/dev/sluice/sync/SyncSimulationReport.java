package dev.sluice.sync;

import dev.sluice.Algorithm;
import dev.sluice.SimulationChart;
import dev.sluice.SimulationChart.Panel;
import dev.sluice.SimulationChart.Series;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * Prints the tables of docs/sync-mode.md and draws its chart from {@link SyncSimulation}. Not a test: run it by hand
 * after changing synchronized mode, and commit the new PNG.
 *
 * <pre>
 * mvn -B -o -q -pl sluice-core test-compile
 * java -Djava.awt.headless=true -cp sluice-core/target/classes:sluice-core/target/test-classes \
 *     dev.sluice.sync.SyncSimulationReport docs/sync-mode.png
 * </pre>
 */
public final class SyncSimulationReport {

    private static final int[] INSTANCES = {2, 10, 30};
    private static final int[] INTERVALS_MS = {50, 100, 1000};

    private SyncSimulationReport() {}

    public static void main(String[] args) throws IOException {
        System.setProperty("java.awt.headless", "true");
        String png = args.length > 0 ? args[0] : "docs/sync-mode.png";

        System.out.println(
                "Sliding tail, 50/s, 500/s offered, 20 s; M = the tail's estimate, bound = L + floor(R*T*(n-1)/n)");
        System.out.println();
        System.out.println(
                "| instances | sync interval | admitted/s, even spread | admitted/s, random spread | most in one second"
                        + " (random) | peak of M (random) | bound on M |");
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|");
        for (int n : INSTANCES) {
            for (int ms : INTERVALS_MS) {
                SyncSimulation.Setup even = SyncSimulation.Setup.of(Algorithm.SLIDING_TAIL, n, Duration.ofMillis(ms));
                SyncSimulation.Result e = SyncSimulation.run(even);
                SyncSimulation.Result r = SyncSimulation.run(even.randomly(3));
                System.out.printf(
                        Locale.ROOT,
                        "| %d | %d ms | %.1f | %.1f | %d | %d | %d |%n",
                        n,
                        ms,
                        e.meanPerSecond(),
                        r.meanPerSecond(),
                        r.maxPerSecond(),
                        r.peakMeasure(),
                        even.bound());
            }
        }
        System.out.println();
        System.out.println("Random spread, other algorithms and limits");
        System.out.println();
        System.out.println(
                "| algorithm | limit | instances | sync interval | admitted/s | most in one second | peak of M "
                        + "| bound on M |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
        for (Algorithm a : new Algorithm[] {Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER}) {
            for (long limit : new long[] {50, 60}) {
                for (int n : INSTANCES) {
                    for (int ms : INTERVALS_MS) {
                        SyncSimulation.Setup s =
                                new SyncSimulation.Setup(a, n, Duration.ofMillis(ms), true, false, limit, 500, 20, 3);
                        SyncSimulation.Result r = SyncSimulation.run(s);
                        System.out.printf(
                                Locale.ROOT,
                                "| %s | %d | %d | %d ms | %.1f | %d | %d | %d |%n",
                                a,
                                limit,
                                n,
                                ms,
                                r.meanPerSecond(),
                                r.maxPerSecond(),
                                r.peakMeasure(),
                                s.bound());
                    }
                }
            }
        }
        System.out.println();
        System.out.println("Cold start (no instance holds the key at first), sliding tail, random spread");
        System.out.println();
        System.out.println(
                "| instances | sync interval | admitted in the first second, warm | cold | peak of M, warm | cold |");
        System.out.println("|---:|---:|---:|---:|---:|---:|");
        for (int n : INSTANCES) {
            for (int ms : new int[] {50, 100}) {
                SyncSimulation.Setup warm = SyncSimulation.Setup.of(Algorithm.SLIDING_TAIL, n, Duration.ofMillis(ms))
                        .randomly(3);
                SyncSimulation.Result w = SyncSimulation.run(warm);
                SyncSimulation.Result c = SyncSimulation.run(warm.coldStart());
                System.out.printf(
                        Locale.ROOT,
                        "| %d | %d ms | %d | %d | %d | %d |%n",
                        n,
                        ms,
                        w.perSecond()[0],
                        c.perSecond()[0],
                        w.peakMeasure(),
                        c.peakMeasure());
            }
        }

        System.out.println();
        System.out.println("A flood on a key new to every instance: each instance's first request comes before any"
                + " sync round, so every one reads an empty record and may spend the whole limit in its first interval;"
                + " sliding tail, limit 50/s, 10,000/s offered at random");
        System.out.println();
        System.out.println("| instances | sync interval | admitted in the first second | peak of M | bound on M |");
        System.out.println("|---:|---:|---:|---:|---:|");
        for (int n : INSTANCES) {
            for (int ms : new int[] {50, 100}) {
                SyncSimulation.Setup flood = new SyncSimulation.Setup(
                        Algorithm.SLIDING_TAIL, n, Duration.ofMillis(ms), true, true, 50, 10_000, 2, 3);
                SyncSimulation.Result f = SyncSimulation.run(flood);
                System.out.printf(
                        Locale.ROOT,
                        "| %d | %d ms | %d | %d | %d |%n",
                        n,
                        ms,
                        f.perSecond()[0],
                        f.peakMeasure(),
                        flood.bound());
            }
        }

        draw(new File(png));
        System.out.println();
        System.out.println("chart written to " + png);
    }

    // ---- the chart -----------------------------------------------------------------------------------------------

    private static final int[] COLORS = {0x1f77b4, 0xff7f0e, 0xd62728};

    private static void draw(File file) throws IOException {
        SyncSimulation.Setup base = SyncSimulation.Setup.of(Algorithm.SLIDING_TAIL, 10, Duration.ofMillis(100))
                .randomly(3);
        List<Series> byInterval = List.of(
                series("sync every 50 ms", Algorithm.SLIDING_TAIL, 10, 50),
                series("sync every 100 ms", Algorithm.SLIDING_TAIL, 10, 100),
                series("sync every 1 s", Algorithm.SLIDING_TAIL, 10, 1000));
        List<Series> byInstances = List.of(
                series("2 instances", Algorithm.SLIDING_TAIL, 2, 100),
                series("10 instances", Algorithm.SLIDING_TAIL, 10, 100),
                series("30 instances", Algorithm.SLIDING_TAIL, 30, 100));
        SimulationChart.write(
                file,
                "Synchronized mode: admitted per second vs the limit (sliding tail, 50/s, 500/s offered at random"
                        + " over the instances)",
                COLORS,
                230,
                new Panel("10 instances, by sync interval", byInterval, 550, 100, base.limit()),
                new Panel("sync every 100 ms, by instances", byInstances, 120, 20, base.limit()));
    }

    private static Series series(String label, Algorithm algorithm, int n, int ms) {
        SyncSimulation.Result r = SyncSimulation.run(
                SyncSimulation.Setup.of(algorithm, n, Duration.ofMillis(ms)).randomly(3));
        return new Series(label, r.perSecond());
    }
}
