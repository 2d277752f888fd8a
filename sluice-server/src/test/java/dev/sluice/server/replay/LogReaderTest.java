package dev.sluice.server.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.policy.Descriptor;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogReaderTest {
    @TempDir
    Path dir;

    private final List<BadLine> bad = new ArrayList<>();

    private static String json(long time, String client) {
        return "{\"time\":" + time
                + ",\"domain\":\"oauth-token\",\"descriptors\":[{\"entries\":[{\"key\":\"client_id\"," + "\"value\":\""
                + client + "\"}]}]}";
    }

    private List<TimedRequest> read(LogReader.Builder b) throws IOException {
        List<TimedRequest> out = new ArrayList<>();
        try (LogReader r = b.onBadLine(bad::add).open()) {
            for (TimedRequest t; (t = r.next()) != null; ) {
                out.add(t);
            }
        }
        return out;
    }

    private List<TimedRequest> readJson(String text) throws IOException {
        return read(LogReader.builder(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), "-"));
    }

    @Test
    void readsTheJsonShapeOfTheService() throws IOException {
        List<TimedRequest> r = readJson(json(1000, "abc") + "\n"
                + "{ \"domain\" : \"d\", \"hits_addend\": 3, \"descriptors\": [ {\"entries\": [{\"value\": \"bob\", "
                + "\"key\": \"username\"}, {\"key\":\"k\"}], \"hitsAddend\": \"7\"}, {\"entries\":[{\"key\":\"x\","
                + "\"value\":\"a\\\"\\u00e9\\ud83d\\ude00\"}], \"other\": [1, {\"a\": null}]}], \"time\": "
                + "\"2026-11-27T14:00:00.25+01:00\"}\r\n"
                + "\n");
        assertEquals(List.of(), bad);
        assertEquals(2, r.size());
        TimedRequest a = r.get(0);
        assertEquals(1000, a.timeMillis());
        assertEquals("oauth-token", a.domain());
        assertEquals(List.of(Descriptor.of("client_id", "abc")), a.descriptors());
        assertTrue(a.uniformHits());
        assertEquals(1, a.hits());
        assertEquals(1, a.line());
        TimedRequest b = r.get(1);
        assertEquals(java.time.Instant.parse("2026-11-27T13:00:00.250Z").toEpochMilli(), b.timeMillis());
        assertEquals(
                List.of(Descriptor.of("username", "bob", "k", ""), Descriptor.of("x", "a\"é\uD83D\uDE00")),
                b.descriptors());
        assertEquals(7, b.hits(0));
        assertEquals(3, b.hits(1));
        assertEquals(2, b.line());
    }

    @Test
    void anEqualDescriptorIsTheSameObject() throws IOException {
        List<TimedRequest> r = readJson(json(1, "abc") + "\n" + json(2, "abc") + "\n" + json(3, "abd") + "\n");
        assertSame(r.get(0).descriptors(), r.get(1).descriptors());
        assertFalse(r.get(0).descriptors().equals(r.get(2).descriptors()));
    }

    @Test
    void timesInEveryForm() throws IOException {
        String[] times = {
            "1795788000250",
            "\"1795788000250\"",
            "\"2026-11-27T14:00:00.250Z\"",
            "\"2026-11-27 14:00:00.25Z\"",
            "\"2026-11-27T15:00:00.250+01:00\"",
            "\"2026-11-27T13:00:00.250-0100\"",
            "\"2026-11-27T14:00:00.250000Z\""
        };
        StringBuilder log = new StringBuilder();
        for (String t : times) {
            log.append("{\"time\":")
                    .append(t)
                    .append(",\"domain\":\"d\",\"descriptors\":[{\"entries\":[{\"key\":\"k\","
                            + "\"value\":\"v\"}]}]}\n");
        }
        List<TimedRequest> r = readJson(log.toString());
        assertEquals(List.of(), bad);
        for (TimedRequest t : r) {
            assertEquals(1795788000250L, t.timeMillis(), t.toString());
        }
        assertEquals(
                Times.epochDay(2024, 2, 29), java.time.LocalDate.of(2024, 2, 29).toEpochDay());
        assertEquals(Times.epochDay(1969, 12, 31), -1);
    }

    @Test
    void badLinesAreReportedWithTheirNumbersAndTheirProblem() throws IOException {
        List<TimedRequest> r = readJson(json(1000, "a") + "\n"
                + "not json\n"
                + "{\"domain\":\"d\",\"descriptors\":[{\"entries\":[{\"key\":\"k\",\"value\":\"v\"}]}]}\n"
                + "{\"time\":\"yesterday\",\"domain\":\"d\",\"descriptors\":[{\"entries\":[{\"key\":\"k\",\"value\":\"v\"}]}]}\n"
                + "{\"time\":5,\"domain\":\"\",\"descriptors\":[{\"entries\":[{\"key\":\"k\",\"value\":\"v\"}]}]}\n"
                + "{\"time\":5,\"domain\":\"d\",\"descriptors\":[]}\n"
                + "{\"time\":5,\"domain\":\"d\",\"descriptors\":[{\"entries\":[{\"key\":\"\",\"value\":\"v\"}]}]}\n"
                + "{\"time\":5,\"domain\":\"d\",\"descriptors\":[{\"entries\":[{\"key\":\"k\"}],\"hits_addend\":0}]}\n"
                + json(1000, "b") + " trailing\n"
                + json(1001, "c") + "\n");
        assertEquals(2, r.size());
        List<String> got = bad.stream()
                .map(b -> b.line() + " " + b.problem() + " " + b.message())
                .toList();
        assertEquals(
                List.of(
                        "2 MALFORMED not a JSON request: expected '{' at byte 1, found 'n'",
                        "3 MISSING_TIME no \"time\" (epoch ms or ISO-8601)",
                        "4 MISSING_TIME time 'yesterday' is neither epoch milliseconds nor ISO-8601 with a zone"
                                + " (2026-11-27T14:00:00.250Z)",
                        "5 MALFORMED rate limit domain must not be empty",
                        "6 MALFORMED rate limit descriptor list must not be empty",
                        "7 MALFORMED descriptors[0].entries[0].key must not be empty",
                        "8 MALFORMED descriptors[0].hits_addend is 0 (check without counting), which this service does"
                                + " not support: leave it unset or give at least 1",
                        "9 MALFORMED text after the request's closing brace at byte 99"),
                got);
        assertEquals("not json", bad.get(0).text());
    }

    @Test
    void aMissingSeparatorOrAnEmptyObjectOrArrayIsNamedWhereItIs() throws IOException {
        String entry = "{\"key\":\"k\",\"value\":\"v\"}";
        List<TimedRequest> r = readJson("{\"time\":5 \"domain\":\"d\"}\n"
                + "{\"time\":5,\"domain\":\"d\",\"descriptors\":[{\"entries\":[" + entry + "]} {}]}\n"
                + "{\"time\":5,\"domain\":\"d\",\"descriptors\":[{\"entries\":[" + entry + " " + entry + "]}]}\n"
                + "{\"time\":5,\"domain\":\"d\",\"descriptors\":[{\"entries\":[{\"key\":\"k\" \"value\":\"v\"}]}]}\n"
                + "{\"time\":5,\"domain\":\"d\",\"descriptors\":[{\"entries\":[" + entry + "] \"x\":1}]}\n"
                + "{\"time\":5,\"domain\":\"d\",\"descriptors\":[{\"entries\":[" + entry + "]}],\"x\":[1 2]}\n"
                + "{\"time\":5,\"domain\":\"d\",\"descriptors\":[{\"entries\":[" + entry + "]}],\"x\":{\"a\":1,}}\n"
                + "{\"time\":5,\"domain\":\"d\",\n"
                + "{\"time\":5,\"domain\":\"d\",\"descriptors\":[{\"entries\":[]}]}\n"
                + "{\"time\":5,\"domain\":\"d\",\"descriptors\":[{}]}\n"
                + "{\"time\":5,\"domain\":\"d\",\"descriptors\":[{\"entries\":[{}]}]}\n"
                + "{}\n"
                + "{ \"time\" : 5 , \"x\" : { } , \"y\" : [ ] , \"z\" : [ { \"a\" : [ [ ] , { } ] } ] , \"domain\" : "
                + "\"d\" , \"descriptors\" : [ { \"entries\" : [ { \"key\" : \"k\" , \"value\" : \"v\" } , "
                + "{ \"key\" : \"j\" } ] } , { \"entries\" : [ { \"key\" : \"k\" } ] } ] }\n");
        List<String> got = bad.stream().map(b -> b.line() + " " + b.message()).toList();
        assertEquals(
                List.of(
                        "1 not a JSON request: expected ',' or '}' at byte 11, found '\"'",
                        "2 not a JSON request: expected ',' or ']' at byte 77, found '{'",
                        "3 not a JSON request: expected ',' or ']' at byte 75, found '{'",
                        "4 not a JSON request: expected ',' or '}' at byte 62, found '\"'",
                        "5 not a JSON request: expected ',' or '}' at byte 76, found '\"'",
                        "6 not a JSON request: expected ',' or ']' at byte 85, found '2'",
                        "7 not a JSON request: expected '\"' at byte 89, found '}'",
                        "8 not a JSON request: expected '\"' at byte 23, found the end of the line",
                        "9 descriptors[0] has no entries: give at least one key and value",
                        "10 descriptors[0] has no entries: give at least one key and value",
                        "11 descriptors[0].entries[0].key must not be empty",
                        "12 no \"time\" (epoch ms or ISO-8601)"),
                got);
        assertEquals(1, r.size(), "the spaced-out line is read");
        assertEquals(
                List.of(Descriptor.of("k", "v", "j", ""), Descriptor.of("k", "")),
                r.get(0).descriptors());
    }

    @Test
    void aFieldNestedDeeperThanTheReaderGoesIsABadLineNotAStackOverflow() throws IOException {
        String deep = "[".repeat(100_000) + "]".repeat(100_000);
        List<TimedRequest> r = readJson("{\"time\":5,\"x\":" + deep + ",\"domain\":\"d\"}\n"
                + "{\"time\":5,\"x\":{\"a\":" + "{\"a\":".repeat(50_000) + "1" + "}".repeat(50_001) + "}\n"
                + json(1000, "a") + "\n");
        assertEquals(1, r.size());
        assertEquals(
                List.of("1 nested more than 64 deep", "2 nested more than 64 deep"),
                bad.stream().map(b -> b.line() + " " + b.message()).toList());
    }

    @Test
    void aTimeALimitersClockCannotReadIsABadLineNamingIt() throws IOException {
        List<TimedRequest> r = readJson(json(9_223_372_036_854L, "last") + "\n"
                + json(9_223_372_036_855L, "past") + "\n"
                + json(0, "x").replace("\"time\":0", "\"time\":\"2263-01-01T00:00:00Z\"") + "\n"
                + json(0, "x").replace("\"time\":0", "\"time\":\"1600-01-01 00:00:00+00:00\"") + "\n"
                + json(0, "x").replace("\"time\":0", "\"time\":\"+10000-01-01T00:00:00Z\"") + "\n");
        assertEquals(1, r.size());
        assertEquals(9_223_372_036_854L, r.get(0).timeMillis());
        String range = ", the times a limiter's clock reads";
        assertEquals(
                List.of(
                        "2 time 9223372036855 is outside 1677-09-21T00:12:43.146Z to 2262-04-11T23:47:16.854Z" + range,
                        "3 time 2263-01-01T00:00:00Z is outside 1677-09-21T00:12:43.146Z to 2262-04-11T23:47:16.854Z"
                                + range,
                        "4 time 1600-01-01 00:00:00+00:00 is outside 1677-09-21T00:12:43.146Z to"
                                + " 2262-04-11T23:47:16.854Z" + range,
                        "5 time +10000-01-01T00:00:00Z is outside 1677-09-21T00:12:43.146Z to"
                                + " 2262-04-11T23:47:16.854Z" + range),
                bad.stream().map(b -> b.line() + " " + b.message()).toList());
    }

    @Test
    void unknownDomainsAreBadLines() throws IOException {
        List<TimedRequest> r = read(LogReader.builder(
                        new ByteArrayInputStream(
                                (json(1, "a") + "\n" + json(2, "b").replace("oauth-token", "other"))
                                        .getBytes(StandardCharsets.UTF_8)),
                        "-")
                .knownDomains(Set.of("oauth-token")::contains));
        assertEquals(1, r.size());
        assertEquals(BadLine.Problem.UNKNOWN_DOMAIN, bad.get(0).problem());
        assertEquals(2, bad.get(0).line());
    }

    @Test
    void rawUtf8IsReadAndBytesThatAreNotUtf8AreBadLines() throws IOException {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        log.writeBytes((json(1, "café-\uD83D\uDE00") + "\n").getBytes(StandardCharsets.UTF_8)); // raw, not escaped
        log.writeBytes((json(2, "plain") + "\n").getBytes(StandardCharsets.UTF_8));
        byte[] badValue = (json(3, "x\u00ffy") + "\n").getBytes(StandardCharsets.ISO_8859_1); // a lone 0xFF byte
        log.writeBytes(badValue);
        log.writeBytes((json(4, "k").replace("client_id", "cl\u00e9") + "\n").getBytes(StandardCharsets.ISO_8859_1));
        log.writeBytes((json(5, "d").replace("oauth-token", "\u00e9") + "\n").getBytes(StandardCharsets.ISO_8859_1));
        log.writeBytes((json(6, "café-\uD83D\uDE00") + "\n").getBytes(StandardCharsets.UTF_8)); // seen before
        List<TimedRequest> r = read(LogReader.builder(new ByteArrayInputStream(log.toByteArray()), "-"));
        assertEquals(
                List.of("café-\uD83D\uDE00", "plain", "café-\uD83D\uDE00"),
                r.stream()
                        .map(t -> t.descriptors().get(0).entries().get(0).value())
                        .toList());
        assertSame(r.get(0).descriptors().get(0), r.get(2).descriptors().get(0));
        assertEquals(
                List.of(
                        "3 MALFORMED a descriptor value is not valid UTF-8",
                        "4 MALFORMED a descriptor key is not valid UTF-8",
                        "5 MALFORMED the domain is not valid UTF-8"),
                bad.stream()
                        .map(b -> b.line() + " " + b.problem() + " " + b.message())
                        .toList());
    }

    @Test
    void linesAreReorderedWithinTheWindowAndReportedBeyondIt() throws IOException {
        String log = json(10_000, "a") + "\n" + json(12_000, "b") + "\n" + json(9_000, "c") + "\n" // 3 s late: kept
                + json(20_000, "d") + "\n" + json(11_000, "e") + "\n" // 9 s late: out of order
                + json(20_000, "f") + "\n" + json(17_000, "g") + "\n";
        List<TimedRequest> r =
                read(LogReader.builder(new ByteArrayInputStream(log.getBytes(StandardCharsets.UTF_8)), "-")
                        .reorderWindow(Duration.ofSeconds(5)));
        assertEquals(
                List.of("c", "a", "b", "g", "d", "f"),
                r.stream()
                        .map(t -> t.descriptors().get(0).entries().get(0).value())
                        .toList());
        assertEquals(1, bad.size());
        assertEquals(5, bad.get(0).line());
        assertEquals(BadLine.Problem.OUT_OF_ORDER, bad.get(0).problem());
    }

    @Test
    void csvWithADomainOptionGzippedFromAFile() throws IOException {
        Path file = dir.resolve("log.csv.gz");
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(file))) {
            out.write(("time,client_id,username,hits\n"
                            + "1000,abc,,\n"
                            + "2026-11-27T14:00:00Z,abc,\"bo,b\",2\n"
                            + "1001,,,\n"
                            + "1002,abc\n")
                    .getBytes(StandardCharsets.UTF_8));
        }
        List<TimedRequest> r =
                read(LogReader.builder(file).domain("oauth-token").reorderWindow(Duration.ZERO));
        assertEquals(2, r.size());
        assertEquals(List.of(Descriptor.of("client_id", "abc")), r.get(0).descriptors());
        assertEquals(
                List.of(Descriptor.of("client_id", "abc", "username", "bo,b")),
                r.get(1).descriptors());
        assertEquals(2, r.get(1).hits());
        assertEquals("oauth-token", r.get(1).domain());
        assertEquals(3, r.get(1).line());
        assertEquals(List.of(4L, 5L), bad.stream().map(BadLine::line).toList());
        assertEquals("no descriptor key has a value", bad.get(0).message());
        assertEquals("2 fields, but the header names 4 columns", bad.get(1).message());
    }

    @Test
    void csvWithADomainColumn() throws IOException {
        List<TimedRequest> r = read(LogReader.builder(
                        new ByteArrayInputStream(
                                "domain,time,client_id\nd1,5,a\nd2,6,b\n".getBytes(StandardCharsets.UTF_8)),
                        "-")
                .format(LogReader.Format.CSV));
        assertEquals(List.of("d1", "d2"), r.stream().map(TimedRequest::domain).toList());
    }

    @Test
    void aCsvLogWithoutDomainOrTimeIsRefusedAtItsHeader() {
        IOException e = assertThrows(
                IOException.class,
                () -> read(LogReader.builder(
                        new ByteArrayInputStream("time,client_id\n5,a\n".getBytes(StandardCharsets.UTF_8)), "x.csv")));
        assertEquals(
                "x.csv:1: CSV header [time, client_id] has no 'domain' column: name the domain of every line with"
                        + " --domain",
                e.getMessage());
        e = assertThrows(
                IOException.class,
                () -> read(LogReader.builder(
                                new ByteArrayInputStream("when,client_id\n5,a\n".getBytes(StandardCharsets.UTF_8)),
                                "x.csv")
                        .domain("d")));
        assertEquals("x.csv:1: CSV header [when, client_id] has no 'time' column", e.getMessage());
    }

    @Test
    void longLinesAcrossBlocksAndAnOverlongLine() throws IOException {
        StringBuilder log = new StringBuilder();
        String pad = "x".repeat(5000);
        for (int i = 0; i < 400; i++) { // about 2 MB: lines cross the reader's blocks
            log.append(json(i, "c" + i).replace("{\"time\"", "{\"pad\":\"" + pad + "\",\"time\""))
                    .append('\n');
        }
        log.append("{\"pad\":\"").append("y".repeat(LogReader.MAX_LINE_BYTES)).append("\"}\n");
        log.append(json(400, "last")); // no newline at the end
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.writeBytes(log.toString().getBytes(StandardCharsets.UTF_8));
        List<TimedRequest> r = read(LogReader.builder(new ByteArrayInputStream(bytes.toByteArray()), "-"));
        assertEquals(401, r.size());
        assertEquals("c399", r.get(399).descriptors().get(0).entries().get(0).value());
        assertEquals(402, r.get(400).line());
        assertEquals(1, bad.size());
        assertEquals(401, bad.get(0).line());
        assertTrue(bad.get(0).message().startsWith("the line is "), bad.get(0).message());
    }

    @Test
    void anEmptyLog() throws IOException {
        assertNull(LogReader.builder(new ByteArrayInputStream(new byte[0]), "-")
                .open()
                .next());
    }
}
