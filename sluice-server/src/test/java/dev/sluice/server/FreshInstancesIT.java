package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.server.RedisServers;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Fresh {@code serve} processes on one Redis, with the production store timeout (15 ms), started together and, once
 * each says it listens (it is ready then: its store path has answered), hit at once: a fresh JVM's first calls must not
 * turn into {@code on_store_failure: allow} answers that admit over the limit. Exact mode and leased mode; and, in
 * exact mode, an instance replaced by a fresh one in the middle of traffic.
 *
 * <p>The assertion is the same on a quiet and a busy machine: every request admitted over the limit is one the store
 * did not decide in time, answered by the domain's {@code on_store_failure: allow} and counted in
 * {@code sluice_policy_store_failures_total}; when none was (a quiet machine), exactly the limit is admitted. Each test
 * prints how many such answers it saw.
 *
 * <p>CI runs two instances. {@code -Dsluice.it.instances=5} runs five (heavy on two cores: five JVMs starting at
 * once); {@code -Dsluice.it.stress=true} runs {@code stress-ng --cpu 2} on the machine during the whole class, to see
 * the accounting hold when every process fights for the CPU (see docs/benchmarks.md).
 */
class FreshInstancesIT {
    static final int INSTANCES = Integer.getInteger("sluice.it.instances", 2);
    static final boolean STRESS = Boolean.getBoolean("sluice.it.stress");
    static final int LIMIT = 50;
    static final int OFFERED = 200;
    static final int CLIENTS = 32;

    static Process stress;
    static Path dir;

    @BeforeAll
    static void config() throws IOException {
        dir = Files.createTempDirectory("fresh-instances");
        Files.writeString(
                dir.resolve("fresh.yaml"),
                "domain: fresh\ndescriptors:\n  - key: k\n    rate_limit: {unit: day, requests_per_unit: " + LIMIT
                        + "}\n");
        if (STRESS) {
            stress = new ProcessBuilder("stress-ng", "--cpu", "2", "--timeout", "600s", "--quiet")
                    .inheritIO()
                    .start();
        }
    }

