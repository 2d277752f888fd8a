package dev.sluice.lease;

import dev.sluice.Algorithm;
import dev.sluice.SimulationChart;
import dev.sluice.SimulationChart.Panel;
import dev.sluice.SimulationChart.Series;
import dev.sluice.lease.LeaseSimulation.Mode;
import dev.sluice.lease.LeaseSimulation.Result;
import dev.sluice.lease.LeaseSimulation.Setup;
import dev.sluice.lease.LeaseSimulation.Spread;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Prints the accuracy grid of docs/leased-mode.md (leased mode beside synchronized mode) and draws its chart from
 * {@link LeaseSimulation}. Not a test: run it by hand after changing leased mode, and commit the new PNG.
 *
 * <pre>
 * mvn -B -o -q -pl sluice-core test-compile
 * java -Djava.awt.headless=true -cp sluice-core/target/classes:sluice-core/target/test-classes \
 *     dev.sluice.lease.LeaseSimulationReport docs/leased-mode.png
 * </pre>
 */
public final class LeaseSimulationReport {

    private static final int[] INSTANCES = {2, 10, 30};
    private static final int[] INTERVALS_MS = {50, 100, 1000};
    private static final Algorithm[] ALGORITHMS = {
        Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER, Algorithm.SLIDING_TAIL
    };

    private LeaseSimulationReport() {}

