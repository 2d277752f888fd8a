package dev.sluice.mongodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.TimeSource;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.testkit.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.UUID;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** What the store writes: expiry, keys, the store's clock, folding, and requests made with another limit. */
class MongoStoreTest {

    private static final Instant NOON = Instant.parse("2026-01-01T12:00:00Z");
    private static final Duration MARGIN = Duration.ofNanos(MongoDecider.EXPIRY_MARGIN_NANOS);

    private static MongoClient client;
    private static MongoStore store;
    private static MongoCollection<Document> collection;

    private final ManualClock clock = new ManualClock(NOON);
    private final String run = UUID.randomUUID().toString();

    @BeforeAll
    static void connect() {
        client = Mongo.client();
        store = Mongo.clockStore(client).build();
        collection = client.getDatabase(Mongo.DATABASE).getCollection(MongoStore.DEFAULT_COLLECTION);
    }

    @AfterAll
    static void close() {
        client.close();
    }

    private RateLimiter limiter(
            Algorithm algorithm,
            long limit,
            Duration window,
            MongoStore on,
            UnaryOperator<RateLimiterBuilder> options) {
        return options.apply(RateLimiter.builder(algorithm).limit(limit, window).clock(clock))
                .store(on)
                .build();
    }

    private static Document document(RateLimiter limiter, String key) {
        return collection
                .find(new Document("_id", MongoKeys.id("sluice", SharedStoreOptions.shape(limiter.config()), key)))
                .first();
    }

    private void at(String time) {
        clock.set(Instant.parse("2026-01-01T" + time + "Z"));
    }

    private static Instant expireOf(Document doc) {
        return doc.getDate(MongoDecider.EXPIRE).toInstant();
    }

    // ---- expiry ---------------------------------------------------------------------------------------------------

    @Test
    void theStoreCreatesATtlIndexOnExpire() {
        MongoStore indexed = MongoStore.builder(client, Mongo.DATABASE)
                .collection("sluice_ttl")
                .timeout(Mongo.TIMEOUT)
                .build();
        Document index = null;
        for (Document i : client.getDatabase(Mongo.DATABASE)
                .getCollection(indexed.collectionName())
                .listIndexes()) {
            if (MongoStore.EXPIRE_INDEX.equals(i.getString("name"))) {
                index = i;
            }
        }
        assertNotNull(index, "no index named " + MongoStore.EXPIRE_INDEX);
        assertEquals(new Document(MongoDecider.EXPIRE, 1), index.get("key", Document.class), "index key");
        assertEquals(0L, ((Number) index.get("expireAfterSeconds")).longValue(), "expireAfterSeconds");
        for (Document i : collection.listIndexes()) {
            assertNotEquals(MongoStore.EXPIRE_INDEX, i.getString("name"), "created though createIndex(false)");
        }
    }

    /** Each algorithm, 3 per 60 s, requests at 12:00:05 and 12:00:50: the expire field after each. */
    static Stream<Arguments> expiries() {
        return Stream.of(
                Arguments.of(Algorithm.FIXED_WINDOW, false, "12:01:00", "12:01:00"),
                Arguments.of(Algorithm.SLIDING_LOG, false, "12:01:05", "12:01:50"),
                Arguments.of(Algorithm.SLIDING_WINDOW_COUNTER, false, "12:01:00", "12:01:45"),
                Arguments.of(Algorithm.SLIDING_WINDOW_COUNTER, true, "12:01:15", "12:02:00"),
                Arguments.of(Algorithm.SLIDING_TAIL, false, "12:02:00", "12:02:00"),
                Arguments.of(Algorithm.TOKEN_BUCKET, false, "12:01:05", "12:01:50"),
                Arguments.of(Algorithm.LEAKY_BUCKET, false, "12:01:05.001", "12:01:50.001"));
    }

    /**
     * The expire field is the latest time the key's state can still differ from a fresh one, plus a minute's margin
     * for clocks that disagree (a hand-moved clock: the in-JVM server never deletes anything). Left in place from that
     * time (without the margin), the document decides exactly as no document would.
     */
    @ParameterizedTest(name = "{0} strict={1}")
    @MethodSource("expiries")
    void expireIsWhenTheStateIsAsGoodAsNewAndAnExpiredDocumentDecidesAsFresh(
            Algorithm algorithm, boolean strict, String first, String second) {
        RateLimiter limiter = limiter(
                algorithm,
                3,
                Duration.ofSeconds(60),
                store,
                b -> algorithm == Algorithm.SLIDING_WINDOW_COUNTER
                        ? b.buckets(4).strict(strict)
                        : b);
        String used = run + ":expire";
        at("12:00:05");
        limiter.tryAcquire(used, 2);
        assertEquals(
                Instant.parse("2026-01-01T" + first + "Z").plus(MARGIN),
                expireOf(document(limiter, used)),
                "after 12:00:05");
        at("12:00:50");
        limiter.tryAcquire(used, 2);
        assertEquals(
                Instant.parse("2026-01-01T" + second + "Z").plus(MARGIN),
                expireOf(document(limiter, used)),
                "after 12:00:50");

        clock.set(expireOf(document(limiter, used)).minus(MARGIN));
        String fresh = run + ":never-used";
        assertEquals(limiter.peek(fresh, 3), limiter.peek(used, 3), "a peek at the expire time");
        assertEquals(limiter.tryAcquire(fresh, 3), limiter.tryAcquire(used, 3), "a request at the expire time");
        assertEquals(limiter.tryAcquire(fresh, 1), limiter.tryAcquire(used, 1), "the next request");
        assertNotNull(document(limiter, used), "the in-JVM server keeps expired documents");
    }

