package dev.sluice.server.simulate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.server.UsageException;
import dev.sluice.server.simulate.Simulation.Mode;
import dev.sluice.server.simulate.Simulation.Result;
import dev.sluice.server.simulate.Simulation.Setup;
import dev.sluice.server.simulate.Simulation.Traffic;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code simulate}: its engine in the three modes and every traffic, its options, its CSV and its chart. */
class SimulateCommandTest {

    @TempDir
    Path dir;

    private record Run(int status, String out, String err) {}

    private static Run simulate(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            status = SimulateCommand.run(List.of(args), o, e);
        }
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void theSameSeedGivesTheSameOutputAndAnotherSeedAnother() {
        String[] args = {"--mode", "synchronized,leased", "--traffic", "random", "--instances", "5", "--duration", "5s"
        };
        Run first = simulate(concat(args, "--seed", "7"));
        Run again = simulate(concat(args, "--seed", "7"));
        Run other = simulate(concat(args, "--seed", "8"));
        assertEquals(0, first.status());
        assertEquals(first.out(), again.out());
        assertNotEquals(first.out(), other.out());
        assertTrue(
                first.out().contains("| synchronized | 5 | 100ms | sliding_tail | 50 | random | 500/s |"), first.out());
        assertTrue(first.out().contains("| leased | 5 | 100ms | sliding_tail | 50 | random | 500/s |"), first.out());
    }

    static Stream<Setup> everyTraffic() {
        return Stream.of(Mode.EXACT, Mode.LEASED)
                .flatMap(mode -> Setup.ALGORITHMS.stream().flatMap(a -> Arrays.stream(Traffic.values())
                        .filter(t -> t != Traffic.LOG)
                        .map(t -> Setup.of(mode, a, 10, Duration.ofMillis(100))
                                .traffic(t, 3)
                                .rate(t == Traffic.COLD_FLOOD ? 10_000 : 500)
                                .keys(3)
                                .seconds(3))));
    }

    /**
     * Exact and leased mode never let the measure pass the limit, on any of 3 keys, whatever the traffic (an instance
     * dying included); exact mode admits the limit in every window on every key of the fixed window, offered 3 times
     * it.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("everyTraffic")
    void exactAndLeasedModeAreNeverOverTheLimit(Setup setup) {
        Result r = Simulation.run(setup);
        assertTrue(r.peakMeasure() <= setup.limit(), "peak of M " + r.peakMeasure());
        assertEquals(0, r.worstOvershoot());
        assertTrue(r.peakMeasure() >= setup.limit() - 1, "the limit was never reached: " + r.peakMeasure());
        if (setup.mode() == Mode.EXACT && setup.algorithm() == Algorithm.FIXED_WINDOW) {
            for (int w = 0; w < r.windows(); w++) {
                assertEquals(3 * setup.limit(), r.admitted(w), "window " + w);
            }
        }
    }

    static Stream<Algorithm> exactOnly() {
        return Setup.EXACT_ONLY.stream();
    }

    /**
     * Exact mode runs the algorithms synchronized and leased mode do not keep, with answers worked out by hand: 500
     * requests a second, one every 2 ms from 1 ms, on a limit of 50 a second. The sliding log admits 50 in every
     * second; both buckets (full at first, then a token every 20 ms) admit their 50, then what refilled from the first
     * request to the last, at 2999 ms: 50 + ⌊2.998 · 50⌋ = 199. Ten instances admit what one does, window by window,
     * and the measure (a bucket's level, the log's count) reaches the limit and never passes it.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("exactOnly")
    void exactModeRunsTheBucketsAndTheSlidingLog(Algorithm algorithm) {
        Setup setup =
                Setup.of(Mode.EXACT, algorithm, 10, Duration.ofMillis(100)).seconds(3);
        Result fleet = Simulation.run(setup);
        Result one = Simulation.run(
                Setup.of(Mode.EXACT, algorithm, 1, Duration.ofMillis(100)).seconds(3));
        assertEquals(Arrays.toString(one.admitted()), Arrays.toString(fleet.admitted()));
        assertEquals(50, fleet.peakMeasure());
        assertEquals(0, fleet.worstOvershoot());
        if (algorithm == Algorithm.SLIDING_LOG) {
            assertEquals("[50, 50, 50]", Arrays.toString(fleet.admitted()));
        } else {
            assertEquals(199, fleet.totalAdmitted());
        }
        assertEquals(1500, fleet.totalOffered());
    }

    /** What synchronized and leased mode do not keep is left out, with the store's reason, not simulated otherwise. */
    @Test
    void aModeThatDoesNotKeepAnAlgorithmIsLeftOutAndSaysWhy() {
        Run run = simulate(
                "--mode", "exact,synchronized,leased", "--algorithm", "token_bucket,sliding_tail", "--duration", "2s");
        assertEquals(0, run.status(), run.err());
        assertTrue(run.out().contains("| exact | 10 | 100ms | token_bucket | 50 |"), run.out());
        assertTrue(run.out().contains("| synchronized | 10 | 100ms | sliding_tail | 50 |"), run.out());
        assertTrue(run.out().contains("| leased | 10 | 100ms | sliding_tail | 50 |"), run.out());
        assertEquals(
                4,
                run.out()
                        .lines()
                        .filter(l ->
                                l.startsWith("| exact") || l.startsWith("| synchronized") || l.startsWith("| leased"))
                        .count(),
                run.out());
        assertTrue(run.err().contains("simulate: left out, synchronized mode supports"), run.err());
        assertTrue(run.err().contains("simulate: left out, leased mode supports"), run.err());
        assertTrue(run.err().contains("not TOKEN_BUCKET"), run.err());

        UsageException e =
                assertThrows(UsageException.class, () -> simulate("--mode", "leased", "--algorithm", "sliding_log"));
        assertTrue(
                e.getMessage().startsWith("simulate: --algorithm 'sliding_log' is not valid with --mode leased:"),
                e.getMessage());
        assertTrue(e.getMessage().contains("not SLIDING_LOG"), e.getMessage());
    }