    public static void main(String[] args) throws IOException {
        System.setProperty("java.awt.headless", "true");
        String png = args.length > 0 ? args[0] : "docs/leased-mode.png";
        System.out.println(
                "500/s offered for 20 s; admitted per second (mean) for an even, random and skewed spread;"
                        + " M = the algorithm's measure of all admitted requests; calls = store calls per instance per interval");
        System.out.println();
        System.out.println(
                "| algorithm | limit | instances | interval | synchronized: even / random / skewed | peak of M |"
                        + " leased: even / random / skewed | lowest second | peak of M | calls |");
        System.out.println("|---|---:|---:|---:|---|---:|---|---:|---:|---:|");
        for (Algorithm a : ALGORITHMS) {
            for (long limit : new long[] {50, 60}) {
                for (int n : INSTANCES) {
                    for (int ms : INTERVALS_MS) {
                        StringBuilder sync = new StringBuilder();
                        StringBuilder leased = new StringBuilder();
                        long syncPeak = 0;
                        long leasedPeak = 0;
                        long lowest = Long.MAX_VALUE;
                        double calls = 0;
                        for (Spread spread : Spread.values()) {
                            Setup s = Setup.of(Mode.SYNCHRONIZED, a, n, Duration.ofMillis(ms), spread, limit);
                            Result y = LeaseSimulation.run(s);
                            Result l = LeaseSimulation.run(s.mode(Mode.LEASED));
                            sync.append(sync.length() == 0 ? "" : " / ").append(fmt(y.meanPerSecond()));
                            leased.append(leased.length() == 0 ? "" : " / ").append(fmt(l.meanPerSecond()));
                            syncPeak = Math.max(syncPeak, y.peakMeasure());
                            leasedPeak = Math.max(leasedPeak, l.peakMeasure());
                            lowest = Math.min(lowest, l.minPerSecond());
                            calls = Math.max(calls, l.callsPerInstancePerInterval());
                        }
                        System.out.printf(
                                Locale.ROOT,
                                "| %s | %d | %d | %d ms | %s | %d | %s | %d | %d | %.1f |%n",
                                a,
                                limit,
                                n,
                                ms,
                                sync,
                                syncPeak,
                                leased,
                                lowest,
                                leasedPeak,
                                calls);
                    }
                }
            }
        }
        System.out.println();
        System.out.println("A flood on a key new to every instance: 10,000/s offered at random from the first instant,"
                + " no instance holding the key; sliding tail, 50/s; admitted in the first second");
        System.out.println();
        System.out.println("| instances | interval | synchronized | leased |");
        System.out.println("|---:|---:|---:|---:|");
        for (int n : INSTANCES) {
            for (int ms : INTERVALS_MS) {
                Setup flood = Setup.of(
                                Mode.SYNCHRONIZED, Algorithm.SLIDING_TAIL, n, Duration.ofMillis(ms), Spread.RANDOM, 50)
                        .coldFlood(10_000)
                        .seconds(2);
                System.out.printf(
                        Locale.ROOT,
                        "| %d | %d ms | %d | %d |%n",
                        n,
                        ms,
                        LeaseSimulation.run(flood).perSecond()[0],
                        LeaseSimulation.run(flood.mode(Mode.LEASED)).perSecond()[0]);
            }
        }
        System.out.println();
        System.out.println("Store calls per instance per interval against the rate offered, leased mode: 10 instances,"
                + " a round every 100 ms, a limit of 50/s, requests at random, 20 s (admitted per second in brackets)");
        System.out.println();
        int[] rates = {25, 100, 500, 5_000, 50_000};
        StringBuilder head = new StringBuilder("| algorithm |");
        StringBuilder rule = new StringBuilder("|---|");
        for (int rate : rates) {
            head.append(String.format(Locale.ROOT, " %,d/s |", rate));
            rule.append("---:|");
        }
        System.out.println(head);
        System.out.println(rule);
        for (Algorithm a : ALGORITHMS) {
            StringBuilder row = new StringBuilder("| " + a + " |");
            for (int rate : rates) {
                Result r = LeaseSimulation.run(Setup.of(Mode.LEASED, a, 10, Duration.ofMillis(100), Spread.RANDOM, 50)
                        .offered(rate));
                row.append(String.format(
                        Locale.ROOT, " %.2f (%s) |", r.callsPerInstancePerInterval(), fmt(r.meanPerSecond())));
            }
            System.out.println(row);
        }
        System.out.println();
        System.out.println(
                "Fairness between instances, leased mode, limit 50/s, 500/s offered at random (every instance asked"
                        + " about the same), 20 s: Jain's index of what each instance admitted (1: all the same; 1/n: one took"
                        + " everything), and the least and most one instance admitted, against an even share; then the"
                        + " same 500/s in a fixed rotation (instance 1, 2, ..., n, 1, ...: the even spread),"
                        + " Jain's index"
                        + " and the most one instance admitted; and the rotation at 5,000/s, where every instance is"
                        + " asked for more than the limit");
        System.out.println();
        System.out.println("| algorithm | instances | interval | Jain's index | least | most | even share |"
                + " rotation: Jain's index | rotation: most | rotation at 5,000/s: Jain's index |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (Algorithm a : ALGORITHMS) {
            for (int n : INSTANCES) {
                for (int ms : INTERVALS_MS) {
                    Setup random = Setup.of(Mode.LEASED, a, n, Duration.ofMillis(ms), Spread.RANDOM, 50);
                    Result r = LeaseSimulation.run(random);
                    Setup even = Setup.of(Mode.LEASED, a, n, Duration.ofMillis(ms), Spread.EVEN, 50);
                    Result rotation = LeaseSimulation.run(even);
                    Result flooded = LeaseSimulation.run(even.offered(5_000));
                    System.out.printf(
                            Locale.ROOT,
                            "| %s | %d | %d ms | %.2f | %d | %d | %d | %.2f | %d | %.2f |%n",
                            a,
                            n,
                            ms,
                            r.fairness(),
                            Arrays.stream(r.perInstance()).min().orElse(0),
                            Arrays.stream(r.perInstance()).max().orElse(0),
                            Math.round(r.meanPerSecond() * r.perSecond().length / n),
                            rotation.fairness(),
                            Arrays.stream(rotation.perInstance()).max().orElse(0),
                            flooded.fairness());
                }
            }
        }
        draw(new File(png));
        System.out.println();
        System.out.println("chart written to " + png);
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    // ---- the chart -----------------------------------------------------------------------------------------------

    private static final int[] COLORS = {0xff7f0e, 0xd62728, 0x1f77b4, 0x2ca02c};

    private static void draw(File file) throws IOException {
        List<Series> tail = List.of(
                series("synchronized, 100 ms", Mode.SYNCHRONIZED, Algorithm.SLIDING_TAIL, 50, 100),
                series("synchronized, 1 s", Mode.SYNCHRONIZED, Algorithm.SLIDING_TAIL, 50, 1000),
                series("leased, 100 ms", Mode.LEASED, Algorithm.SLIDING_TAIL, 50, 100),
                series("leased, 1 s", Mode.LEASED, Algorithm.SLIDING_TAIL, 50, 1000));
        List<Series> fixed = List.of(
                series("synchronized, 100 ms", Mode.SYNCHRONIZED, Algorithm.FIXED_WINDOW, 60, 100),
                series("synchronized, 1 s", Mode.SYNCHRONIZED, Algorithm.FIXED_WINDOW, 60, 1000),
                series("leased, 100 ms", Mode.LEASED, Algorithm.FIXED_WINDOW, 60, 100),
                series("leased, 1 s", Mode.LEASED, Algorithm.FIXED_WINDOW, 60, 1000));
        SimulationChart.write(
                file,
                "Synchronized and leased mode: admitted per second vs the limit (10 instances, 500/s offered at random)",
                COLORS,
                250,
                new Panel("sliding tail, 50/s", tail, 500, 50, 50),
                new Panel("fixed window, 60/s", fixed, 500, 50, 60));
    }

    private static Series series(String label, Mode mode, Algorithm algorithm, long limit, int ms) {
        Result r = LeaseSimulation.run(Setup.of(mode, algorithm, 10, Duration.ofMillis(ms), Spread.RANDOM, limit));
        return new Series(label, r.perSecond());
    }
}