    @AfterAll
    static void stopStress() throws InterruptedException {
        if (stress != null) {
            stress.destroy();
            stress.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /**
     * Exact mode: fresh instances hit at once; then, on a new key, traffic over the same instances with one of them
     * replaced by a fresh one midway (its first calls made while requests flow). The class shares its processes this
     * way to keep CI short: each JVM start costs seconds on a busy machine.
     */
    @Test
    void exactModeAndARestartInTheMiddleOfTraffic() throws Exception {
        List<ServerProcess> servers = start(INSTANCES);
        try {
            burst("exact mode, " + INSTANCES + " fresh instances", servers);

            RateLimitRequest r =
                    request("fresh", descriptor("k", UUID.randomUUID().toString()));
            List<ServerProcess> pair = new ArrayList<>(servers.subList(0, 2));
            double[] before = {allowedFailures(pair.get(0)), allowedFailures(pair.get(1))};
            int admitted = offer(pair, r, OFFERED / 4);
            double failures = allowedFailures(pair.get(0)) - before[0];
            pair.get(0).close();
            ServerProcess replacement = ServerProcess.serve(args());
            servers.add(replacement);
            patient(replacement).shouldRateLimit(request("no-such-domain", descriptor("k", "v")));
            pair.set(0, replacement);
            admitted += offer(pair, r, OFFERED - OFFERED / 4);
            failures += allowedFailures(replacement) + allowedFailures(pair.get(1)) - before[1];
            report("exact mode, a restart in the middle of traffic", admitted, failures);
            check(admitted, failures);
        } finally {
            servers.forEach(ServerProcess::close);
        }
    }

    @Test
    void leasedMode() throws Exception {
        List<ServerProcess> servers = start(INSTANCES, "--store-mode", "leased", "--store-interval", "100ms");
        try {
            burst("leased mode, " + INSTANCES + " fresh instances", servers);
        } finally {
            servers.forEach(ServerProcess::close);
        }
    }

    /** {@link #OFFERED} requests on a new key to {@code servers} at once, from {@link #CLIENTS} clients. */
    private static void burst(String what, List<ServerProcess> servers) throws Exception {
        RateLimitRequest r = request("fresh", descriptor("k", UUID.randomUUID().toString()));
        double before = 0;
        for (ServerProcess s : servers) {
            before += allowedFailures(s);
        }
        int admitted = offer(servers, r, OFFERED);
        double failures = -before;
        for (ServerProcess s : servers) {
            failures += allowedFailures(s);
        }
        report(what, admitted, failures);
        check(admitted, failures);
        checkLogged(servers, failures);
    }

    /** Every admission over the limit is a counted failure answer; with none, exactly the limit. */
    private static void check(int admitted, double failures) {
        if (failures == 0) {
            assertEquals(LIMIT, admitted, "no store failure: exactly the limit");
        } else {
            assertTrue(
                    admitted <= LIMIT + failures,
                    admitted + " admitted: over the limit of " + LIMIT + " by more than the " + failures
                            + " counted on_store_failure answers");
        }
    }

    /** An instance that answered by on_store_failure said so in its log (at most a line a second). */
    private static void checkLogged(List<ServerProcess> servers, double failures) {
        long lines = 0;
        for (ServerProcess s : servers) {
            lines += s.stderr().stream()
                    .filter(l -> l.contains("answered by on_store_failure"))
                    .count();
        }
        System.out.println("FreshInstancesIT: " + lines + " log lines of store failure answers");
        assertTrue(failures == 0 || lines > 0, failures + " failure answers and no log line of them");
    }

    private static void report(String what, int admitted, double failures) {
        System.out.printf(
                "FreshInstancesIT: %s%s: %d of %d admitted against a limit of %d; %.0f answered by"
                        + " on_store_failure: allow (counted)%n",
                what, STRESS ? " under stress-ng" : "", admitted, OFFERED, LIMIT, failures);
    }

    /** {@code n} instances started at once (each in its own thread), each back once it listens, that is ready. */
    private static List<ServerProcess> start(int n, String... extra) throws Exception {
        ExecutorService starters = Executors.newFixedThreadPool(n);
        List<Future<ServerProcess>> started = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            started.add(starters.submit(() -> ServerProcess.serve(args(extra))));
        }
        List<ServerProcess> servers = new ArrayList<>();
        try {
            for (Future<ServerProcess> f : started) {
                servers.add(f.get());
            }
            for (ServerProcess s : servers) { // the client's channel connected before the burst, not during it
                patient(s).shouldRateLimit(request("no-such-domain", descriptor("k", "v")));
            }
        } catch (Exception e) {
            for (Future<ServerProcess> f : started) {
                if (f.isDone() && !f.isCancelled()) {
                    try {
                        f.get().close();
                    } catch (Exception ignored) { // it failed to start; the first failure is thrown
                    }
                }
            }
            throw e;
        } finally {
            starters.shutdown();
        }
        return servers;
    }

    private static String[] args(String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "--config", dir.toString(), "--store", RedisServers.shared().uri()));
        args.addAll(List.of(extra));
        return args.toArray(String[]::new);
    }

    /** Offers {@code count} of {@code r} round robin to {@code servers} from {@link #CLIENTS} threads released at once. */
    private static int offer(List<ServerProcess> servers, RateLimitRequest r, int count) throws Exception {
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
        try {
            CountDownLatch go = new CountDownLatch(1);
            AtomicInteger admitted = new AtomicInteger();
            AtomicInteger next = new AtomicInteger();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < CLIENTS; t++) {
                done.add(clients.submit(() -> {
                    go.await();
                    for (int i; (i = next.getAndIncrement()) < count; ) {
                        if (patient(servers.get(i % servers.size()))
                                        .shouldRateLimit(r)
                                        .getOverallCode()
                                == Code.OK) {
                            admitted.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : done) {
                f.get();
            }
            return admitted.get();
        } finally {
            clients.shutdownNow();
        }
    }

    /**
     * A stub with a deadline far past any answer: what is measured here is who was admitted, not how fast, and on a
     * machine at full load a call can wait seconds for the CPU.
     */
    private static RateLimitServiceGrpc.RateLimitServiceBlockingStub patient(ServerProcess server) {
        return RateLimitServiceGrpc.newBlockingStub(server.channel()).withDeadlineAfter(2, TimeUnit.MINUTES);
    }

    /** The requests of domain {@code fresh} that {@code server} answered by {@code on_store_failure: allow}. */
    private static double allowedFailures(ServerProcess server) {
        return StoreOutageIT.failures(server, "allow", "fresh");
    }
}