    /**
     * {@code --report}: one page, nothing fetched (no script, no link, no image but inline SVG), with the runs' table,
     * what was left out and, per algorithm and limit, two charts of a line per run against the limit. It renders in
     * a browser: ReplayIT opens it beside replay's report.
     */
    @Test
    void theReportIsOneSelfContainedPage() throws IOException {
        Path page = dir.resolve("reports/fleet.html");
        Run run = simulate(
                "--mode",
                "exact,synchronized,leased",
                "--algorithm",
                "sliding_tail,token_bucket",
                "--duration",
                "3s",
                "--report",
                page.toString());
        assertEquals(0, run.status(), run.err());
        assertTrue(run.err().contains("report written to " + page), run.err());
        String html = Files.readString(page);
        assertTrue(html.startsWith("<!DOCTYPE html>"), html);
        for (String fetch : List.of("<script", "<link", "<img", "src=", "href=", "url(")) {
            assertFalse(html.contains(fetch), "nothing fetched: " + fetch);
        }
        assertEquals(4, count(html, "<tr><td>"), "a row per run");
        assertEquals(2, count(html, "<svg class=\"admitted\""), "a panel per algorithm");
        assertEquals(2, count(html, "<svg class=\"peak\""), "a panel per algorithm");
        assertEquals(2 * (3 + 1), count(html, "<polyline"), "a line per run: 3 of sliding_tail, 1 of token_bucket");
        assertTrue(html.contains("<h2>sliding_tail, 50 per 1s</h2>"), html);
        assertTrue(html.contains("<h2>token_bucket, 50 per 1s</h2>"), html);
        assertTrue(html.contains("<li>synchronized mode supports"), html);
        assertTrue(html.contains(">limit 50</text>"), html);
    }

    private static int count(String s, String part) {
        int n = 0;
        for (int i = s.indexOf(part); i >= 0; i = s.indexOf(part, i + 1)) {
            n++;
        }
        return n;
    }

