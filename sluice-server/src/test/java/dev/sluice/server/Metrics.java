package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;

/** Reads a sample of a Prometheus text page. */
final class Metrics {
    private Metrics() {}

    /**
     * What the bound {@code bound} of {@code server} holds now, as its gauge {@code sluice_server_bound_used} on
     * {@code /metrics} says; fails if the page does not have it.
     */
    static double boundUsed(ServerProcess server, String bound) {
        HttpResponse<String> page = server.get("/metrics");
        assertEquals(200, page.statusCode());
        String series = "sluice_server_bound_used{bound=\"" + bound + "\"}";
        assertTrue(page.body().contains(series + " "), "no " + series + " in /metrics");
        return value(page.body(), series);
    }

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
