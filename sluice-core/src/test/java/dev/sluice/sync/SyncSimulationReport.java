package dev.sluice.sync;

import dev.sluice.Algorithm;
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

    private static final int WIDTH = 1400;
    private static final int HEIGHT = 590;
    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xff7f0e), new Color(0xd62728)};

    private record Series(String label, long[] perSecond) {}

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

        BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, WIDTH, HEIGHT);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 20));
        g.drawString(
                "Synchronized mode: admitted per second vs the limit (sliding tail, 50/s, 500/s offered at random"
                        + " over the instances)",
                30,
                36);
        panel(g, 30, 60, 650, 520, "10 instances, by sync interval", byInterval, 550, 100, base.limit());
        panel(g, 720, 60, 650, 520, "sync every 100 ms, by instances", byInstances, 120, 20, base.limit());
        g.dispose();
        File dir = file.getAbsoluteFile().getParentFile();
        if (dir != null && !dir.isDirectory() && !dir.mkdirs()) {
            throw new IOException("cannot create " + dir);
        }
        if (!ImageIO.write(image, "png", file)) {
            throw new IOException("no PNG writer");
        }
    }

    private static Series series(String label, Algorithm algorithm, int n, int ms) {
        SyncSimulation.Result r = SyncSimulation.run(
                SyncSimulation.Setup.of(algorithm, n, Duration.ofMillis(ms)).randomly(3));
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
        int lx = right - 230;
        g.setColor(new Color(255, 255, 255, 230));
        g.fillRect(lx - 10, ly - 14, 235, 22 * (series.size() + 1) + 8);
        g.setColor(Color.GRAY);
        g.drawRect(lx - 10, ly - 14, 235, 22 * (series.size() + 1) + 8);
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
