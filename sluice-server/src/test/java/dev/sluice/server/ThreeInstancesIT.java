package dev.sluice.server;

import static dev.sluice.server.ServerProcess.descriptor;
import static dev.sluice.server.ServerProcess.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Await;
import dev.sluice.testkit.server.RedisServers;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three {@code serve} processes on one Redis, traffic spread over them by six client threads: exact mode admits
 * exactly the limit; synchronized mode stays within docs/sync-mode.md's bound (at most L + (n−1)·L, and never
 * short of L when more is offered); leased mode never passes the limit, and ends at exactly it.
 */
class ThreeInstancesIT {
    static final int LIMIT = 60;
    static final int OFFERED = 240;

    @TempDir
    Path dir;

    @Test
    void exactModeAdmitsExactlyTheLimit() throws Exception {
        int admitted = run("--store-timeout", "5s");
        assertEquals(LIMIT, admitted);
    }

    @Test
    void synchronizedModeStaysWithinItsBound() throws Exception {
        int admitted = run("--sync-interval", "100ms");
        System.out.println("ThreeInstancesIT: synchronized mode admitted " + admitted + " of " + OFFERED
                + " against a limit of " + LIMIT);
        assertTrue(admitted >= LIMIT && admitted <= 3 * LIMIT, "between L and L + 2L: " + admitted);
    }

    /**
     * Leased mode never passes the limit. The flood may leave slices unused in the instances that claimed them last;
     * requests that keep coming to every instance spend them (and the rounds give back what an idle instance holds),
     * so the three end at exactly the limit, never above it on the way.
     */
    @Test
    void leasedModeNeverPassesTheLimitAndEndsAtExactlyIt() throws Exception {
        List<ServerProcess> servers = start("--lease-interval", "100ms", "--store-timeout", "5s");
        try {
            RateLimitRequest r =
                    request("shared", descriptor("k", UUID.randomUUID().toString()));
            int flood = flood(servers, r);
            System.out.println("ThreeInstancesIT: leased mode admitted " + flood + " of " + OFFERED + " against a limit"
                    + " of " + LIMIT);
            assertTrue(flood <= LIMIT, "never over the limit: " + flood);
            AtomicInteger admitted = new AtomicInteger(flood);
            AtomicInteger next = new AtomicInteger();
            Await.until("the whole limit admitted across the three", Await.GENEROUS, () -> {
                if (servers.get(next.getAndIncrement() % 3).shouldRateLimit(r).getOverallCode() == Code.OK) {
                    admitted.incrementAndGet();
                }
                assertTrue(admitted.get() <= LIMIT, "never over the limit: " + admitted.get());
                return admitted.get() == LIMIT;
            });
            for (ServerProcess s : servers) {
                assertEquals(Code.OVER_LIMIT, s.shouldRateLimit(r).getOverallCode(), "the limit is spent");
            }
        } finally {
            close(servers);
        }
    }

    /** Offers {@link #OFFERED} requests for one key round robin to three processes; returns how many were admitted. */
    int run(String... mode) throws Exception {
        List<ServerProcess> servers = start(mode);
        try {
            return flood(
                    servers, request("shared", descriptor("k", UUID.randomUUID().toString())));
        } finally {
            close(servers);
        }
    }

    /**
     * Three {@code serve} processes on the shared Redis, limiting {@code k} of domain {@code shared} per day, started
     * at once (each in its own thread) as a deploy starts them; each back once it listens.
     */
    List<ServerProcess> start(String... mode) throws Exception {
        Files.writeString(
                dir.resolve("shared.yaml"),
                "domain: shared\ndescriptors:\n  - key: k\n    rate_limit: {unit: day, requests_per_unit: " + LIMIT
                        + "}\n");
        List<String> args = new ArrayList<>(List.of(
                "--config", dir.toString(), "--store", RedisServers.shared().uri()));
        args.addAll(List.of(mode));
        ExecutorService starters = Executors.newFixedThreadPool(3);
        List<Future<ServerProcess>> started = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            started.add(starters.submit(() -> ServerProcess.serve(args.toArray(String[]::new))));
        }
        starters.shutdown();
        List<ServerProcess> servers = new ArrayList<>();
        ExecutionException failed = null;
        for (Future<ServerProcess> f : started) {
            try {
                servers.add(f.get());
            } catch (ExecutionException e) {
                failed = failed == null ? e : failed; // the first failure is thrown, once the others are stopped
            }
        }
        if (failed != null) {
            close(servers);
            throw failed;
        }
        return servers;
    }

    /** Stops {@code servers} at once, each in its own thread, and waits until all are stopped. */
    static void close(List<ServerProcess> servers) throws InterruptedException {
        ExecutorService stoppers = Executors.newFixedThreadPool(servers.size());
        try {
            for (ServerProcess s : servers) {
                stoppers.execute(s::close);
            }
        } finally {
            stoppers.shutdown();
        }
        if (!stoppers.awaitTermination(2, TimeUnit.MINUTES)) {
            throw new AssertionError("the processes did not stop: " + servers);
        }
    }

    /** Offers {@link #OFFERED} of {@code r} round robin to {@code servers} from six threads; how many were admitted. */
    static int flood(List<ServerProcess> servers, RateLimitRequest r) throws Exception {
        ExecutorService clients = Executors.newFixedThreadPool(6);
        try {
            AtomicInteger admitted = new AtomicInteger();
            AtomicInteger next = new AtomicInteger();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                done.add(clients.submit(() -> {
                    for (int i; (i = next.getAndIncrement()) < OFFERED; ) {
                        if (servers.get(i % servers.size()).shouldRateLimit(r).getOverallCode() == Code.OK) {
                            admitted.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            return admitted.get();
        } finally {
            clients.shutdownNow();
        }
    }
}
