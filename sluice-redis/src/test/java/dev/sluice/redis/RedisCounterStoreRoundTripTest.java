package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterWrite;
import dev.sluice.sync.SynchronizedStore;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a flush and a refresh cost on the wire: network writes counted at the socket of the store's connection
 * ({@link NetworkWrites}) and commands counted by the server ({@code INFO commandstats}), on a server of this test's
 * own so that no other client's commands are counted.
 */
class RedisCounterStoreRoundTripTest {

    private static final int KEYS = 50;
    private static final int BATCH = 7;
    private static final int CALLS = 8; // ceil(50 / 7)

    private static RedisServer server;
    private static NetworkWrites writes;
    private static RedisClient client;

    private final ManualClock clock =
            new ManualClock(Instant.now().truncatedTo(ChronoUnit.HOURS).plus(1, ChronoUnit.HOURS));
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void start() {
        server = RedisServers.start();
        writes = new NetworkWrites();
        client = RedisClient.create(writes.resources(), server.uri());
        client.setOptions(RedisStore.recommendedClientOptions());
    }

    @AfterAll
    static void stop() {
        client.shutdown();
        writes.resources().shutdown();
        server.close();
    }

    /**
     * 50 dirty keys, batch size 7: a flush is 8 calls, each one network write carrying its keys' EVALSHAs, whether
     * each key saw 1, 10 or 100 requests; a refresh of the 50 keys likewise 8 writes of HGETALLs.
     */
    @ParameterizedTest(name = "{0} requests per key")
    @ValueSource(ints = {1, 10, 100})
    void aFlushIsOneNetworkWritePerBatchOfDirtyKeysWhateverTheRequestRate(int requestsPerKey) {
        try (RedisCounterStore counters =
                RedisStore.counterStoreBuilder(client).timeout(Servers.PATIENCE).build()) {
            warmUp(counters);
            SynchronizedStore sync = SynchronizedStore.builder(counters)
                    .manualRounds()
                    .batchSize(BATCH)
                    .build();
            RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
                    .limit(1_000_000, Duration.ofHours(1))
                    .clock(clock)
                    .store(sync)
                    .build();
            for (int k = 0; k < KEYS; k++) {
                for (int r = 0; r < requestsPerKey; r++) {
                    assertTrue(limiter.tryAcquire(run + ":" + k).allowed());
                }
            }

            long writesBefore = writes.count();
            long callsBefore = sync.stats().storeCalls();
            long evalshaBefore = calls("evalsha");
            assertTrue(sync.flush());
            assertEquals(CALLS, sync.stats().storeCalls() - callsBefore, "calls to the counter store");
            assertEquals(CALLS, writes.count() - writesBefore, "network writes");
            assertEquals(KEYS, calls("evalsha") - evalshaBefore, "EVALSHA commands run");
            assertEquals(0, sync.stats().conflicts());

            writesBefore = writes.count();
            long hgetallBefore = calls("hgetall");
            assertTrue(sync.refresh());
            assertEquals(CALLS, writes.count() - writesBefore, "network writes of a refresh");
            assertEquals(KEYS, calls("hgetall") - hgetallBefore, "HGETALL commands run");

            writesBefore = writes.count();
            assertTrue(sync.flush());
            assertEquals(0, writes.count() - writesBefore, "a flush with nothing pending");

            List<CounterKey> ids = new ArrayList<>();
            for (int k = 0; k < KEYS; k++) {
                ids.add(new CounterKey("tail:3600000000000", run + ":" + k));
            }
            for (CounterSnapshot s : counters.load(ids)) {
                assertEquals(requestsPerKey, s.total());
            }
        }
    }

    /**
     * 1,000 dirty keys ({@link RedisCounterStoreCost}): at batch size 500 a flush that creates every record is 2
     * calls, a flush whose every write meets a conflict 6 (refused, re-read, written), a refresh 2 and a flush that
     * updates every record 2; at batch size 100, 10, 30, 10 and 10. Each call is one network write.
     */
    @ParameterizedTest(name = "batch size {0}")
    @ValueSource(ints = {500, 100})
    void aThousandDirtyKeysCostOneCallPerBatchAndThreeWhenEveryWriteConflicts(int batch) {
        List<RedisCounterStoreCost.Step> steps = RedisCounterStoreCost.run(client, writes, 1000, batch);
        long perPass = 1000 / batch;
        List<String> expected = List.of(
                "create " + perPass + " " + perPass,
                "conflict " + 3 * perPass + " " + 3 * perPass,
                "refresh " + perPass + " " + perPass,
                "update " + perPass + " " + perPass);
        assertEquals(
                expected,
                steps.stream()
                        .map(s -> s.name() + " " + s.calls() + " " + s.networkWrites())
                        .collect(Collectors.toList()),
                "step, calls, network writes");
    }

