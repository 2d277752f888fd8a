package dev.sluice.lease;

import dev.sluice.Algorithm;
import dev.sluice.lease.LeaseSimulation.Mode;
import dev.sluice.lease.LeaseSimulation.Result;
import dev.sluice.lease.LeaseSimulation.Setup;
import dev.sluice.lease.LeaseSimulation.Spread;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;

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
            for (int ms : new int[] {50, 100}) {
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
        draw(new File(png));
        System.out.println();
        System.out.println("chart written to " + png);
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    // ---- the chart -----------------------------------------------------------------------------------------------

    private static final int WIDTH = 1400;
    private static final int HEIGHT = 590;
    private static final Color[] COLORS = {
        new Color(0xff7f0e), new Color(0xd62728), new Color(0x1f77b4), new Color(0x2ca02c)
    };

    private record Series(String label, long[] perSecond) {}

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

        BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, WIDTH, HEIGHT);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 20));
        g.drawString(
                "Synchronized and leased mode: admitted per second vs the limit (10 instances, 500/s offered at random)",
                30,
                36);
        panel(g, 30, 60, 650, 520, "sliding tail, 50/s", tail, 500, 50, 50);
        panel(g, 720, 60, 650, 520, "fixed window, 60/s", fixed, 500, 50, 60);
        g.dispose();
        File dir = file.getAbsoluteFile().getParentFile();
        if (dir != null && !dir.isDirectory() && !dir.mkdirs()) {
            throw new IOException("cannot create " + dir);
        }
        if (!ImageIO.write(image, "png", file)) {
            throw new IOException("no PNG writer");
        }
    }

    private static Series series(String label, Mode mode, Algorithm algorithm, long limit, int ms) {
        Result r = LeaseSimulation.run(Setup.of(mode, algorithm, 10, Duration.ofMillis(ms), Spread.RANDOM, limit));
        return new Series(label, r.perSecond());
    }

    private static void panel(
            Graphics2D g,
            int x0,
            int y0,
            int w,
            int h,
            String title,
            List<Series> series,
            int yMax,
            int yStep,
            long limit) {
        int left = x0 + 60;
        int right = x0 + w - 10;
        int top = y0 + 40;
        int bottom = y0 + h - 50;
        int seconds = series.get(0).perSecond().length;
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        g.setColor(Color.BLACK);
        g.drawString(title, left, y0 + 22);

        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        for (int v = 0; v <= yMax; v += yStep) {
            int y = yOf(v, yMax, top, bottom);
            g.setColor(new Color(0xe6e6e6));
            g.drawLine(left, y, right, y);
            g.setColor(Color.DARK_GRAY);
            String label = Integer.toString(v);
            g.drawString(label, left - 8 - g.getFontMetrics().stringWidth(label), y + 5);
        }
        for (int s = 0; s <= seconds; s += 2) {
            int x = xOf(s, seconds, left, right);
            g.setColor(Color.DARK_GRAY);
            g.drawLine(x, bottom, x, bottom + 5);
            String label = Integer.toString(s);
            g.drawString(label, x - g.getFontMetrics().stringWidth(label) / 2, bottom + 20);
        }
        g.setColor(Color.BLACK);
        g.drawLine(left, top, left, bottom);
        g.drawLine(left, bottom, right, bottom);
        g.drawString("time (s)", (left + right) / 2 - 25, bottom + 40);
        Graphics2D rotated = (Graphics2D) g.create();
        rotated.rotate(-Math.PI / 2);
        rotated.drawString("admitted requests per second", -(top + bottom) / 2 - 90, x0 + 14);
        rotated.dispose();

        g.setStroke(new BasicStroke(2.5f));
        for (int k = 0; k < series.size(); k++) {
            long[] values = series.get(k).perSecond();
            g.setColor(COLORS[k]);
            int prevY = -1;
            for (int s = 0; s < values.length; s++) {
                int xa = xOf(s, seconds, left, right);
                int xb = xOf(s + 1, seconds, left, right);
                int y = yOf(Math.min(values[s], yMax), yMax, top, bottom);
                if (prevY >= 0) {
                    g.drawLine(xa, prevY, xa, y);
                }
                g.drawLine(xa, y, xb, y);
                prevY = y;
            }
        }

        int limitY = yOf(limit, yMax, top, bottom); // over the series: one at exactly the limit shows between dashes
        g.setColor(Color.BLACK);
        g.setStroke(new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {8f, 6f}, 0f));
        g.drawLine(left, limitY, right, limitY);

        g.setStroke(new BasicStroke(1f));
        int ly = top + 8;
        int lx = right - 250;
        g.setColor(new Color(255, 255, 255, 230));
        g.fillRect(lx - 10, ly - 14, 255, 22 * (series.size() + 1) + 8);
        g.setColor(Color.GRAY);
        g.drawRect(lx - 10, ly - 14, 255, 22 * (series.size() + 1) + 8);
        for (int k = 0; k < series.size(); k++) {
            g.setColor(COLORS[k]);
            g.setStroke(new BasicStroke(3f));
            g.drawLine(lx, ly + 22 * k, lx + 30, ly + 22 * k);
            g.setColor(Color.BLACK);
            g.drawString(series.get(k).label(), lx + 40, ly + 22 * k + 5);
        }
        g.setStroke(new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {8f, 6f}, 0f));
        int k = series.size();
        g.drawLine(lx, ly + 22 * k, lx + 30, ly + 22 * k);
        g.drawString("the limit, " + limit + "/s", lx + 40, ly + 22 * k + 5);
        g.setStroke(new BasicStroke(1f));
    }

    private static int xOf(double s, int seconds, int left, int right) {
        return (int) Math.round(left + (right - left) * s / seconds);
    }

    private static int yOf(double v, int yMax, int top, int bottom) {
        return (int) Math.round(bottom - (bottom - top) * v / yMax);
    }
}
