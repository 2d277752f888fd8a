package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterWrite;
import dev.sluice.sync.SyncStats;
import dev.sluice.sync.SynchronizedStore;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * The cost of a flush and a refresh of many dirty keys on one Redis server: two instances A and B, each with one
 * request on every key, then, in this order,
 *
 * <ol>
 *   <li><b>create</b>: A flushes, creating every record;</li>
 *   <li><b>conflict</b>: B flushes: every write expects no record and is refused, B re-reads every key and writes
 *       again;</li>
 *   <li><b>refresh</b>: A reads every key;</li>
 *   <li><b>update</b>: one more request per key at A, and A flushes, replacing every record at the version read.</li>
 * </ol>
 *
 * Each step is counted as calls to the counter store ({@link SyncStats#storeCalls()}), network writes at the socket
 * ({@link NetworkWrites}) and the time the step took. {@link RedisCounterStoreRoundTripTest} asserts the counts;
 * {@link #main} prints the counts and the median milliseconds of several runs.
 */
final class RedisCounterStoreCost {

    static final List<String> STEPS = List.of("create", "conflict", "refresh", "update");

    /** One step: calls to the counter store, network writes, nanoseconds. */
    record Step(String name, long calls, long networkWrites, long nanos) {}

    private RedisCounterStoreCost() {}

    /**
     * Runs the four steps once over {@code keys} new keys with batch size {@code batch}, through {@code client}
     * (whose connections {@code writes} counts); checks that every step did all it should, and that the store holds
     * 3 per key at the end.
     *
     * @throws AssertionError if a step did not write or read every key
     */
    static List<Step> run(RedisClient client, NetworkWrites writes, int keys, int batch) {
        ManualClock clock =
                new ManualClock(Instant.now().truncatedTo(ChronoUnit.HOURS).plus(1, ChronoUnit.HOURS));
        String run = UUID.randomUUID().toString().substring(0, 8);
        try (RedisCounterStore countersA = RedisStore.counterStoreBuilder(client)
                        .timeout(Duration.ofSeconds(30))
                        .build();
                RedisCounterStore countersB = RedisStore.counterStoreBuilder(client)
                        .timeout(Duration.ofSeconds(30))
                        .build()) {
            warmUp(countersA, clock);
            warmUp(countersB, clock);
            SynchronizedStore a = SynchronizedStore.builder(countersA)
                    .manualRounds()
                    .batchSize(batch)
                    .build();
            SynchronizedStore b = SynchronizedStore.builder(countersB)
                    .manualRounds()
                    .batchSize(batch)
                    .build();
            RateLimiter atA = limiter(a, clock);
            RateLimiter atB = limiter(b, clock);
            String[] names = new String[keys];
            for (int k = 0; k < keys; k++) {
                names[k] = "cost:" + run + ":" + k;
                require(atA.tryAcquire(names[k]).allowed(), "admitted at A");
                require(atB.tryAcquire(names[k]).allowed(), "admitted at B");
            }
            List<Step> steps = new ArrayList<>();
            steps.add(step("create", a, writes, a::flush));
            require(a.stats().writes() == keys, "create: every key written, " + a.stats());
            steps.add(step("conflict", b, writes, b::flush));
            require(b.stats().conflicts() == keys && b.stats().writes() == keys, "conflict: " + b.stats());
            steps.add(step("refresh", a, writes, a::refresh));
            for (String name : names) {
                require(atA.tryAcquire(name).allowed(), "admitted at A");
            }
            steps.add(step("update", a, writes, a::flush));
            require(a.stats().writes() == 2L * keys && a.stats().conflicts() == 0, "update: " + a.stats());

            List<CounterKey> ids = new ArrayList<>();
            for (String name : names) {
                ids.add(new CounterKey("fw:3600000000000", name));
            }
            for (int from = 0; from < keys; from += batch) {
                for (CounterSnapshot s : countersA.load(ids.subList(from, Math.min(keys, from + batch)))) {
                    require(s.total() == 3, "3 requests per key stored, was " + s);
                }
            }
            return steps;
        }
    }

    private static RateLimiter limiter(SynchronizedStore store, ManualClock clock) {
        return RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(1_000_000, Duration.ofHours(1))
                .clock(clock)
                .store(store)
                .build();
    }

    private interface Round {
        boolean run();
    }

    private static Step step(String name, SynchronizedStore store, NetworkWrites writes, Round round) {
        long calls = store.stats().storeCalls();
        long written = writes.count();
        long started = System.nanoTime();
        boolean done = round.run();
        long nanos = System.nanoTime() - started;
        require(done, name + " did not complete: " + store.stats());
        return new Step(name, store.stats().storeCalls() - calls, writes.count() - written, nanos);
    }

    /** Opens the store's connection and has the server cache the script, so that the steps see the steady state. */
    private static void warmUp(RedisCounterStore counters, ManualClock clock) {
        long now = clock.instant().getEpochSecond() * 1_000_000_000L;
        counters.compareAndSet(List.of(new CounterWrite(
                new CounterKey("warm-up", UUID.randomUUID().toString()), CounterSnapshot.ABSENT, 1, Map.of(), now)));
    }

    private static void require(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }

    /**
     * Prints, per batch size, each step's calls, network writes and median milliseconds over the runs. Arguments:
     * keys (default 1000), runs (default 7), batch sizes (default 500 100). Starts a Redis server of its own.
     */
    public static void main(String[] args) {
        int keys = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        int[] batches = args.length > 2
                ? Arrays.stream(args, 2, args.length)
                        .mapToInt(Integer::parseInt)
                        .toArray()
                : new int[] {500, 100};
        try (RedisServer server = RedisServers.start()) {
            NetworkWrites writes = new NetworkWrites();
            RedisClient client = RedisClient.create(writes.resources(), server.uri());
            client.setOptions(RedisStore.recommendedClientOptions());
            try {
                System.out.printf(
                        Locale.ROOT,
                        "Redis %s, %d keys, median of %d runs (after one warm-up run)%n",
                        server.version(),
                        keys,
                        runs);
                System.out.println("| batch | step | calls | network writes | ms (median) | ms (min-max) |");
                System.out.println("|---:|---|---:|---:|---:|---|");
                for (int batch : batches) {
                    run(client, writes, keys, batch); // warm-up: JIT, connections
                    long[][] nanos = new long[STEPS.size()][runs];
                    List<Step> last = null;
                    for (int r = 0; r < runs; r++) {
                        last = run(client, writes, keys, batch);
                        for (int s = 0; s < STEPS.size(); s++) {
                            nanos[s][r] = last.get(s).nanos();
                        }
                    }
                    for (int s = 0; s < STEPS.size(); s++) {
                        long[] sorted = nanos[s].clone();
                        Arrays.sort(sorted);
                        System.out.printf(
                                Locale.ROOT,
                                "| %d | %s | %d | %d | %.1f | %.1f-%.1f |%n",
                                batch,
                                STEPS.get(s),
                                last.get(s).calls(),
                                last.get(s).networkWrites(),
                                sorted[runs / 2] / 1e6,
                                sorted[0] / 1e6,
                                sorted[runs - 1] / 1e6);
                    }
                }
            } finally {
                client.shutdown();
                writes.resources().shutdown();
            }
        }
    }
}
