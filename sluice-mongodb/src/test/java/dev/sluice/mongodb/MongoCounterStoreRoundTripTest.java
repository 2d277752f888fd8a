package dev.sluice.mongodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.sync.SynchronizedStore;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.MongoServers;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Store round trips, counted as the commands the driver sends: a flush is one {@code update} command per batch of
 * dirty keys, ceil(dirty keys / batch size), whatever the number of requests each key saw; a refresh is one
 * {@code find} per batch of held keys, never followed by a {@code getMore}; a conflict costs one {@code find} and one
 * {@code update} more per batch that met one. Each store creates the TTL index once per collection, at its first call
 * there.
 */
class MongoCounterStoreRoundTripTest {

    private static final Commands commands = new Commands();
    private static MongoClient client;

    /** Starts at the next whole hour, so the records' expiry lies in the future of a real server too. */
    private final ManualClock clock =
            new ManualClock(Instant.now().truncatedTo(ChronoUnit.HOURS).plus(1, ChronoUnit.HOURS));

    private final String run = UUID.randomUUID().toString().substring(0, 8);

    /**
     * The names of the commands sent. A {@code find} must ask for a first batch larger than the number of ids it
     * looks up: the in-JVM server answers everything in the first batch anyway, a real one only 101 documents unless
     * asked for more, and then needs a {@code getMore} for the rest and one more to learn the cursor is exhausted.
     * Thread-safe.
     */
    private static final class Commands implements CommandListener {
        private final List<String> sent = new ArrayList<>();

        @Override
        public synchronized void commandStarted(CommandStartedEvent event) {
            String name = event.getCommandName();
            if (name.equals("find")) {
                BsonDocument find = event.getCommand();
                int ids = find.getDocument("filter")
                        .getDocument("_id")
                        .getArray("$in")
                        .size();
                int batch = find.getNumber("batchSize", new BsonInt32(0)).intValue();
                if (batch <= ids) {
                    name = "find of " + ids + " ids with a first batch of " + batch;
                }
            }
            sent.add(name);
        }

        synchronized Map<String, Integer> takeCounts() {
            Map<String, Integer> counts = new TreeMap<>();
            for (String name : sent) {
                counts.merge(name, 1, Integer::sum);
            }
            sent.clear();
            return counts;
        }
    }

    @BeforeAll
    static void connect() {
        client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(MongoServers.connectionString()))
                .addCommandListener(commands)
                .build());
    }

    @AfterAll
    static void close() {
        client.close();
    }

    @BeforeEach
    void forgetEarlierCommands() {
        commands.takeCounts();
    }

    /**
     * A counter store whose build sends nothing (no startup timeout): these tests count the commands of flushes and
     * refreshes, and the ping of a build that waits for the server (see {@link MongoStartupTest}) would be one more.
     */
    private CounterStore counters() {
        return MongoStore.counterStoreBuilder(client, Mongo.DATABASE)
                .namespace("trips" + run)
                .timeout(Mongo.TIMEOUT)
                .startupTimeout(Duration.ZERO)
                .build();
    }

    private RateLimiter limiter(SynchronizedStore sync) {
        return RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(1_000_000, Duration.ofHours(1))
                .clock(clock)
                .store(sync)
                .build();
    }

    private static int ceil(int a, int b) {
        return (a + b - 1) / b;
    }

    @ParameterizedTest(name = "{0} keys, batches of {1}, {2} requests per key")
    @CsvSource({"50, 7, 1", "50, 7, 10", "50, 7, 100", "1200, 500, 1", "1200, 500, 20", "3, 500, 1000"})
    void aFlushIsOneUpdatePerBatchOfDirtyKeysWhateverTheRequests(int keys, int batchSize, int requestsPerKey) {
        SynchronizedStore sync = SynchronizedStore.builder(counters())
                .manualRounds()
                .batchSize(batchSize)
                .build();
        RateLimiter limiter = limiter(sync);
        for (int k = 0; k < keys; k++) {
            for (int r = 0; r < requestsPerKey; r++) {
                assertTrue(limiter.tryAcquire("c" + k + ":u").allowed());
            }
        }
        assertEquals(
                Map.of("find", keys, "createIndexes", 1),
                commands.takeCounts(),
                "each key read once as it was taken up, whatever its requests; and the collection's TTL index");
        assertTrue(sync.flush());
        int batches = ceil(keys, batchSize);
        assertEquals(Map.of("update", batches), commands.takeCounts(), "the first flush: records created");

        assertTrue(sync.refresh());
        assertEquals(Map.of("find", batches), commands.takeCounts(), "a refresh: no getMore, no killCursors");

        for (int k = 0; k < keys; k++) {
            for (int r = 0; r < requestsPerKey; r++) {
                assertTrue(limiter.tryAcquire("c" + k + ":u").allowed());
            }
        }
        assertTrue(sync.flush());
        assertEquals(Map.of("update", batches), commands.takeCounts(), "records replaced at the version read");
        assertTrue(sync.flush());
        assertEquals(Map.of(), commands.takeCounts(), "nothing pending, no call");

        List<CounterKey> ids = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            ids.add(new CounterKey(SharedStoreOptions.shape(limiter.config()), "c" + k + ":u"));
        }
        for (int from = 0; from < keys; from += batchSize) {
            for (CounterSnapshot s : counters().load(ids.subList(from, Math.min(keys, from + batchSize)))) {
                assertEquals(2L * requestsPerKey, s.total(), "every request arrived");
            }
        }
    }

    /**
     * B writes first; all 20 of A's keys then meet a conflict: A's flush is its 3 updates (all refused), 3 finds to
     * re-read, and 3 updates that apply.
     */
    @Test
    void aConflictCostsOneReadAndOneWriteMorePerBatch() {
        SynchronizedStore a = SynchronizedStore.builder(counters())
                .manualRounds()
                .batchSize(7)
                .build();
        SynchronizedStore b = SynchronizedStore.builder(counters())
                .manualRounds()
                .batchSize(7)
                .build();
        RateLimiter atA = limiter(a);
        RateLimiter atB = limiter(b);
        for (int k = 0; k < 20; k++) {
            assertTrue(atA.tryAcquire("c" + k, 2).allowed());
            assertTrue(atB.tryAcquire("c" + k, 3).allowed());
        }
        assertTrue(b.flush());
        commands.takeCounts();
        long callsBefore = a.stats().storeCalls(); // 20: each key read as A took it up
        assertTrue(a.flush());
        assertEquals(Map.of("update", 6, "find", 3), commands.takeCounts());
        assertEquals(20, a.stats().conflicts());
        assertEquals(6 + 3, a.stats().storeCalls() - callsBefore);
        assertTrue(b.refresh());
        for (int k = 0; k < 20; k++) {
            assertEquals(1_000_000 - 5, atB.peek("c" + k, 1).remaining());
        }
    }
}