    /**
     * Synchronized mode over 3 keys keeps docs/sync-mode.md's bound on each: at every admission the key's measure is
     * at most the limit plus what the other instances admitted on it since the last round.
     */
    @Test
    void synchronizedModeKeepsItsBoundOnEveryKey() {
        for (Traffic t : new Traffic[] {Traffic.EVEN, Traffic.RANDOM, Traffic.SKEWED}) {
            Setup setup = Setup.of(Mode.SYNCHRONIZED, Algorithm.SLIDING_TAIL, 10, Duration.ofMillis(100))
                    .traffic(t, 3)
                    .rate(1500)
                    .keys(3)
                    .seconds(4);
            Result r = Simulation.run(setup);
            assertTrue(r.worstSlack() >= 0, setup + ": M passed L + Σa − max a by " + -r.worstSlack());
            assertTrue(r.peakMeasure() <= setup.bound(), setup + ": peak " + r.peakMeasure() + " > " + setup.bound());
            assertTrue(r.peakMeasure() > setup.limit(), setup + ": never over: " + r.peakMeasure());
        }
    }

    /**
     * The last of 3 instances dies half-way: it admits nothing after, the others take its requests, and leased mode
     * admits at least 90 % of the limit in every window after the one it died in (its slice lapses), never more.
     */
    @Test
    void whenAnInstanceDiesTheOthersTakeOver() {
        Setup setup = Setup.of(Mode.LEASED, Algorithm.SLIDING_TAIL, 3, Duration.ofMillis(100))
                .traffic(Traffic.INSTANCE_DIES, 3)
                .seconds(10);
        Result r = Simulation.run(setup);
        Result before = Simulation.run(setup.seconds(5).traffic(Traffic.RANDOM, 3));
        assertEquals(before.perInstance()[2], r.perInstance()[2], "the dead instance admitted after its death");
        for (int w = 6; w < r.windows(); w++) {
            assertTrue(r.admitted(w) >= 45 && r.admitted(w) <= 50, "window " + w + ": " + r.admitted(w));
        }
        assertEquals(0, r.worstOvershoot());
        Result exact = Simulation.run(setup.mode(Mode.EXACT));
        for (int w = 0; w < exact.windows(); w++) {
            assertEquals(50, exact.admitted(w), "exact mode, window " + w);
        }
    }

