package dev.sluice.server;

/** Reads a sample of a Prometheus text page. */
final class Metrics {
    private Metrics() {}

    /** The value of the sample written exactly {@code series} (name and labels as printed), or 0 if absent. */
    static double value(String page, String series) {
        for (String line : page.split("\n", -1)) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1).trim());
            }
        }
        return 0;
    }
}
