package dev.sluice.mongodb;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import dev.sluice.sync.SynchronizedStore;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.FreezingProxy;
import dev.sluice.testkit.FreezingProxy.WhileFrozen;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.EmbeddedMongoServer;
import dev.sluice.testkit.server.MongoServers;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the counter store of synchronized mode writes and reads: the document shape of Allegro's write-up (docs/sync-mode.md), frame names down to
 * the nanosecond, any key, the outcome of every write, malformed documents, the TTL index, a hung server.
 */
class MongoCounterStoreTest {

    private static final Instant NOON = Instant.parse("2026-01-01T12:00:00Z");
    private static final long S = NOON.getEpochSecond(); // 1767268800
    private static final long NANOS = 1_000_000_000L;
    private static final String TAIL_MINUTE = "sluice_counters_tail_60000000000";

    private static MongoClient client;
    private static MongoDatabase database;

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final ManualClock clock = new ManualClock(NOON);

    @BeforeAll
    static void connect() {
        client = Mongo.client();
        database = client.getDatabase(Mongo.DATABASE);
    }

    @AfterAll
    static void close() {
        client.close();
    }

    /**
     * A counter store without the TTL index: the clocks here stand at 2026-01-01, which a real server's TTL monitor
     * (see {@link MongoServers#URL_VARIABLE}) may take for the past and delete records in the middle of a test.
     */
    private static MongoStore.CounterStoreBuilder counters() {
        return MongoStore.counterStoreBuilder(database).timeout(Mongo.TIMEOUT).createIndex(false);
    }

    private static MongoCollection<BsonDocument> raw(String collection) {
        return database.getCollection(collection, BsonDocument.class);
    }

    private static BsonDocument user(String clientId, String username) {
        return new BsonDocument("clientId", new BsonString(clientId)).append("username", new BsonString(username));
    }

    private static BsonDocument clientOnly(String clientId) {
        return new BsonDocument("clientId", new BsonString(clientId));
    }

    private static BsonDateTime date(String time) {
        return new BsonDateTime(Instant.parse("2026-01-01T" + time + "Z").toEpochMilli());
    }

    private static RateLimiter tail(SynchronizedStore sync, ManualClock clock) {
        return RateLimiter.builder(Algorithm.SLIDING_TAIL)
                .limit(100, Duration.ofMinutes(1))
                .clock(clock)
                .store(sync)
                .build();
    }

    // ---- the document -----------------------------------------------------------------------------------------------

    @Test
    void aRecordIsADocumentOfExactlyTheDesignShape() {
        CounterStore counters = counters().build();
        SynchronizedStore sync =
                SynchronizedStore.builder(counters).manualRounds().build();
        RateLimiter limiter = tail(sync, clock);
        String clientId = "abc-" + run;
        clock.set(NOON.plusSeconds(5));
        for (int j = 0; j < 3; j++) {
            assertTrue(limiter.tryAcquire(clientId + ":jane").allowed());
        }
        assertTrue(limiter.tryAcquire(clientId, 4).allowed());
        assertTrue(sync.flush());
        clock.set(NOON.plusSeconds(70));
        assertTrue(limiter.tryAcquire(clientId + ":jane", 2).allowed());
        assertTrue(sync.flush());

        long version = counters.load(List.of(new CounterKey("tail:60000000000", clientId + ":jane")))
                .get(0)
                .version();
        BsonDocument jane = raw(TAIL_MINUTE)
                .find(new BsonDocument("_id", user(clientId, "jane")))
                .first();
        assertEquals(
                new BsonDocument("_id", user(clientId, "jane"))
                        .append("version", new BsonInt64(version))
                        .append("expire", date("12:04:00")) // last frame 12:01 + 2 windows + the minute's margin
                        .append(
                                "requestCounters",
                                new BsonDocument(Long.toString(S), new BsonInt64(3))
                                        .append(Long.toString(S + 60), new BsonInt64(2))),
                jane);
        assertEquals(List.of("_id", "version", "expire", "requestCounters"), new ArrayList<>(jane.keySet()));
        assertEquals(
                List.of("clientId", "username"),
                new ArrayList<>(jane.getDocument("_id").keySet()));

        BsonDocument abc = raw(TAIL_MINUTE)
                .find(new BsonDocument("_id", clientOnly(clientId)))
                .first();
        assertEquals(clientOnly(clientId), abc.get("_id"), "a key without a colon has no username");
        assertEquals(date("12:03:00"), abc.get("expire"));
        assertEquals(new BsonDocument(Long.toString(S), new BsonInt64(4)), abc.get("requestCounters"));
        assertNotEquals(version, abc.getInt64("version").getValue());
    }