    @Test
    void csvHasAHeaderAndARowPerWindowOfEveryRun() {
        Run run = simulate(
                "--csv", "--mode", "exact,leased", "--instances", "2,4", "--duration", "3s", "--window", "500ms");
        assertEquals(0, run.status());
        List<String> lines = run.out().lines().toList();
        assertEquals(SimulationReport.CSV_HEADER, lines.get(0));
        assertEquals(1 + 4 * 6, lines.size(), run.out());
        int columns = SimulationReport.CSV_HEADER.split(",").length;
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", -1);
            assertEquals(columns, f.length, line);
            long offered = Long.parseLong(f[11]);
            long admitted = Long.parseLong(f[12]);
            assertEquals(250, offered, line);
            assertTrue(admitted <= 50, line);
            assertEquals(admitted / 50.0, Double.parseDouble(f[13]), 1e-4, line);
            assertEquals("0", f[15], line); // exact and leased: never over
        }
        assertTrue(lines.get(1).startsWith("exact,2,100,sliding_tail,50,500,random,500,1,1,0,250,"), lines.get(1));
        assertTrue(lines.get(24).startsWith("leased,4,100,sliding_tail,50,500,random,500,1,1,2500,250,"));
    }

    @Test
    void theChartIsAPngWithAPanelPerAlgorithm() throws IOException {
        File png = dir.resolve("charts/fleet.png").toFile();
        Run run = simulate(
                "--mode",
                "synchronized,leased",
                "--algorithm",
                "sliding_tail,fixed_window",
                "--duration",
                "4s",
                "--chart",
                png.getPath());
        assertEquals(0, run.status(), run.err());
        assertTrue(run.err().contains("chart written to " + png.getPath()), run.err());
        byte[] bytes = Files.readAllBytes(png.toPath());
        assertEquals(0x89, bytes[0] & 0xff);
        assertEquals("PNG", new String(bytes, 1, 3, StandardCharsets.US_ASCII));
        BufferedImage image = ImageIO.read(png);
        assertEquals(20 + 2 * 690, image.getWidth());
        assertEquals(590, image.getHeight());
    }

    @Test
    void aSingleRunPrintsItsWindowsAndTotals() {
        Run run = simulate("--mode", "leased", "--duration", "3s", "--seed", "3");
        List<String> lines = run.out().lines().toList();
        assertEquals(
                "leased, 10 instances, a round every 100ms, sliding_tail 50 per 1s, random traffic at 500/s over 1"
                        + " key, 3s, seed 3",
                lines.get(0));
        assertEquals(
                3,
                lines.stream().filter(l -> l.matches("\\| \\d \\| 500 \\| .*")).count(),
                run.out());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("peak of M ") && l.contains(": 0 over")), run.out());
    }

    @Test
    void aBadValueIsNamed() {
        UsageException e = assertThrows(UsageException.class, () -> simulate("--mode", "eventual"));
        assertEquals(
                "simulate: --mode 'eventual' is not valid: expected exact, synchronized or leased", e.getMessage());
        e = assertThrows(UsageException.class, () -> simulate("--algorithm", "token_bucket"));
        assertTrue(e.getMessage().contains("'token_bucket'"), e.getMessage());
        e = assertThrows(UsageException.class, () -> simulate("--traffic", "instance-dies", "--instances", "1"));
        assertTrue(e.getMessage().contains("at least 2, was 1"), e.getMessage());
        e = assertThrows(UsageException.class, () -> simulate("--window", "1s,2s"));
        assertTrue(e.getMessage().contains("expected one value"), e.getMessage());
        assertEquals(0, simulate("--help").status());
    }

    /**
     * A log of two clients, each 100 requests a second for 3 s, and one line that is not a request. Spread by client
     * over 4 instances, each client's requests all reach one instance, so even synchronized mode admits exactly 50 a
     * second of each; at random, exact and leased mode do, and the bad line is reported with its number.
     */
    @Test
    void aLogIsTheTrafficAsReplayReadsIt() throws IOException {
        Path log = dir.resolve("requests.jsonl");
        StringBuilder lines = new StringBuilder();
        long start = 1_764_252_000_000L;
        for (int i = 0; i < 300; i++) {
            for (String client : new String[] {"abc", "xyz"}) {
                lines.append("{\"time\":")
                        .append(start + 10L * i)
                        .append(",\"domain\":\"oauth-token\",\"descriptors\":[{\"entries\":[{\"key\":\"client_id\",")
                        .append("\"value\":\"")
                        .append(client)
                        .append("\"}]}]}\n");
            }
            if (i == 150) {
                lines.append("{\"domain\":\"oauth-token\"}\n");
            }
        }
        Files.writeString(log, lines);

        Run sticky = simulate(
                "--csv",
                "--log",
                log.toString(),
                "--mode",
                "synchronized",
                "--instances",
                "4",
                "--spread",
                "by=client_id");
        assertEquals(0, sticky.status(), sticky.err());
        List<String> rows = sticky.out().lines().skip(1).toList();
        assertEquals(3, rows.size(), sticky.out());
        for (String row : rows) {
            String[] f = row.split(",", -1);
            assertEquals("log", f[6], row);
            assertEquals("2", f[8], row); // keys
            assertEquals("200", f[11], row); // offered
            assertEquals("100", f[12], row); // admitted: 50 of each client
            assertEquals("0", f[15], row); // over
        }
        assertTrue(sticky.err().contains("line 303"), sticky.err());
        assertTrue(sticky.err().contains("1 line that is not a request, left out"), sticky.err());

        Run random = simulate("--csv", "--log", log.toString(), "--mode", "exact,leased", "--instances", "4");
        for (String row : random.out().lines().skip(1).toList()) {
            String[] f = row.split(",", -1);
            assertEquals("0", f[15], row);
            assertTrue(Long.parseLong(f[12]) >= 95, row);
        }
        UsageException e = assertThrows(UsageException.class, () -> simulate("--log", log.toString(), "--rate", "100"));
        assertTrue(e.getMessage().contains("--rate cannot go with --log"), e.getMessage());
        e = assertThrows(UsageException.class, () -> simulate("--log", log.toString(), "--spread", "sticky"));
        assertTrue(e.getMessage().contains("--spread 'sticky'"), e.getMessage());
    }

    private static String[] concat(String[] a, String... b) {
        String[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
