package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The many distinct users on a day-long rule ({@code unit: day}, keyed per user), against the in-memory store's
 * bound on keys ({@code --memory-max-keys}): the users up to the bound are decided, every request with a new user past
 * it is refused ({@code OVER_LIMIT}, never let through), a user held keeps its count, and memory and the output of
 * {@code /metrics} and {@code /dashboard/data} stay bounded. It prints the live heap after a full collection, the
 * peak resident memory and the two pages' sizes.
 *
 * <p>CI sends {@link #USERS} users (2,000) with a bound of three in four as many, so that the bound is passed within a
 * request (which once made that request start again for ever), and measures no
 * heap. The 2,000,000 users at the default bound (one key per KiB of the heap, 262,144 at -Xmx256m):
 * {@code -Dsluice.it.day-users=2000000 -Dsluice.it.day-max-keys=0}; the figures are in {@code docs/benchmarks.md}.
 */
class DayLongRuleIT {
    static final int USERS = Integer.getInteger("sluice.it.day-users", 2_000);

    /** Whether to measure the live heap (two full collections by {@code jcmd}): in a run sized by hand only. */
    static final boolean MEASURE_HEAP = System.getProperty("sluice.it.day-users") != null;

    /** {@code --memory-max-keys}; 0: the option not given, its default. */
    static final int MAX_KEYS = Integer.getInteger("sluice.it.day-max-keys", USERS * 3 / 4);

    /** Users a request: {@code --max-descriptors 1000}. */
    static final int PER_REQUEST = 1000;

    @TempDir
    static Path dir;

    @Test
    void manyUsersOnADayLongRule() throws Exception {
        Files.writeString(
                dir.resolve("day.yaml"),
                """
                domain: day
                descriptors:
                  - key: user
                    rate_limit: {unit: day, requests_per_unit: 2}
                """);
        List<String> args = new ArrayList<>(
                List.of("--config", dir.toString(), "--max-descriptors", Integer.toString(PER_REQUEST)));
        if (MAX_KEYS > 0) {
            args.addAll(List.of("--memory-max-keys", Integer.toString(MAX_KEYS)));
        }
        try (ServerProcess p = ServerProcess.serve(args.toArray(String[]::new))) {
            long heapBefore = MEASURE_HEAP ? liveHeap(p) : -1;
            List<Code> answers = new ArrayList<>();
            long started = System.nanoTime();
            long slowest = 0;
            int slowestAt = 0;
            for (int from = 0; from < USERS; from += PER_REQUEST) {
                RateLimitRequest.Builder b = RateLimitRequest.newBuilder().setDomain("day");
                for (int u = from; u < Math.min(USERS, from + PER_REQUEST); u++) {
                    b.addDescriptors(descriptor("user", "user-" + u));
                }
                // one request at a time: the order of arrival decides which users the bound holds
                long asked = System.nanoTime();
                answers.add(p.grpc()
                        .withDeadlineAfter(60, TimeUnit.SECONDS)
                        .shouldRateLimit(b.build())
                        .getOverallCode());
                long took = System.nanoTime() - asked;
                if (took > slowest) {
                    slowest = took;
                    slowestAt = from;
                }
            }
            long sent = System.nanoTime() - started;
            long ok = answers.stream().filter(c -> c == Code.OK).count();
            long refused = answers.stream().filter(c -> c == Code.OVER_LIMIT).count();
            assertEquals(answers.size(), ok + refused, "answers: " + answers);

            // A user held is decided on: its second request of the day passes, its third does not.
            assertEquals(
                    Code.OK,
                    p.shouldRateLimit(request("day", descriptor("user", "user-0")))
                            .getOverallCode());
            assertEquals(
                    Code.OVER_LIMIT,
                    p.shouldRateLimit(request("day", descriptor("user", "user-0")))
                            .getOverallCode());
            // The room the refused requests left (the bound less the users held) takes that many new users at once.
            int room = MAX_KEYS > 0 ? MAX_KEYS - (int) ok * PER_REQUEST : 0;
            if (room > 0) {
                RateLimitRequest.Builder b = RateLimitRequest.newBuilder().setDomain("day");
                for (int u = 0; u < room; u++) {
                    b.addDescriptors(descriptor("user", "filler-" + u));
                }
                assertEquals(Code.OK, p.shouldRateLimit(b.build()).getOverallCode(), "the last " + room + " slots");
            }
            // A new user, with the bound reached: refused, not let through.
            RateLimitResponse fresh = p.shouldRateLimit(request("day", descriptor("user", "a-new-user")));
            HttpResponse<String> metrics = p.get("/metrics");
            HttpResponse<String> data = p.get("/dashboard/data");
            long heapAfter = MEASURE_HEAP ? liveHeap(p) : -1;
            long rss = HostileInputIT.peakRss(p);
            System.out.printf(
                    "%,d users on a day-long rule, --memory-max-keys %s: %d requests of %d users decided OK, %d"
                            + " OVER_LIMIT, in %d ms (the slowest request %d ms, from user %,d); a new user after them: %s; live heap after a full collection"
                            + " %,d KiB before, %,d KiB after (-1: not measured); peak RSS %d MiB; /metrics %,d bytes,"
                            + " /dashboard/data"
                            + " %,d bytes%n",
                    USERS,
                    MAX_KEYS > 0 ? Integer.toString(MAX_KEYS) : "default",
                    ok,
                    PER_REQUEST,
                    refused,
                    sent / 1_000_000,
                    slowest / 1_000_000,
                    slowestAt,
                    fresh.getOverallCode(),
                    heapBefore >> 10,
                    heapAfter >> 10,
                    rss >> 20,
                    metrics.body().getBytes(StandardCharsets.UTF_8).length,
                    data.body().getBytes(StandardCharsets.UTF_8).length);
            if (MAX_KEYS > 0 && MAX_KEYS < USERS) {
                // Every request wholly under the bound was decided OK; past it, a request with a new user is refused.
                assertEquals(MAX_KEYS / PER_REQUEST, ok, "answers: " + answers);
                assertEquals(Code.OVER_LIMIT, fresh.getOverallCode(), "a new user past the bound");
            }
            assertEquals(200, metrics.statusCode());
            assertEquals(200, data.statusCode());
            assertTrue(metrics.body().length() < 1 << 20, metrics.body().length() + " bytes of /metrics");
            assertTrue(data.body().length() < 1 << 20, data.body().length() + " bytes of /dashboard/data");
            assertTrue(rss < HostileInputIT.MAX_RSS_BYTES, "peak RSS " + (rss >> 20) + " MiB");
        }
    }

    /** The live heap of {@code p} after a full collection, by {@code jcmd}: G1's heap, or Serial's generations. */
    static long liveHeap(ServerProcess p) throws IOException, InterruptedException {
        String pid = Long.toString(p.process().pid());
        jcmd(pid, "GC.run");
        String info = jcmd(pid, "GC.heap_info");
        Pattern used = Pattern.compile("used (\\d+)K");
        long kib = 0;
        for (String line : info.lines().toList()) {
            if (line.contains("garbage-first heap") || line.contains("generation")) {
                Matcher m = used.matcher(line);
                if (m.find()) {
                    kib += Long.parseLong(m.group(1));
                }
                if (line.contains("garbage-first heap")) {
                    break;
                }
            }
        }
        assertTrue(kib > 0, "no heap in: " + info);
        return kib << 10;
    }

    static String jcmd(String pid, String command) throws IOException, InterruptedException {
        Process jcmd = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), pid, command)
                .redirectErrorStream(true)
                .start();
        String out = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(jcmd.waitFor(60, TimeUnit.SECONDS), "jcmd " + command + " still running");
        return out;
    }
}
