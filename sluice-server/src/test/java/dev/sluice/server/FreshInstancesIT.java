package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Await;
import dev.sluice.testkit.server.RedisServers;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Fresh {@code serve} processes on one Redis, with the production store timeout (15 ms), started together and, once
 * each says it listens (it is ready then: its store path has answered), hit at once: a fresh JVM's first calls must not
 * turn into {@code on_store_failure: allow} answers that admit over the limit. Exact mode and leased mode; and in each,
 * a restart in the middle of traffic: one instance stopped with SIGTERM and started again on its ports while clients
 * send steadily to both, then killed with SIGKILL and started again ({@link #restarts}).
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
    /** The key of the restart's traffic, limited to {@link #RATE} a {@link #WINDOW_MILLIS} window. */
    static final String RESTART_KEY = "r";

    static final int RATE = 10;
    static final long WINDOW_MILLIS = 1000;
    /** Each client's pause between two calls of the restart's traffic: about 400 calls a second from four clients. */
    static final long PACE_MILLIS = 10;
    /** Health NOT_SERVING for 2 s from SIGTERM, requests still answered: what a load balancer needs to see. */
    static final String[] EXACT = {"--shutdown-delay", "2s"};

    static final String[] LEASED = {"--store-mode", "leased", "--store-interval", "100ms", "--shutdown-delay", "2s"};
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    static Process stress;
    static Path dir;

    @BeforeAll
    static void config() throws IOException {
        dir = Files.createTempDirectory("fresh-instances");
        Files.writeString(
                dir.resolve("fresh.yaml"),
                "domain: fresh\ndescriptors:\n  - key: k\n    rate_limit: {unit: day, requests_per_unit: " + LIMIT
                        + "}\n  - key: " + RESTART_KEY + "\n    rate_limit: {window: " + WINDOW_MILLIS
                        + "ms, requests_per_unit: " + RATE + "}\n");
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

    /** Exact mode: fresh instances hit at once; then a restart in the middle of traffic, on the same processes. */
    @Test
    void exactMode() throws Exception {
        List<ServerProcess> servers = start(INSTANCES, EXACT);
        try {
            burst("exact mode, " + INSTANCES + " fresh instances", servers);
            restarts("exact mode", servers, true, EXACT);
        } finally {
            stopAll(servers);
        }
    }

    @Test
    void leasedMode() throws Exception {
        List<ServerProcess> servers = start(INSTANCES, LEASED);
        try {
            burst("leased mode, " + INSTANCES + " fresh instances", servers);
            restarts("leased mode", servers, false, LEASED);
        } finally {
            stopAll(servers);
        }
    }

    /** SIGTERM to every process at once, then waits for each: their shutdown delays run side by side. */
    private static void stopAll(List<ServerProcess> servers) {
        for (ServerProcess s : servers) {
            s.process().toHandle().destroy();
        }
        servers.forEach(ServerProcess::close);
    }

    /**
     * Steady traffic to both instances on {@link #RESTART_KEY} (a limit of {@link #RATE} a second), while the first
     * instance is stopped with SIGTERM and started again on its ports, and then killed with SIGKILL and started again.
     * Checked: no window admits over the limit; in exact mode, every window that reached its limit admitted exactly
     * it, short only of the requests that got no answer from an instance as it stopped (their calls may have counted);
     * every error is an instance's own as it stopped, none the other's; health turns NOT_SERVING before the graceful
     * stop while requests are still answered, and a restarted instance reports SERVING only once it decides.
     */
    private static void restarts(String mode, List<ServerProcess> servers, boolean exact, String... extra)
            throws Exception {
        RateLimitRequest r =
                request("fresh", descriptor(RESTART_KEY, UUID.randomUUID().toString()));
        long started = System.nanoTime();
        Traffic traffic = new Traffic(servers.subList(0, 2), r);
        try {
            ServerProcess first = servers.get(0);
            traffic.awaitAnswers(first, 20);
            gracefulStop(first, traffic);
            ServerProcess second = restart(first, "after SIGTERM", extra);
            servers.add(second);
            traffic.replace(0, second);
            traffic.awaitAnswers(second, 20);
            second.process().destroyForcibly(); // SIGKILL: no give-back, no shutdown hook
            second.process().waitFor(30, TimeUnit.SECONDS);
            second.close();
            ServerProcess third = restart(second, "after SIGKILL", extra);
            servers.add(third);
            traffic.replace(0, third);
            traffic.awaitAnswers(third, 20);
            traffic.end();
            traffic.check(mode, exact, List.of(first, second), List.of(servers.get(1), third));
            System.out.printf(
                    "FreshInstancesIT: %s, the restarts took %.1f s%n", mode, (System.nanoTime() - started) / 1e9);
        } finally {
            traffic.end();
        }
    }

    /**
     * SIGTERM to {@code server}, which runs with {@code --shutdown-delay}: both health endpoints turn NOT_SERVING while
     * its traffic is still answered; then it exits.
     */
    private static void gracefulStop(ServerProcess server, Traffic traffic) throws Exception {
        server.process().toHandle().destroy(); // SIGTERM
        boolean[] unready = new boolean[2];
        Await.until("health NOT_SERVING on both ports of " + server + ", or its exit", Await.GENEROUS, () -> {
            unready[0] |= grpcHealth(server.channel(), false).equals("NOT_SERVING");
            unready[1] |= httpHealth(server.httpPort()) == 500;
            return (unready[0] && unready[1]) || !server.process().isAlive();
        });
        long since = System.currentTimeMillis();
        assertTrue(unready[0] && unready[1], server + " exited before both health endpoints said NOT_SERVING");
        Await.until(
                "an answer of " + server + " to a call made after its health turned NOT_SERVING, or its exit",
                Await.GENEROUS,
                () -> traffic.answeredAfter(server, since) || !server.process().isAlive());
        assertTrue(
                traffic.answeredAfter(server, since),
                "health NOT_SERVING while requests are still answered: no call made after it was answered");
        assertTrue(server.process().waitFor(60, TimeUnit.SECONDS), server + " did not exit after SIGTERM");
        server.close();
    }

    /**
     * {@code old}'s command again, on its ports, as a restarted instance comes back at its address: its health is
     * watched from before it listens, and the first SERVING answer is followed at once by a request, which the store
     * must decide (or, answered by {@code on_store_failure}, the instance must count).
     */
    private static ServerProcess restart(ServerProcess old, String how, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "serve",
                "--grpc-port",
                Integer.toString(old.grpcPort()),
                "--http-port",
                Integer.toString(old.httpPort())));
        args.addAll(List.of(args(extra)));
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", old.grpcPort())
                .usePlaintext()
                .build();
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        ExecutorService watcher = Executors.newSingleThreadExecutor();
        try {
            Future<DescriptorStatus> firstDecision = watcher.submit(() -> {
                String last = "";
                while (true) {
                    channel.resetConnectBackoff();
                    String grpc = grpcHealth(channel, true);
                    int http = httpHealth(old.httpPort());
                    String now = "grpc " + grpc + ", http " + http;
                    if (!now.equals(last)) {
                        seen.add(now);
                        last = now;
                    }
                    if (grpc.equals("SERVING") || http == 200) {
                        channel.resetConnectBackoff(); // the channel may be waiting to connect again: now
                        return patient(channel)
                                .withWaitForReady()
                                .shouldRateLimit(request(
                                        "fresh",
                                        descriptor(
                                                RESTART_KEY, UUID.randomUUID().toString())))
                                .getStatuses(0);
                    }
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                }
            });
            ServerProcess restarted =
                    ServerProcess.launch(Map.of(), ServerProcess.javaJar(args.toArray(String[]::new)));
            DescriptorStatus decided = firstDecision.get(60, TimeUnit.SECONDS);
            System.out.println("FreshInstancesIT: health of an instance restarted " + how + ", as it started: " + seen);
            assertTrue(
                    decided.hasCurrentLimit() || allowedFailures(restarted) > 0,
                    "the first request after SERVING (" + seen + ") was neither decided by the store nor a counted"
                            + " on_store_failure answer: " + decided);
            patient(restarted.channel()).shouldRateLimit(request("no-such-domain", descriptor("k", "v")));
            return restarted;
        } finally {
            watcher.shutdownNow();
            channel.shutdownNow();
        }
    }

    /**
     * SERVING, NOT_SERVING, or the status code of a failed check. {@code waitForReady}: the check waits up to half a
     * second for the channel to connect (DEADLINE_EXCEEDED while nothing listens), so that a port that just opened is
     * asked, not refused from the channel's last failed attempt.
     */
    private static String grpcHealth(ManagedChannel channel, boolean waitForReady) {
        HealthGrpc.HealthBlockingStub stub = HealthGrpc.newBlockingStub(channel);
        if (waitForReady) {
            stub = stub.withWaitForReady().withDeadlineAfter(500, TimeUnit.MILLISECONDS);
        } else {
            stub = stub.withDeadlineAfter(10, TimeUnit.SECONDS);
        }
        try {
            return stub.check(HealthCheckRequest.newBuilder()
                            .setService("ratelimit")
                            .build())
                    .getStatus()
                    .name();
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode().name();
        }
    }

    /** The status of {@code GET /healthcheck}, or -1 if the port does not answer. */
    private static int httpHealth(int port) {
        try {
            return HTTP.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthcheck"))
                                    .timeout(Duration.ofSeconds(10))
                                    .build(),
                            HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** One answer of the traffic: which process answered, when the call was made and answered, and the status. */
    private record Answer(ServerProcess server, long sent, long received, DescriptorStatus status) {
        /** Decided by the store: a limit and its count, not an {@code on_store_failure} answer. */
        boolean decided() {
            return status.hasCurrentLimit();
        }

        /**
         * The window the store counted the request in, as its end in milliseconds since the epoch, from the time
         * until reset (milliseconds, rounded up, for a {@code window:} limit) and the call's two instants; windows
         * are aligned to their length. 0 if the call took so long that two windows are possible.
         */
        long windowEnd() {
            com.google.protobuf.Duration d = status.getDurationUntilReset();
            long reset = d.getSeconds() * 1000 + d.getNanos() / 1_000_000;
            long low = sent + reset - 1;
            long high = received + reset;
            long end = Math.floorDiv(high, WINDOW_MILLIS) * WINDOW_MILLIS;
            return end >= low && end - WINDOW_MILLIS < low ? end : 0;
        }
    }

    /** A call that got no answer: the process called, when, and the status. */
    private record Failure(ServerProcess server, long sent, long received, Status.Code code) {}

    /** Clients sending steadily, two to each instance, each one call every {@link #PACE_MILLIS}. */
    private static final class Traffic {
        private final AtomicReferenceArray<ServerProcess> slots;
        private final List<Answer> answers = Collections.synchronizedList(new ArrayList<>());
        private final List<Failure> failures = Collections.synchronizedList(new ArrayList<>());
        private final ExecutorService clients;
        private final List<Future<?>> running = new ArrayList<>();
        private volatile boolean stop;

        Traffic(List<ServerProcess> servers, RateLimitRequest r) {
            slots = new AtomicReferenceArray<>(servers.toArray(ServerProcess[]::new));
            clients = Executors.newFixedThreadPool(2 * servers.size());
            for (int t = 0; t < 2 * servers.size(); t++) {
                int slot = t % servers.size();
                running.add(clients.submit(() -> {
                    while (!stop) {
                        ServerProcess s = slots.get(slot);
                        long sent = System.currentTimeMillis();
                        try {
                            RateLimitResponse a = patient(s.channel()).shouldRateLimit(r);
                            answers.add(new Answer(s, sent, System.currentTimeMillis(), a.getStatuses(0)));
                        } catch (StatusRuntimeException e) {
                            failures.add(new Failure(
                                    s,
                                    sent,
                                    System.currentTimeMillis(),
                                    e.getStatus().getCode()));
                        }
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(PACE_MILLIS));
                    }
                    return null;
                }));
            }
        }

        void replace(int slot, ServerProcess server) {
            slots.set(slot, server);
        }

        int answers(ServerProcess server) {
            synchronized (answers) {
                return (int) answers.stream().filter(a -> a.server == server).count();
            }
        }

        boolean answeredAfter(ServerProcess server, long sent) {
            synchronized (answers) {
                return answers.stream().anyMatch(a -> a.server == server && a.sent > sent);
            }
        }

        void awaitAnswers(ServerProcess server, int n) {
            int before = answers(server);
            Await.until(n + " answers of " + server, Await.GENEROUS, () -> answers(server) >= before + n);
        }

        /** Stops the clients and waits for their last calls; a client that failed fails the test. Idempotent. */
        void end() {
            if (stop) {
                return;
            }
            stop = true;
            try {
                for (Future<?> f : running) {
                    f.get(3, TimeUnit.MINUTES);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            } catch (ExecutionException | TimeoutException e) {
                throw new AssertionError("a client of the traffic failed", e);
            } finally {
                clients.shutdownNow();
            }
        }

        /**
         * @param stopped   the processes stopped or killed while traffic ran: the only ones allowed errors
         * @param surviving the processes alive at the end
         */
        void check(String mode, boolean exact, List<ServerProcess> stopped, List<ServerProcess> surviving) {
            Map<Long, List<Answer>> windows = new TreeMap<>();
            int ambiguous = 0;
            int allowedByFailure = 0;
            for (Answer a : answers) {
                if (!a.decided()) {
                    assertEquals(Code.OK, a.status.getCode(), "an on_store_failure answer of domain fresh: allow");
                    allowedByFailure++;
                } else if (a.windowEnd() == 0) {
                    ambiguous++;
                } else {
                    windows.computeIfAbsent(a.windowEnd(), w -> new ArrayList<>())
                            .add(a);
                }
            }
            for (Failure f : failures) {
                assertTrue(
                        stopped.contains(f.server) && f.code == Status.Code.UNAVAILABLE,
                        "an error not of an instance stopping: " + f);
            }
            int saturated = 0;
            int admittedTotal = 0;
            for (Map.Entry<Long, List<Answer>> w : windows.entrySet()) {
                List<Answer> admitted = w.getValue().stream()
                        .filter(a -> a.status.getCode() == Code.OK)
                        .toList();
                admittedTotal += admitted.size();
                assertTrue(
                        admitted.size() <= RATE,
                        mode + ": " + admitted.size() + " admitted in the window ending at " + w.getKey()
                                + ", over the limit of " + RATE);
                boolean full = w.getValue().stream().anyMatch(a -> a.status.getCode() == Code.OVER_LIMIT);
                if (full) {
                    saturated++;
                }
                if (exact) {
                    Set<Integer> remaining = new HashSet<>();
                    for (Answer a : admitted) {
                        assertTrue(
                                remaining.add(a.status.getLimitRemaining()),
                                "two admissions with one count in the window ending at " + w.getKey() + ": "
                                        + admitted);
                    }
                    if (full) {
                        // a call without an answer, or answered by on_store_failure, may have counted in the store
                        long start = w.getKey() - WINDOW_MILLIS;
                        long unanswered = failures.stream()
                                .filter(f -> f.sent < w.getKey() && f.received >= start)
                                .count();
                        long undecided = answers.stream()
                                .filter(a -> !a.decided() && a.sent < w.getKey() && a.received >= start)
                                .count();
                        assertTrue(
                                admitted.size() + unanswered + undecided + ambiguous >= RATE,
                                mode + ": the window ending at " + w.getKey() + " reached its limit with "
                                        + admitted.size() + " admitted, " + unanswered + " calls unanswered and "
                                        + undecided + " answered by on_store_failure: fewer than " + RATE);
                    }
                }
            }
            double counted = 0;
            for (ServerProcess s : surviving) {
                counted += allowedFailures(s);
            }
            long fromSurviving = answers.stream()
                    .filter(a -> !a.decided() && surviving.contains(a.server))
                    .count();
            assertTrue(
                    counted >= fromSurviving,
                    fromSurviving + " on_store_failure answers and only " + counted + " counted");
            System.out.printf(
                    "FreshInstancesIT: %s%s, a restart in the middle of traffic: %d answers in %d windows of %d ms"
                            + " (%d reached the limit of %d), %d admitted, %d answered by on_store_failure: allow,"
                            + " %d of two windows possible; %d errors of the instances stopping%n",
                    mode,
                    STRESS ? " under stress-ng" : "",
                    answers.size(),
                    windows.size(),
                    WINDOW_MILLIS,
                    saturated,
                    RATE,
                    admittedTotal,
                    allowedByFailure,
                    ambiguous,
                    failures.size());
            assertTrue(windows.size() >= 3, "traffic over several windows: " + windows.keySet());
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
        return patient(server.channel());
    }

    private static RateLimitServiceGrpc.RateLimitServiceBlockingStub patient(ManagedChannel channel) {
        return RateLimitServiceGrpc.newBlockingStub(channel).withDeadlineAfter(2, TimeUnit.MINUTES);
    }

    /** The requests of domain {@code fresh} that {@code server} answered by {@code on_store_failure: allow}. */
    private static double allowedFailures(ServerProcess server) {
        return StoreOutageIT.failures(server, "allow", "fresh");
    }
}