    /**
     * A server that does not know the script (here: flushed) refuses every EVALSHA of the pipeline with NOSCRIPT,
     * which has no effect; the same call sends those writes again with EVAL: two network writes, once.
     */
    @Test
    void aServerWithoutTheScriptCostsOneMoreRoundTripOnce() {
        try (RedisCounterStore counters =
                RedisStore.counterStoreBuilder(client).timeout(Servers.PATIENCE).build()) {
            warmUp(counters);
            server.call("SCRIPT", "FLUSH");
            long expire = nanos(clock.instant()) + Duration.ofHours(1).toNanos();
            List<CounterWrite> batch = new ArrayList<>();
            for (int k = 0; k < 3; k++) {
                batch.add(new CounterWrite(
                        new CounterKey("noscript", run + ":" + k),
                        CounterSnapshot.ABSENT,
                        10 + k,
                        Map.of(1_000L, 1L + k),
                        expire));
            }
            long before = writes.count();
            long evalBefore = calls("eval");
            assertArrayEquals(new boolean[] {true, true, true}, counters.compareAndSet(batch));
            assertEquals(2, writes.count() - before, "EVALSHA pipeline, then EVAL pipeline");
            assertEquals(3, calls("eval") - evalBefore, "EVAL commands run");

            List<CounterWrite> again = new ArrayList<>();
            for (int k = 0; k < 3; k++) {
                again.add(new CounterWrite(batch.get(k).key(), 10 + k, 20 + k, Map.of(1_000L, 5L), expire));
            }
            before = writes.count();
            assertArrayEquals(new boolean[] {true, true, true}, counters.compareAndSet(again));
            assertEquals(1, writes.count() - before, "the script is cached now");
            assertEquals(
                    List.of(
                            new CounterSnapshot(20, Map.of(1_000L, 5L)),
                            new CounterSnapshot(21, Map.of(1_000L, 5L)),
                            new CounterSnapshot(22, Map.of(1_000L, 5L))),
                    counters.load(again.stream().map(CounterWrite::key).collect(Collectors.toList())));
        }
    }

    /**
     * On a cluster, Lettuce writes the batch once per hash slot it spans, to the slot's node, before any reply is
     * awaited: the network writes of one call are the distinct slots of its keys (here 7 keys of 7 slots, then 7 keys
     * of one slot), and the call still waits for one round trip of replies.
     */
    @Test
    void onAClusterACallIsOneNetworkWritePerSlotAllSentBeforeAnyReply() {
        NetworkWrites clusterWrites = new NetworkWrites();
        RedisClusterClient clusterClient = RedisClusterClient.create(
                clusterWrites.resources(),
                RedisServers.sharedCluster().uris().stream()
                        .map(RedisURI::create)
                        .collect(Collectors.toList()));
        clusterClient.setOptions(RedisStore.recommendedClusterClientOptions());
        try (RedisCounterStore counters = RedisStore.counterStoreBuilder(clusterClient)
                .timeout(Servers.PATIENCE)
                .build()) {
            long expire = nanos(clock.instant()) + Duration.ofHours(1).toNanos();
            List<CounterKey> spread = new ArrayList<>();
            Set<Integer> slots = new HashSet<>();
            for (int k = 0; spread.size() < BATCH; k++) {
                CounterKey id = new CounterKey("spread", run + ":" + k);
                if (slots.add(SlotHash.getSlot(RedisDecider.escape(id.key())))) {
                    spread.add(id);
                }
            }
            List<CounterKey> together = new ArrayList<>();
            for (int k = 0; k < BATCH; k++) {
                together.add(new CounterKey("together:" + k, run)); // one key: one slot, seven shapes
            }
            for (List<CounterKey> ids : List.of(spread, together)) {
                counters.load(ids); // opens the node connections this batch needs
                List<CounterWrite> batch = new ArrayList<>();
                for (CounterKey id : ids) {
                    batch.add(new CounterWrite(id, CounterSnapshot.ABSENT, 7, Map.of(5_000L, 2L), expire));
                }
                int distinctSlots = ids.stream()
                        .map(id -> SlotHash.getSlot(RedisDecider.escape(id.key())))
                        .collect(Collectors.toSet())
                        .size();
                counters.compareAndSet(batch); // loads the script on each node

                List<CounterWrite> next = new ArrayList<>();
                for (CounterWrite w : batch) {
                    next.add(new CounterWrite(w.key(), 7, 8, Map.of(5_000L, 3L), expire));
                }
                long before = clusterWrites.count();
                boolean[] applied = counters.compareAndSet(next);
                long cas = clusterWrites.count() - before;
                before = clusterWrites.count();
                List<CounterSnapshot> read = counters.load(ids);
                long load = clusterWrites.count() - before;

                boolean[] all = new boolean[ids.size()];
                Arrays.fill(all, true);
                assertArrayEquals(all, applied);
                assertEquals(
                        distinctSlots, cas, "network writes of a compare-and-set over " + distinctSlots + " slots");
                assertEquals(distinctSlots, load, "network writes of a load over " + distinctSlots + " slots");
                for (CounterSnapshot s : read) {
                    assertEquals(new CounterSnapshot(8, Map.of(5_000L, 3L)), s);
                }
            }
        } finally {
            clusterClient.shutdown();
            clusterWrites.resources().shutdown();
        }
    }

    /** Opens the connection and has the server cache the script, so that what is counted next is the steady state. */
    private void warmUp(RedisCounterStore counters) {
        CounterKey id = new CounterKey("warm-up", UUID.randomUUID().toString());
        counters.compareAndSet(
                List.of(new CounterWrite(id, CounterSnapshot.ABSENT, 1, Map.of(), nanos(clock.instant()))));
    }

    /** How many times the server has run {@code command}, from {@code INFO commandstats}. */
    private static long calls(String command) {
        return server.calls(command);
    }

    private static long nanos(Instant i) {
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
    }
}