    // ---- keys -----------------------------------------------------------------------------------------------------

    @Test
    void keysOfAnyCharactersAndLengthEachHaveADocumentOfTheirOwn() {
        String tenKb = "k".repeat(10 * 1024 - 1);
        List<String> keys = new ArrayList<>(List.of(
                "client:abc",
                "ключ-🔑-鍵",
                "a.b.c",
                "a",
                "$where",
                "$",
                ".",
                "a\u0000b",
                "{\"$gt\": \"\"}",
                "\uD800",
                "\uDBFF",
                "?",
                "\uDC00x",
                tenKb + "a",
                tenKb + "b",
                MongoKeys.id("sluice", "fw:60000000000", tenKb + "a").get(MongoKeys.HASH, String.class)));
        keys.replaceAll(k -> run + k);
        RateLimiter limiter = limiter(Algorithm.FIXED_WINDOW, 2, Duration.ofMinutes(1), store, b -> b);
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            String at = "key " + i + " (" + key.length() + " chars, "
                    + key.codePoints().limit(60).mapToObj(Integer::toHexString).toList() + ")";
            Decision d = limiter.tryAcquire(key);
            assertTrue(d.allowed() && d.remaining() == 1, at + " shares a document with an earlier key: " + d);
            assertTrue(limiter.tryAcquire(key).allowed(), at);
            assertFalse(limiter.tryAcquire(key).allowed(), at + ": a third request in the window");
        }
        Document shortKey = document(limiter, keys.get(1));
        assertEquals(
                keys.get(1), shortKey.get("_id", Document.class).getString(MongoKeys.KEY), "a short key is the _id");
        assertNull(shortKey.get(MongoDecider.KEY), "a short key is not stored twice");
        Document longKey = document(limiter, keys.get(14));
        assertNotNull(longKey.get("_id", Document.class).getString(MongoKeys.HASH), "a long key is hashed");
        assertEquals(keys.get(14), longKey.getString(MongoDecider.KEY), "a long key is kept");
        assertTrue(MongoKeys.hashed(keys.get(9)), "an unpaired surrogate is hashed");
        assertTrue(MongoKeys.hashed(keys.get(7)), "a NUL is hashed");
        assertFalse(MongoKeys.hashed(keys.get(1)), "a short valid key is not hashed");
        assertFalse(MongoKeys.hashed("x".repeat(256)), "256 UTF-8 bytes are kept as they are");
        assertTrue(MongoKeys.hashed("x".repeat(257)), "257 UTF-8 bytes are hashed");
        assertFalse(MongoKeys.hashed("é".repeat(128)), "128 two-byte characters are 256 bytes");
        assertTrue(MongoKeys.hashed("é".repeat(129)), "129 two-byte characters are 258 bytes");
    }

    // ---- the store's clock ----------------------------------------------------------------------------------------

    /**
     * With the store's clock the server times each request, whatever the limiter's clock says (here: the year 2000,
     * so the limiter's estimate of the expire time falls short and is corrected after the first request).
     */
    @Test
    void theStoresClockTimesRequests() {
        clock.set(Instant.parse("2000-01-01T00:00:00Z"));
        MongoStore storeTime =
                Mongo.clockStore(client).timeSource(TimeSource.STORE).build();
        RateLimiter limiter = limiter(Algorithm.TOKEN_BUCKET, 3, Duration.ofHours(1), storeTime, b -> b);
        String key = run + ":store-time";
        long before = System.currentTimeMillis();
        assertEquals(3, limiter.peek(key, 1).remaining(), "a peek at a key without a document");
        for (long remaining = 2; remaining >= 0; remaining--) {
            Decision d = limiter.tryAcquire(key);
            assertTrue(d.allowed() && d.remaining() == remaining, "request " + (3 - remaining) + ": " + d);
        }
        Decision denied = limiter.tryAcquire(key);
        assertFalse(denied.allowed(), "a fourth within 20 minutes: " + denied);
        // A token each 20 minutes; the test takes far less than one.
        assertTrue(
                denied.retryAfter().compareTo(Duration.ofMinutes(19)) > 0
                        && denied.retryAfter().compareTo(Duration.ofMinutes(20)) <= 0,
                "retry after: " + denied);
        Decision peeked = limiter.peek(key, 1);
        assertFalse(peeked.allowed(), "a peek: " + peeked);
        long after = System.currentTimeMillis();

        Document doc = document(limiter, key);
        Document times = doc.get(History.AT, Document.class);
        assertEquals(4, times.size(), "the server's time of each request");
        long first = Long.MAX_VALUE;
        for (String id : times.keySet()) {
            long t = times.getDate(id).getTime();
            assertTrue(
                    t >= before - 1 && t <= after + 1,
                    "a request timed by the server at " + new Date(t) + ", not by the limiter's clock at "
                            + clock.instant());
            first = Math.min(first, t);
        }
        assertTrue(
                doc.getDate(MongoDecider.EXPIRE).getTime()
                        >= first + Duration.ofHours(1).toMillis(),
                "expire " + doc.getDate(MongoDecider.EXPIRE) + " is at least an hour after the first request "
                        + new Date(first));
        Date now = doc.getDate(History.NOW);
        assertTrue(now != null && now.getTime() >= first, "a peek reads the server's time: " + now);
    }

    // ---- folding --------------------------------------------------------------------------------------------------

    @Test
    void everyBatchOfRequestsIsFoldedIntoTheState() {
        MongoStore storeTime =
                Mongo.clockStore(client).timeSource(TimeSource.STORE).build();
        RateLimiter limiter = limiter(Algorithm.TOKEN_BUCKET, 1000, Duration.ofHours(1), storeTime, b -> b);
        String key = run + ":fold";
        for (int i = 1; i <= 70; i++) {
            assertEquals(1000 - i, limiter.tryAcquire(key).remaining(), "request " + i);
        }
        Document doc = document(limiter, key);
        History history = History.of(doc);
        int batch = MongoDecider.DEFAULT_COMPACT_AFTER;
        assertEquals(70 / batch * batch, history.seq, "requests folded");
        assertEquals(70 % batch, history.ops.size(), "requests not yet folded");
        assertEquals(70 % batch, doc.get(History.AT, Document.class).size(), "times of folded requests dropped");
        long[] base = history.base();
        assertEquals(4, base.length, "a token bucket's state: tokens, fraction, last refill, last seen full");
        assertEquals(1000 - 70 / batch * batch, base[0], "tokens left after the folded requests");
    }

    // ---- requests made with another limit -------------------------------------------------------------------------

    /**
     * Two limiters of one shape but different limits share the key's state (a limit raised or lowered keeps the
     * counts taken); each replays the other's requests with the limit they were made with.
     */
    @Test
    void eachRequestIsReplayedWithTheLimitItWasMadeWith() {
        RateLimiter five = limiter(Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1), store, b -> b);
        RateLimiter two = limiter(Algorithm.FIXED_WINDOW, 2, Duration.ofMinutes(1), store, b -> b);
        String key = run + ":limits";
        assertTrue(five.tryAcquire(key, 2).allowed());
        Decision d = two.tryAcquire(key);
        assertFalse(d.allowed(), "2 taken of a limit of 2: " + d);
        d = five.tryAcquire(key);
        // Replayed with a limit of 5, the request the limit of 2 rejected would have been admitted and counted.
        assertTrue(d.allowed() && d.remaining() == 2, "3 taken of 5: " + d);
    }

    // ---- the builder ----------------------------------------------------------------------------------------------

    @Test
    void theBuilderRejectsBadValuesNamingThem() {
        MongoStore.Builder b = MongoStore.builder(client, Mongo.DATABASE);
        for (String bad : new String[] {"", "a$b", "system.x"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.collection(bad));
            assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.compactAfter(0));
        assertTrue(e.getMessage().contains("was 0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> MongoStore.builder(client, ""));
        assertTrue(e.getMessage().contains("database"), e.getMessage());
        assertThrows(NullPointerException.class, () -> MongoStore.builder(null, "db"));
        assertThrows(NullPointerException.class, () -> MongoStore.builder(null));
    }

    @Test
    void aStoreWritesToTheCollectionAndNamespaceItIsGiven() {
        MongoStore other = Mongo.clockStore(client)
                .collection("sluice_other")
                .namespace("app2")
                .build();
        RateLimiter limiter = limiter(Algorithm.SLIDING_TAIL, 1, Duration.ofMinutes(1), other, b -> b);
        String key = run + ":elsewhere";
        assertTrue(limiter.tryAcquire(key).allowed());
        assertEquals("sluice_other", other.collectionName());
        Document id = MongoKeys.id("app2", SharedStoreOptions.shape(limiter.config()), key);
        assertNotNull(
                client.getDatabase(Mongo.DATABASE)
                        .getCollection("sluice_other")
                        .find(new Document("_id", id))
                        .first(),
                "the document in sluice_other under namespace app2");
        assertNull(document(limiter, key), "nothing in the default collection");
        RateLimiter sameShapeDefaultStore = limiter(Algorithm.SLIDING_TAIL, 1, Duration.ofMinutes(1), store, b -> b);
        assertTrue(sameShapeDefaultStore.tryAcquire(key).allowed(), "another namespace, another limit");
    }
}
