package dev.sluice.server.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.policy.Policies;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Replays of logs with answers known by hand, through {@link Replay#run} and {@link Replayer}. */
class ReplayTest {
    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private static String line(long time, String... keysAndValues) {
        return line(time, 0, keysAndValues);
    }

    /** A /json body and its time: one descriptor of the entries given; {@code hits} 0 leaves hits_addend out. */
    private static String line(long time, int hits, String... keysAndValues) {
        StringBuilder b = new StringBuilder("{\"time\":" + time + ",\"domain\":\"d\",\"descriptors\":[{\"entries\":[");
        for (int i = 0; i < keysAndValues.length; i += 2) {
            b.append(i == 0 ? "" : ",")
                    .append("{\"key\":\"")
                    .append(keysAndValues[i])
                    .append("\",\"value\":\"")
                    .append(keysAndValues[i + 1])
                    .append("\"}");
        }
        b.append("]}]");
        if (hits > 0) {
            b.append(",\"hits_addend\":").append(hits);
        }
        return b.append("}\n").toString();
    }

    private Path write(String name, String text) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, text);
        return p;
    }

    /** The threads {@link #run} decides on: several, so that every test of a file log runs the parts. */
    private int threads = 4;

    private int run(Path config, String log, InputStream stdin, String... options) {
        List<String> o = List.of(options);
        Replay.Settings s = new Replay.Settings(
                config,
                log,
                o.contains("--domain") ? "d" : null,
                o.contains("--csv-input"),
                o.contains("--in-order") ? Duration.ZERO : LogReader.DEFAULT_REORDER_WINDOW,
                o.contains("--strict"),
                o.contains("--csv"),
                o.contains("--report") ? dir.resolve("report.html") : null,
                o.stream().filter(x -> x.contains("=")).findFirst().orElse(null),
                10,
                false,
                threads);
        return Replay.run(
                s,
                stdin,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private Replayer replay(String yaml, String log) throws IOException {
        Replayer r = new Replayer(Policies.parse("test.yaml", yaml));
        try (LogReader reader = LogReader.builder(new ByteArrayInputStream(log.getBytes(StandardCharsets.UTF_8)), "-")
                .onBadLine(r::bad)
                .open()) {
            for (TimedRequest t; (t = reader.next()) != null; ) {
                r.replay(t);
            }
        }
        r.findNeededLimits();
        return r;
    }

    private static Row row(Replayer r, String key) {
        return r.rows().stream().filter(x -> x.key().equals(key)).findFirst().orElseThrow();
    }

    private static final String NESTED =
            """
            domain: d
            descriptors:
              - key: client_id
                rate_limit: {unit: second, requests_per_unit: 3}
                descriptors:
                  - key: username
                    rate_limit: {unit: minute, requests_per_unit: 2}
            """;

    @Test
    void csvRowsAreExact() throws IOException {
        String log = line(1000, "client_id", "a")
                + line(1001, "client_id", "a")
                + line(1002, "client_id", "a")
                + line(1003, "client_id", "a")
                + line(1500, "client_id", "b")
                + line(1600, "client_id", "a", "username", "bob")
                + line(1700, "client_id", "a", "username", "bob")
                + line(1800, "client_id", "a", "username", "bob")
                + line(2000, "client_id", "a");
        Path config = write("policy.yaml", NESTED);
        int status = run(config, write("log.jsonl", log).toString(), InputStream.nullInputStream(), "--csv");
        assertEquals(0, status, err.toString());
        assertEquals(
                """
                domain,rule,key,requests,allowed,denied
                d,client_id,client_id=a,5,4,1
                d,client_id,client_id=b,1,1,0
                d,client_id.username,"client_id=a,username=bob",3,2,1
                """,
                out.toString(StandardCharsets.UTF_8));
        assertEquals("", err.toString(StandardCharsets.UTF_8));
    }

    /**
     * {@code --csv} alone keeps no requests to read back; with a report (which shows the limits keys needed) and a
     * sweep it reads them back, and prints the same rows.
     */
    @Test
    void csvWithAReportAndASweepStillFindsTheNeededLimits() throws IOException {
        String log = line(1000, "client_id", "a")
                + line(1001, "client_id", "a")
                + line(1002, "client_id", "a")
                + line(1003, "client_id", "a")
                + line(1600, "client_id", "a", "username", "bob")
                + line(1700, "client_id", "a", "username", "bob")
                + line(1800, "client_id", "a", "username", "bob");
        Path config = write("policy.yaml", NESTED);
        String path = write("log.jsonl", log).toString();
        assertEquals(0, run(config, path, InputStream.nullInputStream(), "--csv"), err.toString());
        String alone = out.toString(StandardCharsets.UTF_8);
        out.reset();
        int status = run(config, path, InputStream.nullInputStream(), "--csv", "--report", "client_id=3,4");
        assertEquals(0, status, err.toString());
        assertEquals(alone, out.toString(StandardCharsets.UTF_8));
        String html = Files.readString(dir.resolve("report.html"));
        assertTrue(html.contains("<td>4/second</td>"), "client a needed 4 a second: " + html);
        assertTrue(html.contains("<td>3/minute</td>"), "bob of client a needed 3 a minute: " + html);
        assertTrue(html.contains("<svg class=\"sweep\""), "a sweep chart");
    }

    @Test
    void gzipOnStandardInputGivesTheSameRows() throws IOException {
        String log = line(1000, "client_id", "a")
                + line(1001, "client_id", "a")
                + line(1002, "client_id", "a")
                + line(1003, "client_id", "a");
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (OutputStream o = new GZIPOutputStream(gz)) {
            o.write(log.getBytes(StandardCharsets.UTF_8));
        }
        int status = run(write("policy.yaml", NESTED), "-", new ByteArrayInputStream(gz.toByteArray()), "--csv");
        assertEquals(0, status, err.toString());
        assertEquals(
                "domain,rule,key,requests,allowed,denied\nd,client_id,client_id=a,4,3,1\n",
                out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void csvInputWithTheDomainGivenApart() throws IOException {
        Path log = write("log.txt", "time,client_id,username\n1000,a,\n1001,a,\n1002,a,\n1003,a,\n1004,a,bob\n");
        int status = run(
                write("policy.yaml", NESTED),
                log.toString(),
                InputStream.nullInputStream(),
                "--csv",
                "--csv-input",
                "--domain");
        assertEquals(0, status, err.toString());
        assertEquals(
                "domain,rule,key,requests,allowed,denied\nd,client_id,client_id=a,4,3,1\n"
                        + "d,client_id.username,\"client_id=a,username=bob\",1,1,0\n",
                out.toString(StandardCharsets.UTF_8));
    }

    /**
     * Three per minute; four requests at 0 s, one at 30 s, one at 61 s. Worked by hand per algorithm: the windows and
     * the log refuse the fourth and the one at 30 s and admit the one at 61 s (the sliding tail weighs the previous
     * minute's 3 as floor(3·59/60) = 2); the buckets refill 1.5 permits by 30 s and admit it. The limit needed to
     * refuse none: 5 where the 30 s request shares a window with the first four, 4 for the buckets (4 at once, and
     * 2 refilled by 30 s).
     */
    @Test
    void everyAlgorithmAsWorkedByHand() throws IOException {
        String log = line(0, "k", "v")
                + line(0, "k", "v")
                + line(0, "k", "v")
                + line(0, "k", "v")
                + line(30_000, "k", "v")
                + line(61_000, "k", "v");
        Object[][] cases = {
            {Algorithm.FIXED_WINDOW, 4, 2, 5},
            {Algorithm.SLIDING_LOG, 4, 2, 5},
            {Algorithm.SLIDING_WINDOW_COUNTER, 4, 2, 5},
            {Algorithm.SLIDING_TAIL, 4, 2, 5},
            {Algorithm.TOKEN_BUCKET, 5, 1, 4},
            {Algorithm.LEAKY_BUCKET, 5, 1, 4},
        };
        for (Object[] c : cases) {
            Algorithm a = (Algorithm) c[0];
            Replayer r = replay(
                    "domain: d\nalgorithm: " + a.name().toLowerCase(Locale.ROOT)
                            + "\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 3}\n",
                    log);
            Row row = row(r, "k=v");
            assertEquals(6, row.requests, a.name());
            assertEquals((int) c[1], row.allowed, a.name());
            assertEquals((int) c[2], row.denied, a.name());
            assertEquals((int) c[3], row.needed[0], a.name());
            assertEquals(5, row.peak(0), a.name()); // the minute from 0 s holds five
            r.close();
        }
    }

    @Test
    void modesUnlimitedWildcardsReplacesAndHits() throws IOException {
        String yaml =
                """
                domain: d
                descriptors:
                  - key: client_id
                    rate_limit: {unit: second, requests_per_unit: 5}
                  - key: client_id
                    value: mobile-app
                    rate_limit: {unlimited: true}
                  - key: client_id
                    value: te*
                    rate_limit: {unit: second, requests_per_unit: 1}
                  - key: client_id
                    value: partner
                    mode: dry_run
                    rate_limit: {unit: second, requests_per_unit: 2}
                  - key: client_id
                    value: scraper
                    mode: shadow_ban
                    rate_limit: {unit: second, requests_per_unit: 1}
                  - key: tier
                    rate_limit: {unit: second, requests_per_unit: 1, name: tier}
                  - key: vip
                    rate_limit: {unit: second, requests_per_unit: 100, replaces: [{name: tier}]}
                """;
        StringBuilder log = new StringBuilder();
        for (int i = 0; i < 4; i++) {
            log.append(line(1000 + i, "client_id", "mobile-app"));
            log.append(line(1000 + i, "client_id", "partner"));
            log.append(line(1000 + i, "client_id", "scraper"));
            log.append(line(1000 + i, 2, "client_id", "heavy")); // 2 hits each: 2 of 4 pass 5/s
            log.append(line(1000 + i, "client_id", "test1"));
            log.append(line(1000 + i, "client_id", "test2"));
            // tier is replaced by vip when both are in one request: 4 pass, not 1
            log.append("{\"time\":" + (1000 + i) + ",\"domain\":\"d\",\"descriptors\":[{\"entries\":[{\"key\":\"tier\","
                    + "\"value\":\"gold\"}]},{\"entries\":[{\"key\":\"vip\",\"value\":\"yes\"}]}]}\n");
        }
        Replayer r = replay(yaml, log.toString());
        assertEquals(0, r.badLines());
        assertCounts(r, "client_id=mobile-app", 4, 4, 0, 0, 0);
        assertCounts(r, "client_id=partner", 4, 4, 0, 2, 0);
        assertCounts(r, "client_id=scraper", 4, 4, 0, 0, 3);
        assertCounts(r, "client_id=heavy", 4, 2, 2, 0, 0);
        assertCounts(r, "client_id=test1", 4, 1, 3, 0, 0);
        assertCounts(r, "client_id=test2", 4, 1, 3, 0, 0);
        assertCounts(r, "tier=gold", 4, 4, 0, 0, 0);
        assertCounts(r, "vip=yes", 4, 4, 0, 0, 0);
        assertEquals("client_id_te*", row(r, "client_id=test1").rule.path());
        assertEquals(8, row(r, "client_id=heavy").hits);
        assertEquals(8, row(r, "client_id=heavy").needed[0]); // all 8 hits in one second
        assertEquals(4, row(r, "client_id=partner").needed[0]);
        assertEquals(3, r.shadowBannedRequests);
        assertEquals(2, r.wouldDenyRequests);
        r.close();
    }

    private static void assertCounts(
            Replayer r, String key, long requests, long allowed, long denied, long wouldDeny, long shadowBanned) {
        Row row = row(r, key);
        assertEquals(
                List.of(requests, allowed, denied, wouldDeny, shadowBanned),
                List.of(row.requests, row.allowed, row.denied, row.wouldDeny, row.shadowBanned),
                key);
    }

    /** The bisection against trying every limit from 1 up, on random requests, for every algorithm. */
    @Test
    void theNeededLimitIsTheSmallestThatRefusesNothing() {
        Random random = new Random(33);
        for (Algorithm a : Algorithm.values()) {
            for (int round = 0; round < 15; round++) {
                int n = 1 + random.nextInt(40);
                long[] times = new long[n];
                long[] hits = new long[n];
                long t = random.nextInt(5000);
                for (int i = 0; i < n; i++) {
                    t += random.nextInt(4) == 0 ? random.nextInt(3000) : random.nextInt(50);
                    times[i] = t;
                    hits[i] = 1 + (random.nextInt(5) == 0 ? random.nextInt(3) : 0);
                }
                Duration w = Duration.ofMillis(500 + random.nextInt(2000));
                long found = NeededLimit.of(a, w, times, hits, n);
                long brute = 1;
                while (brute < 1000 && (brute < max(hits) || !NeededLimit.admitsAll(a, w, brute, times, hits, n))) {
                    brute++;
                }
                assertEquals(brute, found, a + " round " + round);
                for (long l = found; l < found + 5; l++) { // and every larger limit admits all too
                    assertTrue(NeededLimit.admitsAll(a, w, l, times, hits, n), a + " at " + l);
                }
            }
        }
    }

    private static long max(long[] a) {
        long m = 0;
        for (long x : a) {
            m = Math.max(m, x);
        }
        return m;
    }

    @Test
    void theSweepCountsKeysAndRequestsRefusedPerCandidate() throws IOException {
        StringBuilder log = new StringBuilder();
        int[] requests = {1, 5, 10};
        for (int k = 0; k < requests.length; k++) {
            for (int i = 0; i < requests[k]; i++) {
                log.append(line(1000 + i, "client_id", "c" + k));
            }
        }
        Path config = write("policy.yaml", NESTED);
        int status = run(
                config,
                write("log.jsonl", log.toString()).toString(),
                InputStream.nullInputStream(),
                "client_id=1,5,10",
                "--report");
        assertEquals(0, status, err.toString());
        String summary = out.toString(StandardCharsets.UTF_8);
        List<String> lines = summary.lines().toList();
        for (String row : List.of(
                "limit +keys refused +requests refused", "1/second +2 +13", "5/second +1 +5", "10/second +0 +0")) {
            assertTrue(lines.stream().anyMatch(l -> l.matches(" +" + row)), row + " in\n" + summary);
        }
        assertTrue(summary.contains("client_id=c2"), summary);
        String html = Files.readString(dir.resolve("report.html"));
        assertTrue(html.contains("<svg class=\"time\""), "a time chart");
        assertTrue(html.contains("<svg class=\"sweep\""), "a sweep chart");
        assertFalse(html.contains("src=") || html.contains("href="), "nothing fetched");
    }

    @Test
    void badLinesAreReportedAndStrictStopsAtTheFirst() throws IOException {
        String log = line(1000, "client_id", "a") + "{broken\n"
                + line(1001, "client_id", "a").replace("\"d\"", "\"x\"")
                + line(900, "client_id", "a").replace("\"time\":900,", "") + line(1002, "client_id", "a");
        Path config = write("policy.yaml", NESTED);
        Path file = write("log.jsonl", log);
        assertEquals(0, run(config, file.toString(), InputStream.nullInputStream(), "--csv"));
        assertEquals(
                "domain,rule,key,requests,allowed,denied\nd,client_id,client_id=a,2,2,0\n",
                out.toString(StandardCharsets.UTF_8));
        assertEquals(
                """
                replay: 3 bad line(s) not replayed (malformed 1, missing time 1, unknown domain 1); each:
                  line 2: malformed: not a JSON request: expected '"' at byte 2, found 'b': {broken
                  line 3: unknown domain: the configuration defines no domain 'x': %s
                  line 4: missing time: no "time" (epoch ms or ISO-8601): %s
                """
                        .formatted(
                                line(1001, "client_id", "a")
                                        .replace("\"d\"", "\"x\"")
                                        .strip(),
                                line(900, "client_id", "a")
                                        .replace("\"time\":900,", "")
                                        .strip()),
                err.toString(StandardCharsets.UTF_8));
        out.reset();
        err.reset();
        assertEquals(1, run(config, file.toString(), InputStream.nullInputStream(), "--csv", "--strict"));
        assertEquals("", out.toString(StandardCharsets.UTF_8));
        assertEquals(
                "replay: line 2: malformed: not a JSON request: expected '\"' at byte 2, found 'b': {broken\n"
                        + "replay: stopped at the first bad line (--strict)\n",
                err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void theSummaryNamesTheTopKeysAndTheLimitTheyNeeded() throws IOException {
        StringBuilder log = new StringBuilder();
        for (int i = 0; i < 7; i++) {
            log.append(line(1000 + i, "client_id", "storm"));
        }
        log.append(line(1000, "client_id", "quiet"));
        List<String> lines = new ArrayList<>();
        Path config = write("policy.yaml", NESTED);
        assertEquals(0, run(config, write("log.jsonl", log.toString()).toString(), InputStream.nullInputStream()));
        lines.addAll(out.toString(StandardCharsets.UTF_8).lines().toList());
        assertTrue(lines.contains("d client_id: 3/second fixed_window"), String.join("\n", lines));
        assertTrue(
                lines.stream()
                        .anyMatch(l ->
                                l.matches("\\s+client_id=storm\\s+7\\s+3\\s+4\\s+7/second \\(233%\\)\\s+7/second")),
                String.join("\n", lines));
        assertTrue(lines.contains("rules no request reached: d.client_id.username"), String.join("\n", lines));
    }

    /**
     * The requests decided on several threads give the rows one thread gives, byte for byte, under configurations that
     * split (per client, per user of a client, dry run, several limits, a trusted client) and that do not (a global
     * limit, a wildcard shared across values), and when a request joins two clients' counters.
     */
    @Test
    void severalThreadsAnswerAsOneDoes() throws IOException {
        String perClient =
                """
                domain: d
                algorithm: sliding_tail
                descriptors:
                  - key: client_id
                    rate_limit: {unit: second, requests_per_unit: 5}
                    descriptors:
                      - key: username
                        rate_limits:
                          - {unit: second, requests_per_unit: 2}
                          - {unit: minute, requests_per_unit: 20, algorithm: token_bucket}
                  - key: client_id
                    value: c1
                    mode: dry_run
                    rate_limit: {unit: second, requests_per_unit: 3}
                  - key: client_id
                    value: c2
                    rate_limit: {unlimited: true}
                  - key: generic_key
                    value: global
                """;
        String global = perClient.replace(
                "  - key: generic_key\n    value: global\n",
                "  - key: generic_key\n    value: global\n    rate_limit: {unit: second, requests_per_unit: 40}\n");
        String shared =
                """
                domain: d
                descriptors:
                  - key: client_id
                    rate_limit: {unit: second, requests_per_unit: 5}
                  - key: client_id
                    value: c1*
                    share_threshold: true
                    rate_limit: {unit: second, requests_per_unit: 8}
                """;
        Random random = new Random(33);
        StringBuilder plain = new StringBuilder();
        StringBuilder withGlobal = new StringBuilder();
        long t = 1_795_780_800_000L;
        for (int i = 0; i < 6000; i++) {
            t += random.nextInt(4);
            String client = "c" + (random.nextInt(3) == 0 ? random.nextInt(3) : random.nextInt(40));
            String[] entries = random.nextInt(10) < 3
                    ? new String[] {"client_id", client, "username", "u" + random.nextInt(5)}
                    : new String[] {"client_id", client};
            String one = line(t, entries);
            plain.append(one);
            withGlobal.append(one.replace("]}]", "]},{\"entries\":[{\"key\":\"generic_key\",\"value\":\"global\"}]}]"));
        }
        Partitions four = Partitions.of(Policies.parse("test.yaml", perClient), 4, false);
        String other = java.util.stream.IntStream.range(4, 40)
                .mapToObj(i -> "c" + i)
                .filter(v -> four.part(v) != four.part("c3"))
                .findFirst()
                .orElseThrow();
        String joined = plain
                + ("{\"time\":" + (t + 1) + ",\"domain\":\"d\",\"descriptors\":["
                        + "{\"entries\":[{\"key\":\"client_id\",\"value\":\"c3\"}]},"
                        + "{\"entries\":[{\"key\":\"client_id\",\"value\":\"" + other + "\"}]}]}\n");
        Object[][] cases = {
            {perClient, plain.toString(), "decided on 4 threads, the requests split by the value of client_id"},
            {perClient, withGlobal.toString(), "decided on 4 threads, the requests split by the value of client_id"},
            {global, withGlobal.toString(), "decided on one thread: no descriptor key of domain d is on the path of"},
            {shared, plain.toString(), "decided on one thread: no descriptor key of domain d is on the path of"},
            {perClient, joined, "decided on one thread: line 6001 joins client_id=c3 and client_id=" + other + " in one"
            },
        };
        for (int c = 0; c < cases.length; c++) {
            Path config = write("policy-" + c + ".yaml", (String) cases[c][0]);
            Path log = write("log-" + c + ".jsonl", (String) cases[c][1]);
            threads = 1;
            assertEquals(0, run(config, log.toString(), InputStream.nullInputStream(), "--csv"), err.toString());
            String one = out.toString(StandardCharsets.UTF_8);
            out.reset();
            threads = 4;
            assertEquals(0, run(config, log.toString(), InputStream.nullInputStream(), "--csv"), err.toString());
            assertEquals(one, out.toString(StandardCharsets.UTF_8), "case " + c);
            assertTrue(one.lines().count() > 40 && one.lines().anyMatch(l -> !l.endsWith(",0")), one);
            out.reset();
            assertEquals(0, run(config, log.toString(), InputStream.nullInputStream()), err.toString());
            String summary = out.toString(StandardCharsets.UTF_8);
            assertTrue(summary.contains((String) cases[c][2]), "case " + c + ":\n" + summary);
            out.reset();
        }
    }
}