    /**
     * Sub-windows of 250 ms: frames that do not start on a whole second are named with their nanoseconds, and every
     * count arrives in its frame, exactly, on the store and at another instance.
     */
    @Test
    void subSecondFramesAreNamedWithTheirNanosecondsAndKeptExactly() {
        SynchronizedStore a =
                SynchronizedStore.builder(counters().build()).manualRounds().build();
        SynchronizedStore b =
                SynchronizedStore.builder(counters().build()).manualRounds().build();
        RateLimiter atA = RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER)
                .limit(1000, Duration.ofSeconds(1))
                .buckets(4)
                .clock(clock)
                .store(a)
                .build();
        RateLimiter atB = RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER)
                .limit(1000, Duration.ofSeconds(1))
                .buckets(4)
                .clock(clock)
                .store(b)
                .build();
        String key = "sub:" + run;
        assertEquals(1000, atB.peek(key, 1).remaining());
        for (int q = 0; q < 4; q++) {
            clock.set(NOON.plusMillis(250 * q + 10));
            for (int j = 0; j <= q; j++) {
                assertTrue(atA.tryAcquire(key).allowed());
            }
        }
        assertTrue(a.flush());

        BsonDocument doc = raw("sluice_counters_swc_1000000000_4")
                .find(new BsonDocument("_id", user("sub", run)))
                .first();
        assertEquals(
                new BsonDocument(Long.toString(S), new BsonInt64(1))
                        .append(S + "_250000000", new BsonInt64(2))
                        .append(S + "_500000000", new BsonInt64(3))
                        .append(S + "_750000000", new BsonInt64(4)),
                doc.get("requestCounters"));
        assertEquals(date("12:01:01.750"), doc.get("expire"));
        CounterSnapshot read = counters()
                .build()
                .load(List.of(new CounterKey("swc:1000000000:4", key)))
                .get(0);
        assertEquals(
                Map.of(
                        S * NANOS,
                        1L,
                        S * NANOS + 250_000_000,
                        2L,
                        S * NANOS + 500_000_000,
                        3L,
                        S * NANOS + 750_000_000,
                        4L),
                read.counters());
        assertTrue(b.refresh());
        assertEquals(990, atB.peek(key, 1).remaining());
        clock.set(NOON.plusMillis(1_010)); // the first sub-window (1) has left the window
        assertEquals(991, atB.peek(key, 1).remaining());
    }

    @Test
    void frameNamesAreWholeSecondsWithTheNanosecondsOnlyWhenThereAreAny() {
        assertEquals("0", MongoCounterStore.frameName(0));
        assertEquals("1767268800", MongoCounterStore.frameName(S * NANOS));
        assertEquals("1767268800_250000000", MongoCounterStore.frameName(S * NANOS + 250_000_000));
        assertEquals("1767268800_000000250", MongoCounterStore.frameName(S * NANOS + 250));
        assertEquals("-1", MongoCounterStore.frameName(-NANOS));
        assertEquals("-1_500000000", MongoCounterStore.frameName(-500_000_000));
        assertEquals("-1_999999999", MongoCounterStore.frameName(-1));
        assertEquals("9223372036_854775807", MongoCounterStore.frameName(Long.MAX_VALUE));
        assertEquals("-9223372037_145224192", MongoCounterStore.frameName(Long.MIN_VALUE));
        Random random = new Random(11);
        List<Long> starts = new ArrayList<>(List.of(0L, 1L, -1L, Long.MAX_VALUE, Long.MIN_VALUE, S * NANOS));
        for (int j = 0; j < 10_000; j++) {
            starts.add(random.nextLong());
            starts.add(random.nextLong() % 1_000_000 * NANOS);
        }
        for (long start : starts) {
            assertEquals(start, MongoCounterStore.frameStart(MongoCounterStore.frameName(start)), "frame " + start);
        }
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "1.5",
                "1_5",
                "1_000000000",
                "1_1000000000",
                "01",
                "-0",
                "+1",
                "1_-00000001",
                "abc",
                "_250000000",
                "1_250000000_1",
                "9223372037",
                "-9223372038",
                "99999999999999999999"
            })
    void aNameNoFrameHasIsRefused(String name) {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> MongoCounterStore.frameStart(name));
        assertTrue(e.getMessage().contains("'" + name + "'"), e.getMessage());
    }

    @Test
    void framesBeforeTheEpochAndOfANanosecondAreReadBackExactly() {
        CounterStore counters = counters().build();
        CounterKey k = new CounterKey("fine:" + run, "nanos");
        Map<Long, Long> frames = Map.of(-1_500_000_000L, 7L, -1L, 1L, 0L, 2L, 1L, 3L, S * NANOS + 250, 1L << 40);
        assertArrayEquals(
                new boolean[] {true},
                counters.compareAndSet(List.of(new CounterWrite(k, CounterSnapshot.ABSENT, 9, frames, S * NANOS))));
        assertEquals(new CounterSnapshot(9, frames), counters.load(List.of(k)).get(0));
        BsonDocument doc = raw("sluice_counters_fine_" + run)
                .find(new BsonDocument("_id", clientOnly("nanos")))
                .first();
        assertEquals(
                List.of("-2_500000000", "-1_999999999", "0", "0_000000001", S + "_000000250"),
                new ArrayList<>(doc.getDocument("requestCounters").keySet()),
                "in frame order");
    }

    // ---- keys ----------------------------------------------------------------------------------------------------

    @Test
    void everyKeyGetsARecordOfItsOwn() {
        String tenK = "k".repeat(10_000);
        List<String> keys = List.of(
                "abc",
                "abc:",
                ":abc",
                "abc:jane",
                "abc:jane:x",
                "abc::jane",
                "abc:jane:",
                "a.b:c.d",
                "$where:$gt",
                "{\"$ne\":1}",
                "a\0b",
                "a\0c",
                "\0",
                "\uD800",
                "\uDC00",
                "x\uD800y",
                "x\uDC00y",
                "é:ü",
                "\uD83D\uDE42:\u4E2D",
                tenK,
                tenK + "x",
                "sha256",
                " ");
        CounterStore counters = counters().build();
        String shape = "odd:" + run;
        List<CounterWrite> writes = new ArrayList<>();
        for (int j = 0; j < keys.size(); j++) {
            writes.add(new CounterWrite(
                    new CounterKey(shape, keys.get(j)),
                    CounterSnapshot.ABSENT,
                    100 + j,
                    Map.of(S * NANOS, j + 1L),
                    S * NANOS));
        }
        boolean[] all = new boolean[keys.size()];
        Arrays.fill(all, true);
        assertArrayEquals(all, counters.compareAndSet(writes), "one new record per key");

        List<CounterKey> backwards = new ArrayList<>();
        for (int j = keys.size() - 1; j >= 0; j--) {
            backwards.add(new CounterKey(shape, keys.get(j)));
        }
        List<CounterSnapshot> read = counters.load(backwards);
        for (int j = 0; j < keys.size(); j++) {
            CounterSnapshot s = read.get(keys.size() - 1 - j);
            assertEquals(new CounterSnapshot(100 + j, Map.of(S * NANOS, j + 1L)), s, "key #" + j);
        }
        assertEquals(keys.size(), raw("sluice_counters_odd_" + run).countDocuments());

        MongoStore.KeyCodec codec = MongoStore.KeyCodec.clientAndUser();
        assertEquals(user("a.b", "c.d"), codec.id("a.b:c.d"));
        assertEquals(user("$where", "$gt"), codec.id("$where:$gt"));
        assertEquals(user("abc", ""), codec.id("abc:"));
        assertEquals(user("", "abc"), codec.id(":abc"));
        assertEquals(user("abc", "jane:x"), codec.id("abc:jane:x"));
        for (String hashed : List.of("a\0b", "\uD800", tenK)) {
            BsonValue id = codec.id(hashed);
            assertEquals(List.of("sha256"), new ArrayList<>(id.asDocument().keySet()), "the _id of a hashed key");
            assertEquals(43, id.asDocument().getString("sha256").getValue().length(), "SHA-256 in base64url");
            assertTrue(raw("sluice_counters_odd_" + run)
                            .find(new BsonDocument("_id", id))
                            .first()
                    != null);
        }
        assertEquals(
                clientOnly("k".repeat(85) + "\u4E2D".repeat(57)),
                codec.id("k".repeat(85) + "\u4E2D".repeat(57)),
                "256 UTF-8 bytes are kept as they are");
        assertEquals(
                List.of("sha256"),
                new ArrayList<>(codec.id("k".repeat(86) + "\u4E2D".repeat(57))
                        .asDocument()
                        .keySet()),
                "257 are hashed");
    }

    @Test
    void theStringCodecUsesTheKeyItselfAsId() {
        CounterStore counters =
                counters().keyCodec(MongoStore.KeyCodec.string()).build();
        String shape = "plain:" + run;
        List<String> keys = List.of("abc:jane", "abc", "a\0b");
        List<CounterWrite> writes = new ArrayList<>();
        List<CounterKey> ids = new ArrayList<>();
        for (int j = 0; j < keys.size(); j++) {
            ids.add(new CounterKey(shape, keys.get(j)));
            writes.add(new CounterWrite(ids.get(j), CounterSnapshot.ABSENT, 1 + j, Map.of(0L, 5L + j), S * NANOS));
        }
        assertArrayEquals(new boolean[] {true, true, true}, counters.compareAndSet(writes));
        assertEquals(
                List.of(
                        new CounterSnapshot(1, Map.of(0L, 5L)),
                        new CounterSnapshot(2, Map.of(0L, 6L)),
                        new CounterSnapshot(3, Map.of(0L, 7L))),
                counters.load(ids));
        MongoCollection<BsonDocument> c = raw("sluice_counters_plain_" + run);
        assertEquals(1, c.countDocuments(new BsonDocument("_id", new BsonString("abc:jane"))));
        assertEquals(1, c.countDocuments(new BsonDocument("_id", new BsonString("abc"))));
        assertEquals(
                1,
                c.countDocuments(
                        new BsonDocument("_id", MongoStore.KeyCodec.string().id("a\0b"))));
    }

    @Test
    void aCodecThatGivesTwoKeysOneIdAndACallOverTwoSpacesAreRefused() {
        CounterStore counters =
                counters().keyCodec(key -> new BsonString(key.toLowerCase())).build();
        String shape = "refused:" + run;
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> counters.load(List.of(new CounterKey(shape, "Jane"), new CounterKey(shape, "jane"))));
        assertTrue(e.getMessage().contains("'Jane' and 'jane'"), e.getMessage());
        e = assertThrows(
                IllegalArgumentException.class,
                () -> counters.compareAndSet(List.of(
                        new CounterWrite(new CounterKey(shape, "Jane"), 0, 1, Map.of(), 0),
                        new CounterWrite(new CounterKey(shape, "jane"), 0, 2, Map.of(), 0))));
        assertTrue(e.getMessage().contains("'Jane' and 'jane'"), e.getMessage());
        e = assertThrows(
                IllegalArgumentException.class,
                () -> counters.load(List.of(new CounterKey(shape, "a"), new CounterKey(shape + "x", "b"))));
        assertTrue(e.getMessage().contains("'" + shape + "x'"), e.getMessage());
        assertEquals(0, raw("sluice_counters_refused_" + run).countDocuments(), "nothing was written");
        assertEquals(List.of(), counters.load(List.of()));
        assertEquals(0, counters.compareAndSet(List.of()).length);
    }

    // ---- outcomes of writes --------------------------------------------------------------------------------------

    /**
     * Every combination in one call: replaced at the version read, refused at a stale version, created, refused
     * because created meanwhile, and the store's one liberty, a record that is gone created again by a write that
     * expected a version.
     */
    @Test
    void eachWriteOfACallHasItsOwnOutcome() {
        CounterStore counters = counters().build();
        String shape = "cas:" + run;
        CounterKey a = new CounterKey(shape, "a");
        CounterKey b = new CounterKey(shape, "b");
        CounterKey c = new CounterKey(shape, "c");
        CounterKey d = new CounterKey(shape, "d");
        CounterKey gone = new CounterKey(shape, "gone");
        long f = S * NANOS;
        assertArrayEquals(
                new boolean[] {true, true, true},
                counters.compareAndSet(List.of(
                        new CounterWrite(a, 0, 11, Map.of(f, 1L), f),
                        new CounterWrite(b, 0, 21, Map.of(f, 2L), f),
                        new CounterWrite(d, 0, 41, Map.of(f, 4L), f))));
        assertArrayEquals(
                new boolean[] {true, false, true, false, true},
                counters.compareAndSet(List.of(
                        new CounterWrite(a, 11, 12, Map.of(f, 10L), f), // replaced
                        new CounterWrite(b, 20, 22, Map.of(f, 20L), f), // stale: b is at 21
                        new CounterWrite(c, 0, 31, Map.of(f, 3L), f), // created
                        new CounterWrite(d, 0, 42, Map.of(f, 40L), f), // d exists
                        new CounterWrite(gone, 51, 52, Map.of(f, 5L), f)))); // expects 51 of a record that is gone
        assertEquals(
                List.of(
                        new CounterSnapshot(12, Map.of(f, 10L)),
                        new CounterSnapshot(21, Map.of(f, 2L)),
                        new CounterSnapshot(31, Map.of(f, 3L)),
                        new CounterSnapshot(41, Map.of(f, 4L)),
                        new CounterSnapshot(52, Map.of(f, 5L))),
                counters.load(List.of(a, b, c, d, gone)));
    }

    /**
     * A write the server fails for another reason than a duplicate key (here an {@code _id} MongoDB refuses, from a
     * codec) leaves the outcome of the call's other writes unknown: the call throws, and core settles them.
     */
    @Test
    void aWriteErrorOtherThanADuplicateKeyThrows() {
        CounterStore counters = counters()
                .keyCodec(key -> key.equals("array") ? new BsonArray(List.of(new BsonInt32(1))) : new BsonString(key))
                .build();
        String shape = "error:" + run;
        SluiceException e = assertThrows(
                SluiceException.class,
                () -> counters.compareAndSet(List.of(
                        new CounterWrite(new CounterKey(shape, "fine"), 0, 1, Map.of(0L, 1L), 0),
                        new CounterWrite(new CounterKey(shape, "array"), 0, 2, Map.of(0L, 1L), 0))));
        assertTrue(e.getMessage().contains("index 1 of 2"), e.getMessage());
        assertInstanceOf(MongoException.class, e.getCause());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{version: 'one', requestCounters: {}}",
                "{requestCounters: {'1767268800': 1}}",
                "{version: 0, requestCounters: {'1767268800': 1}}",
                "{version: 5}",
                "{version: 5, requestCounters: {'1767268800.5': 1}}",
                "{version: 5, requestCounters: {'1767268800': '3'}}",
                "{version: 5, requestCounters: {'1767268800': -3}}",
                "{version: 5, requestCounters: {'1767268800': 2.5}}"
            })
    void aDocumentThatIsNoCounterRecordIsReportedWithItsKey(String json) {
        String shape = "malformed:" + run;
        raw("sluice_counters_malformed_" + run)
                .insertOne(BsonDocument.parse(json).append("_id", user("bad", "x")));
        CounterStore counters = counters().build();
        SluiceException e =
                assertThrows(SluiceException.class, () -> counters.load(List.of(new CounterKey(shape, "bad:x"))));
        assertTrue(
                e.getMessage().contains("'bad:x'") && e.getMessage().contains("not a Sluice counter record"),
                e.getMessage());
    }

    @Test
    void countsWrittenByHandAsIntegersOrWholeDoublesAreRead() {
        String shape = "byhand:" + run;
        raw("sluice_counters_byhand_" + run)
                .insertOne(BsonDocument.parse(
                        "{_id: {clientId: 'h'}, version: 7, requestCounters: {'1767268800': 3, '1767268860': 4.0, "
                                + "'1767268920': {$numberLong: '5'}}}"));
        assertEquals(
                new CounterSnapshot(7, Map.of(S * NANOS, 3L, (S + 60) * NANOS, 4L, (S + 120) * NANOS, 5L)),
                counters().build().load(List.of(new CounterKey(shape, "h"))).get(0));
    }

    // ---- collections and the TTL index ---------------------------------------------------------------------------

    @Test
    void eachSpaceHasACollectionNamedAfterIt() {
        assertEquals(
                "sluice_counters_tail_60000000000", MongoCounterStore.defaultCollection("sluice", "tail:60000000000"));
        assertEquals(
                "app_counters_swc_60000000000_60s", MongoCounterStore.defaultCollection("app", "swc:60000000000:60s"));
        assertEquals("s_counters_a.005fb.0020c.002e", MongoCounterStore.defaultCollection("s", "a_b c."));
        assertNotEquals(
                MongoCounterStore.defaultCollection("s", "a:b"), MongoCounterStore.defaultCollection("s", "a_b"));

        String ns = "named" + run;
        CounterStore named = counters().namespace(ns).build();
        CounterKey k = new CounterKey("fw:1000", "k");
        assertTrue(named.compareAndSet(List.of(new CounterWrite(k, 0, 1, Map.of(0L, 1L), 0)))[0]);
        assertEquals(1, raw(ns + "_counters_fw_1000").countDocuments());

        CounterStore custom = counters()
                .collectionNaming(shape -> "mine_" + run + "_" + shape.length())
                .build();
        assertTrue(custom.compareAndSet(List.of(new CounterWrite(k, 0, 1, Map.of(0L, 1L), 0)))[0]);
        assertEquals(1, raw("mine_" + run + "_7").countDocuments());

        CounterStore invalid = counters().collectionNaming(shape -> "a$b").build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> invalid.load(List.of(k)));
        assertTrue(e.getMessage().contains("'a$b'"), e.getMessage());
    }

    @Test
    void theStoreCreatesATtlIndexOnExpireInEachCollectionItUses() {
        String ns = "ttl" + run;
        CounterStore counters = MongoStore.counterStoreBuilder(database)
                .namespace(ns)
                .timeout(Mongo.TIMEOUT)
                .build();
        counters.load(List.of(new CounterKey("fw:1000", "k")));
        counters.compareAndSet(List.of(new CounterWrite(new CounterKey("fw:2000", "k"), 0, 1, Map.of(), 0)));
        for (String collection : List.of(ns + "_counters_fw_1000", ns + "_counters_fw_2000")) {
            BsonDocument index = null;
            for (BsonDocument i : raw(collection).listIndexes(BsonDocument.class)) {
                if (i.getString("name").getValue().equals(MongoStore.EXPIRE_INDEX)) {
                    index = i;
                }
            }
            assertTrue(index != null, "no index " + MongoStore.EXPIRE_INDEX + " on " + collection);
            assertEquals(new BsonDocument("expire", new BsonInt32(1)), index.getDocument("key"));
            assertEquals(0, index.getNumber("expireAfterSeconds").longValue());
        }
    }

    /** The server refuses to create the index (here the driver is made to fail it, as a user without the right would). */
    @Test
    void anIndexThatCannotBeCreatedIsReportedAndTheCallsGoOn() {
        List<SluiceException> reported = new CopyOnWriteArrayList<>();
        CounterStore counters = MongoStore.counterStoreBuilder(refusingIndexes(database))
                .namespace("noidx" + run)
                .timeout(Mongo.TIMEOUT)
                .failureListener(reported::add)
                .build();
        CounterKey k = new CounterKey("fw:1000", "k");
        assertTrue(counters.compareAndSet(List.of(new CounterWrite(k, 0, 1, Map.of(0L, 2L), 0)))[0]);
        assertEquals(
                new CounterSnapshot(1, Map.of(0L, 2L)),
                counters.load(List.of(k)).get(0));
        assertEquals(1, reported.size(), "reported once, and not tried again within a minute: " + reported);
        assertTrue(
                reported.get(0).getMessage().contains(MongoStore.EXPIRE_INDEX),
                reported.get(0).getMessage());
        assertInstanceOf(MongoException.class, reported.get(0).getCause());
    }

    /** {@code database}, except that creating an index in any of its collections fails. */
    private static MongoDatabase refusingIndexes(MongoDatabase database) {
        return (MongoDatabase) refusingIndexes(database, MongoDatabase.class);
    }

    private static Object refusingIndexes(Object target, Class<?> type) {
        return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            if (method.getName().equals("createIndex")) {
                throw new MongoException(13, "not authorized to create indexes (a test's refusal)");
            }
            Object result;
            try {
                result = method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (result instanceof MongoDatabase) {
                return refusingIndexes(result, MongoDatabase.class);
            }
            return result instanceof MongoCollection ? refusingIndexes(result, MongoCollection.class) : result;
        });
    }

    @Test
    void theBuilderRefusesBadOptions() {
        MongoStore.CounterStoreBuilder b = MongoStore.counterStoreBuilder(database);
        for (String bad : List.of("", "a$b", "system.x", "a\0b")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.namespace(bad));
            assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.timeout(Duration.ZERO));
        assertTrue(e.getMessage().contains("was 0s"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> b.timeout(Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> MongoStore.counterStoreBuilder(client, ""));
        assertThrows(NullPointerException.class, () -> b.keyCodec(null));
        assertThrows(NullPointerException.class, () -> b.collectionNaming(null));
        assertThrows(NullPointerException.class, () -> b.failureListener(null));
        assertThrows(NullPointerException.class, () -> MongoStore.counterStoreBuilder((MongoDatabase) null));
    }

    // ---- a hung server -------------------------------------------------------------------------------------------

    /**
     * A server that hangs (a proxy that keeps every connection and passes nothing; the client's socket timeout is
     * infinite by default) is cut off by the store's timeout: reads and writes throw, never hang, and work again once
     * it answers. The timeout (3 s) is what the test is about, so it is not the generous one of other tests; it still
     * leaves a loaded machine ample time for the calls the server answers, made once the client is connected, and
     * the 30 s bounds are hang detectors, ten times the timeout.
     */
    @Test
    void aHungServerIsCutOffByTheTimeout() {
        try (EmbeddedMongoServer server = MongoServers.start();
                FreezingProxy proxy = new FreezingProxy(server.port(), WhileFrozen.HOLD);
                MongoClient proxied = Mongo.client("mongodb://127.0.0.1:" + proxy.port())) {
            CounterStore counters = MongoStore.counterStoreBuilder(proxied, Mongo.DATABASE)
                    .timeout(Duration.ofSeconds(3))
                    .createIndex(false)
                    .build();
            CounterKey k = new CounterKey("fw:1000", "hung");
            Await.succeeds("a first read through the proxy", Await.GENEROUS, () -> counters.load(List.of(k)));
            assertTrue(counters.compareAndSet(List.of(new CounterWrite(k, 0, 1, Map.of(0L, 1L), 0)))[0]);

            proxy.freeze();
            SluiceException read = assertTimeoutPreemptively(
                    Duration.ofSeconds(30), () -> assertThrows(SluiceException.class, () -> counters.load(List.of(k))));
            assertInstanceOf(MongoException.class, read.getCause());
            SluiceException write = assertTimeoutPreemptively(
                    Duration.ofSeconds(30),
                    () -> assertThrows(
                            SluiceException.class,
                            () -> counters.compareAndSet(List.of(new CounterWrite(k, 1, 2, Map.of(0L, 2L), 0)))));
            assertTrue(write.getMessage().contains("outcome is unknown"), write.getMessage());

            proxy.thaw();
            CounterSnapshot after = Await.succeeds(
                    "a read once the server answers again", Await.GENEROUS, () -> counters.load(List.of(k))
                            .get(0));
            assertTrue(
                    after.version() == 1 || after.version() == 2,
                    "the write sent while it hung was applied or " + "not, nothing else: " + after);
        }
    }
}
