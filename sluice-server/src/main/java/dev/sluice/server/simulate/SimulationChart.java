package dev.sluice.server.simulate;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.util.List;
import javax.imageio.ImageIO;

/**
 * {@code simulate}'s chart: panels side by side, each the admitted requests per window of a few runs as steps, against
 * the limit as a dashed line. A PNG drawn headless, with no font or file beyond the JDK's.
 */
final class SimulationChart {

    private static final int PANEL_WIDTH = 690;
    private static final int HEIGHT = 590;

    /** The most series a panel shows: one per colour. */
    static final int MAX_SERIES = 8;

    private static final int[] COLORS = {0x1f77b4, 0xff7f0e, 0xd62728, 0x2ca02c, 0x9467bd, 0x8c564b, 0xe377c2, 0x7f7f7f
    };

    /** One run: its label in the legend, and what it admitted in each window. */
    static final class Series {
        private final String label;
        private final long[] perWindow;

        Series(String label, long[] perWindow) {
            this.label = label;
            this.perWindow = perWindow.clone();
        }

        String label() {
            return label;
        }

        long[] perWindow() {
            return perWindow.clone();
        }
    }

    /**
     * One panel.
     *
     * @param yMax  the top of the scale, in requests per second (a value above it is drawn at it)
     * @param yStep the distance between the scale's lines
     * @param limit the limit, drawn as a dashed line
     */
    record Panel(String title, List<Series> series, int yMax, int yStep, long limit) {}

    private SimulationChart() {}

    /**
     * Writes the chart as a PNG to {@code file}, creating its folder if need be.
     *
     * @param unit        what a window is, for the axes' labels ({@code second}, {@code 100ms})
     * @throws IllegalArgumentException if a panel has more than {@link #MAX_SERIES} series
     */
    static void write(File file, String title, String unit, List<Panel> panels) throws IOException {
        int width = 20 + PANEL_WIDTH * panels.size();
        BufferedImage image = new BufferedImage(width, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, width, HEIGHT);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 20));
        g.drawString(title, 30, 36);
        for (int p = 0; p < panels.size(); p++) {
            Panel panel = panels.get(p);
            if (panel.series().size() > MAX_SERIES) {
                throw new IllegalArgumentException("a chart shows at most " + MAX_SERIES + " runs a panel, was "
                        + panel.series().size());
            }
            panel(g, 30 + PANEL_WIDTH * p, 60, PANEL_WIDTH - 40, 520, panel, unit);
        }
        g.dispose();
        File dir = file.getAbsoluteFile().getParentFile();
        if (dir != null && !dir.isDirectory() && !dir.mkdirs()) {
            throw new IOException("cannot create " + dir);
        }
        if (!ImageIO.write(image, "png", file)) {
            throw new IOException("no PNG writer");
        }
    }

    private static void panel(Graphics2D g, int x0, int y0, int w, int h, Panel p, String unit) {
        String title = p.title();
        List<Series> series = p.series();
        int yMax = p.yMax();
        int yStep = p.yStep();
        long limit = p.limit();
        int left = x0 + 60;
        int right = x0 + w - 10;
        int top = y0 + 40;
        int bottom = y0 + h - 50;
        int seconds = series.get(0).perWindow().length;
        int xStep = Math.max(1, (seconds + 9) / 10);
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
        for (int s = 0; s <= seconds; s += xStep) {
            int x = xOf(s, seconds, left, right);
            g.setColor(Color.DARK_GRAY);
            g.drawLine(x, bottom, x, bottom + 5);
            String label = Integer.toString(s);
            g.drawString(label, x - g.getFontMetrics().stringWidth(label) / 2, bottom + 20);
        }
        g.setColor(Color.BLACK);
        g.drawLine(left, top, left, bottom);
        g.drawLine(left, bottom, right, bottom);
        g.drawString("time (windows of " + unit + ")", (left + right) / 2 - 60, bottom + 40);
        Graphics2D rotated = (Graphics2D) g.create();
        rotated.rotate(-Math.PI / 2);
        rotated.drawString("admitted per window", -(top + bottom) / 2 - 60, x0 + 14);
        rotated.dispose();

        g.setStroke(new BasicStroke(2.5f));
        for (int k = 0; k < series.size(); k++) {
            long[] values = series.get(k).perWindow();
            g.setColor(new Color(COLORS[k]));
            int prevY = -1;
            for (int s = 0; s < values.length; s++) {
                int xa = xOf(s, seconds, left, right);
                int xb = xOf(s + 1, seconds, left, right);
                int y = yOf((double) Math.min(values[s], yMax), yMax, top, bottom);
                if (prevY >= 0) {
                    g.drawLine(xa, prevY, xa, y);
                }
                g.drawLine(xa, y, xb, y);
                prevY = y;
            }
        }

        int limitY = yOf(
                (double) limit, yMax, top, bottom); // over the series: one at exactly the limit shows between dashes
        g.setColor(Color.BLACK);
        g.setStroke(new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {8f, 6f}, 0f));
        g.drawLine(left, limitY, right, limitY);

        g.setStroke(new BasicStroke(1f));
        int legendWidth = 60;
        for (Series s : series) {
            legendWidth = Math.max(legendWidth, 50 + g.getFontMetrics().stringWidth(s.label()));
        }
        int ly = top + 8;
        int lx = right - legendWidth;
        g.setColor(new Color(255, 255, 255, 230));
        g.fillRect(lx - 10, ly - 14, legendWidth + 5, 22 * (series.size() + 1) + 8);
        g.setColor(Color.GRAY);
        g.drawRect(lx - 10, ly - 14, legendWidth + 5, 22 * (series.size() + 1) + 8);
        for (int k = 0; k < series.size(); k++) {
            g.setColor(new Color(COLORS[k]));
            g.setStroke(new BasicStroke(3f));
            g.drawLine(lx, ly + 22 * k, lx + 30, ly + 22 * k);
            g.setColor(Color.BLACK);
            g.drawString(series.get(k).label(), lx + 40, ly + 22 * k + 5);
        }
        g.setStroke(new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {8f, 6f}, 0f));
        int k = series.size();
        g.drawLine(lx, ly + 22 * k, lx + 30, ly + 22 * k);
        g.drawString("the limit, " + limit, lx + 40, ly + 22 * k + 5);
        g.setStroke(new BasicStroke(1f));
    }

    private static int xOf(double s, int seconds, int left, int right) {
        return (int) Math.round(left + (right - left) * s / seconds);
    }

    private static int yOf(double v, int yMax, int top, int bottom) {
        return (int) Math.round(bottom - (bottom - top) * v / yMax);
    }
}
