package dev.sluice.mongodb;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.bulk.BulkWriteUpsert;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import dev.sluice.RateLimitListener;
import dev.sluice.SluiceException;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import dev.sluice.spi.Listeners;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * The counter store of synchronized mode on MongoDB: a document per key in a collection per shape, read with one
 * {@code find} and written with one unordered {@code bulkWrite} per call. Built by
 * {@link MongoStore#counterStoreBuilder}; see there for the document shape. Thread-safe; keeps no per-key state.
 */
final class MongoCounterStore implements CounterStore {

    /*
     * How does one unordered bulkWrite tell, write by write, which compare-and-sets were applied?
     *
     * Every write of a call is the same operation, with the record's version in the filter and upsert on:
     *
     *   replaceOne({_id: id, version: expected}, {_id: id, version: new, expire, requestCounters}, {upsert: true})
     *
     * and the server does exactly one of three things with it, each visible per write in the reply:
     *
     *   - the record has the expected version: it is replaced. The write counts in matchedCount and has no entry.
     *   - there is no record: the upsert inserts one. The reply's `upserted` names the write's index.
     *   - the record has another version: the filter matches nothing, the upsert tries to insert and collides with
     *     the record on _id. The reply's writeErrors name the write's index with E11000 (duplicate key). Nothing is
     *     written: a conflict.
     *
     * So a write is refused exactly when the reply holds a duplicate-key error at its index, and applied otherwise;
     * matchedCount must come to the writes less the upserts less the conflicts, and does, or the call throws. A
     * write expecting ABSENT (version 0, which no record has) creates the record or collides with it: the same
     * operation, so a call is a single `update` command. (An insertOne for it would make the driver send the
     * inserts and the updates of a batch as two commands: two round trips.)
     *
     * Example, one call of three writes:
     *
     *   index  write                   record before   server                    answer
     *   0      a: expects v1, sets v4  a at v1         matched: replaced         true
     *   1      b: expects v7, sets v5  b at v9         E11000 at index 1         false (b keeps v9)
     *   2      c: expects 0, sets v6   none            upserted at index 2       true
     *
     *   reply: matchedCount 1, upserted [{index: 2}], writeErrors [{index: 1, code: 11000}] -> [true, false, true]
     *
     * Any other error leaves outcomes unknown, so the call throws and core settles every write of it by reading
     * the records again (their versions show which were applied): an error at one index other than E11000 (an
     * interrupted batch, on the server, stops there, and the writes after it are neither applied nor reported), a
     * write concern error (applied on the primary, perhaps not durable), a timeout or a lost connection (the reply
     * never came), counts that do not add up, an unacknowledged reply.
     *
     * One liberty: a write that expects a version, to a record that is gone (the TTL index deleted it), inserts
     * the record instead of being refused, and says so: true, truthfully. What it writes is what a refusal would
     * have led to: core writes only frames that still count, and a record is deleted only once none of its frames
     * counts (plus a minute), so the frames it carries are the writer's own pending counts, the same a re-read and a
     * create would have written, one round trip sooner. Had the record been deleted early (by hand), its still
     * counting frames come back with it: admitted counts, never counted twice, since any successor created
     * meanwhile makes the write collide.
     */

    static final String VERSION = "version";
    static final String EXPIRE = "expire";
    static final String COUNTERS = "requestCounters";

    /**
     * Added to a record's expiry: the server deletes by its own clock, which may run ahead of the instances' clocks
     * that cut the frames.
     */
    static final long EXPIRY_MARGIN_NANOS = MongoDecider.EXPIRY_MARGIN_NANOS;

    private static final long NANOS_PER_SECOND = 1_000_000_000L;
    private static final long NANOS_PER_MILLI = 1_000_000L;
    private static final long INDEX_RETRY_NANOS = 60_000_000_000L;
    private static final BsonDocument PROJECTION =
            new BsonDocument(VERSION, new BsonInt32(1)).append(COUNTERS, new BsonInt32(1));
    private static final ReplaceOptions UPSERT = new ReplaceOptions().upsert(true);
    private static final BulkWriteOptions UNORDERED = new BulkWriteOptions().ordered(false);

    /** A shape's collection, and whether its TTL index is known to exist. */
    private static final class Shape {
        final MongoCollection<BsonDocument> collection;
        volatile boolean indexed;
        final AtomicLong nextIndexAttempt = new AtomicLong(System.nanoTime()); // System.nanoTime()

        Shape(MongoCollection<BsonDocument> collection, boolean indexed) {
            this.collection = collection;
            this.indexed = indexed;
        }
    }

    private final MongoDatabase database;
    private final Function<? super String, String> naming;
    private final MongoStore.KeyCodec codec;
    private final long timeoutNanos;
    private final boolean createIndex;
    private final RateLimitListener listener;
    private final ConcurrentHashMap<String, Shape> shapes = new ConcurrentHashMap<>();

    MongoCounterStore(
            MongoDatabase database,
            Function<? super String, String> naming,
            MongoStore.KeyCodec codec,
            long timeoutNanos,
            boolean createIndex,
            RateLimitListener listener) {
        MongoDatabase d = database.withCodecRegistry(MongoClientSettings.getDefaultCodecRegistry())
                .withReadPreference(ReadPreference.primary())
                // at least 1 ms: the driver reads a timeout of 0 as none at all
                .withTimeout(Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos)), TimeUnit.MILLISECONDS);
        this.database = d.getWriteConcern().isAcknowledged() ? d : d.withWriteConcern(WriteConcern.ACKNOWLEDGED);
        this.naming = naming;
        this.codec = codec;
        this.timeoutNanos = timeoutNanos;
        this.createIndex = createIndex;
        this.listener = listener;
    }

    /** The default name of the collection of {@code shape}: see {@link MongoStore.CounterStoreBuilder#namespace}. */
    static String defaultCollection(String namespace, String shape) {
        StringBuilder name = new StringBuilder(namespace).append("_counters_");
        for (int i = 0; i < shape.length(); i++) {
            char c = shape.charAt(i);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-') {
                name.append(c);
            } else if (c == ':') {
                name.append('_');
            } else {
                name.append('.').append(String.format("%04x", (int) c));
            }
        }
        return name.toString();
    }

    /**
     * {@inheritDoc}
     *
     * <p>One {@code find({_id: {$in: [...]}})} in the shape's collection, answered in one batch.
     *
     * @throws SluiceException          if the server fails or does not answer within the timeout (the driver's
     *                                  exception is the cause), or a document is not a counter record
     * @throws IllegalArgumentException if the keys are of more than one shape, or the key codec gives two of them one
     *                                  {@code _id}
     */
    @Override
    public List<CounterSnapshot> load(List<CounterKey> keys) {
        Objects.requireNonNull(keys, "keys must not be null");
        if (keys.isEmpty()) {
            return List.of();
        }
        long deadline = System.nanoTime() + timeoutNanos;
        Shape shape = shape(keys.get(0).shape());
        Map<BsonValue, Integer> positions = new HashMap<>();
        BsonArray ids = new BsonArray();
        for (int j = 0; j < keys.size(); j++) {
            BsonValue id = id(keys, j, positions);
            ids.add(id);
        }
        CounterSnapshot[] out = new CounterSnapshot[keys.size()];
        Arrays.fill(out, CounterSnapshot.absent());
        try {
            // one more than can match: the first batch then holds every match and the server closes the cursor
            for (BsonDocument doc : shape.collection
                    .find(new BsonDocument("_id", new BsonDocument("$in", ids)))
                    .projection(PROJECTION)
                    .batchSize(keys.size() + 1)) {
                Integer j = positions.get(doc.get("_id"));
                if (j == null) {
                    throw new SluiceException("MongoDB answered a document " + doc.get("_id") + " in "
                            + shape.collection.getNamespace() + " that was not asked for");
                }
                out[j] = decode(doc, keys.get(j), shape);
            }
        } catch (IllegalStateException e) {
            throw MongoStore.closed(shape.collection.getNamespace(), e);
        } catch (MongoException e) {
            throw new SluiceException(
                    "MongoDB failed reading " + keys.size() + " counter records from " + shape.collection.getNamespace()
                            + ": " + e,
                    e);
        }
        ensureIndex(shape, deadline);
        return Arrays.asList(out);
    }

    /**
     * {@inheritDoc}
     *
     * <p>One unordered {@code bulkWrite} of {@code replaceOne({_id, version: expected}, record, upsert)} in the shape's
     * collection; a duplicate-key error at a write's index is its conflict. A write that expects a version to a record
     * that is gone creates the record and is reported applied (see {@link MongoStore#counterStoreBuilder}).
     *
     * @throws SluiceException          if any write's outcome is unknown: the server fails or does not answer within
     *                                  the timeout (the driver's exception is the cause), reports an error other
     *                                  than a duplicate key or a write concern error; core then settles each write by
     *                                  reading its record
     * @throws IllegalArgumentException if the writes are of more than one shape, or the key codec gives two of them
     *                                  one {@code _id}
     */
    @Override
    public boolean[] compareAndSet(List<CounterWrite> writes) {
        Objects.requireNonNull(writes, "writes must not be null");
        if (writes.isEmpty()) {
            return new boolean[0];
        }
        long deadline = System.nanoTime() + timeoutNanos;
        List<CounterKey> keys = new ArrayList<>(writes.size());
        for (CounterWrite w : writes) {
            keys.add(Objects.requireNonNull(w, "write must not be null").key());
        }
        Shape shape = shape(keys.get(0).shape());
        Map<BsonValue, Integer> positions = new HashMap<>();
        List<ReplaceOneModel<BsonDocument>> models = new ArrayList<>(writes.size());
        for (int j = 0; j < writes.size(); j++) {
            CounterWrite w = writes.get(j);
            BsonValue id = id(keys, j, positions);
            BsonDocument filter = new BsonDocument("_id", id).append(VERSION, new BsonInt64(w.expectedVersion()));
            models.add(new ReplaceOneModel<>(filter, encode(id, w), UPSERT));
        }
        boolean[] applied;
        try {
            applied = outcomes(writes.size(), shape.collection.bulkWrite(models, UNORDERED), List.of(), shape, null);
        } catch (MongoBulkWriteException e) {
            if (e.getWriteConcernError() != null) {
                throw unknown(writes.size(), shape, "a write concern error", e);
            }
            applied = outcomes(writes.size(), e.getWriteResult(), e.getWriteErrors(), shape, e);
        } catch (MongoException e) {
            throw unknown(writes.size(), shape, "a failure", e);
        } catch (IllegalStateException e) {
            throw MongoStore.closed(shape.collection.getNamespace(), e);
        }
        ensureIndex(shape, deadline);
        return applied;
    }

    /**
     * Each write's outcome from the reply, as the design comment explains; throws where it cannot be known.
     *
     * @param cause the exception that carried the reply, if any: the cause of what this throws
     */
    private static boolean[] outcomes(
            int n,
            BulkWriteResult result,
            List<BulkWriteError> errors,
            Shape shape,
            @Nullable MongoBulkWriteException cause) {
        if (!result.wasAcknowledged()) {
            throw failed(
                    "MongoDB did not acknowledge " + n + " counter record writes to " + shape.collection.getNamespace()
                            + ": their outcome is unknown",
                    cause);
        }
        boolean[] applied = new boolean[n];
        Arrays.fill(applied, true);
        int conflicts = 0;
        for (BulkWriteError error : errors) {
            int j = error.getIndex();
            if (j < 0 || j >= n || !applied[j]) {
                throw failed(
                        "MongoDB reported an error at index " + j + " of " + n + " counter record writes to "
                                + shape.collection.getNamespace() + ": " + errors,
                        cause);
            }
            if (ErrorCategory.fromErrorCode(error.getCode()) != ErrorCategory.DUPLICATE_KEY) {
                throw failed(
                        "MongoDB failed a counter record write (index " + j + " of " + n + ") to "
                                + shape.collection.getNamespace() + ", so the outcome of the others is unknown: "
                                + error,
                        cause);
            }
            applied[j] = false;
            conflicts++;
        }
        int upserts = 0;
        for (BulkWriteUpsert u : result.getUpserts()) {
            if (u.getIndex() < 0 || u.getIndex() >= n || !applied[u.getIndex()]) {
                throw failed(
                        "MongoDB reported an upsert at index " + u.getIndex() + " of " + n
                                + " counter record writes to " + shape.collection.getNamespace() + ", which it failed",
                        cause);
            }
            upserts++;
        }
        if (result.getMatchedCount() != n - conflicts - upserts) {
            throw failed(
                    "MongoDB's answer to " + n + " counter record writes to "
                            + shape.collection.getNamespace() + " does not add up: " + result.getMatchedCount()
                            + " matched, " + upserts + " inserted, " + conflicts + " conflicts",
                    cause);
        }
        return applied;
    }

    /** A failure of a bulk write, caused by the exception that carried the reply if there was one. */
    private static SluiceException failed(String message, @Nullable MongoBulkWriteException cause) {
        return cause == null ? new SluiceException(message) : new SluiceException(message, cause);
    }

    private static SluiceException unknown(int n, Shape shape, String what, MongoException e) {
        return new SluiceException(
                "MongoDB answered " + n + " counter record writes to " + shape.collection.getNamespace() + " with "
                        + what + ", so their outcome is unknown: " + e,
                e);
    }

    /** The {@code _id} of the {@code j}th key, checking that all keys are of one shape and no two share an id. */
    private BsonValue id(List<CounterKey> keys, int j, Map<BsonValue, Integer> positions) {
        CounterKey key = Objects.requireNonNull(keys.get(j), "key must not be null");
        if (!key.shape().equals(keys.get(0).shape())) {
            throw new IllegalArgumentException(
                    "one call must concern one shape, was '" + keys.get(0).shape() + "' and '" + key.shape() + "'");
        }
        BsonValue id = Objects.requireNonNull(codec.id(key.key()), "the key codec gave no _id for '" + key.key() + "'");
        Integer other = positions.putIfAbsent(id, j);
        if (other != null) {
            throw new IllegalArgumentException(
                    "the key codec gives '" + keys.get(other).key() + "' and '" + key.key() + "' the same _id " + id
                            + " (or one key was passed twice)");
        }
        return id;
    }

    private Shape shape(String name) {
        return shapes.computeIfAbsent(name, s -> {
            String collection =
                    Objects.requireNonNull(naming.apply(s), "the collection naming gave no name for '" + s + "'");
            MongoStore.requireCollectionName(collection);
            return new Shape(database.getCollection(collection, BsonDocument.class), !createIndex);
        });
    }

    /**
     * Creates the shape's TTL index unless it is known to exist, in the time left until {@code deadline}: a failure
     * goes to the listener and is tried again a minute later at the earliest.
     */
    private void ensureIndex(Shape shape, long deadline) {
        if (shape.indexed) {
            return;
        }
        long now = System.nanoTime();
        long due = shape.nextIndexAttempt.get();
        MongoCollection<BsonDocument> rest = MongoStore.within(shape.collection, deadline);
        if (now - due < 0 || rest == null || !shape.nextIndexAttempt.compareAndSet(due, now + INDEX_RETRY_NANOS)) {
            return;
        }
        try {
            rest.createIndex(
                    Indexes.ascending(EXPIRE),
                    new IndexOptions().name(MongoStore.EXPIRE_INDEX).expireAfter(0L, TimeUnit.SECONDS));
            shape.indexed = true;
        } catch (IllegalStateException e) {
            throw MongoStore.closed(shape.collection.getNamespace(), e);
        } catch (MongoException e) {
            SluiceException failure = new SluiceException(
                    "could not create the TTL index " + MongoStore.EXPIRE_INDEX + " on "
                            + shape.collection.getNamespace() + " (tried again in a minute): " + e,
                    e);
            Listeners.failure(listener, null, failure); // never throws: the call goes on
        }
    }

    // ---- the document ----------------------------------------------------------------------------------------------

    /** The whole record {@code w} writes. */
    static BsonDocument encode(BsonValue id, CounterWrite w) {
        BsonDocument counters = new BsonDocument();
        for (Map.Entry<Long, Long> e : w.counters().entrySet()) {
            counters.append(frameName(e.getKey()), new BsonInt64(e.getValue()));
        }
        return new BsonDocument("_id", id)
                .append(VERSION, new BsonInt64(w.newVersion()))
                .append(EXPIRE, new BsonDateTime(expireMillis(w.expireAtNanos())))
                .append(COUNTERS, counters);
    }

    /** {@code expireAtNanos} plus the margin, rounded up to a millisecond; saturating. */
    static long expireMillis(long expireAtNanos) {
        long at = expireAtNanos > Long.MAX_VALUE - EXPIRY_MARGIN_NANOS
                ? Long.MAX_VALUE
                : expireAtNanos + EXPIRY_MARGIN_NANOS;
        long millis = Math.floorDiv(at, NANOS_PER_MILLI);
        return Math.floorMod(at, NANOS_PER_MILLI) == 0 ? millis : millis + 1;
    }

    /**
     * The name of the frame starting at {@code startNanos} (nanoseconds since the epoch): its start in whole seconds
     * ({@code "1767268800"}), and for a frame that does not start on a whole second an underscore and the nanoseconds
     * into that second, nine digits ({@code "1767268800_250000000"}). The seconds are floored, so the nanoseconds part
     * is never negative: {@code -0.5 s} is {@code "-1_500000000"}. One name per frame, and one frame per name.
     */
    static String frameName(long startNanos) {
        long seconds = Math.floorDiv(startNanos, NANOS_PER_SECOND);
        long nanos = Math.floorMod(startNanos, NANOS_PER_SECOND);
        if (nanos == 0) {
            return Long.toString(seconds);
        }
        String digits = Long.toString(nanos);
        return seconds + "_" + "0".repeat(9 - digits.length()) + digits;
    }

    /**
     * The frame start that {@link #frameName} gives {@code name}.
     *
     * @throws IllegalArgumentException if {@code name} is not a name {@link #frameName} gives
     */
    static long frameStart(String name) {
        int underscore = name.indexOf('_');
        String seconds = underscore < 0 ? name : name.substring(0, underscore);
        long nanos = 0;
        if (underscore >= 0) {
            String digits = name.substring(underscore + 1);
            if (digits.length() != 9 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
                throw new IllegalArgumentException(
                        "a frame name holds nine digits of nanoseconds after the '_', was '" + name + "'");
            }
            nanos = Long.parseLong(digits);
            if (nanos == 0) {
                throw new IllegalArgumentException(
                        "a frame on a whole second is named without nanoseconds, was '" + name + "'");
            }
        }
        if (!seconds.matches("-?(0|[1-9][0-9]*)") || seconds.equals("-0")) {
            throw new IllegalArgumentException("a frame name starts with whole seconds, was '" + name + "'");
        }
        try {
            long s = Long.parseLong(seconds);
            if (s >= 0 || nanos == 0) {
                return Math.addExact(Math.multiplyExact(s, NANOS_PER_SECOND), nanos);
            }
            return Math.subtractExact(Math.multiplyExact(s + 1, NANOS_PER_SECOND), NANOS_PER_SECOND - nanos);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException(
                    "a frame name is a time in nanoseconds a long can hold, was '" + name + "'", e);
        }
    }

    private static CounterSnapshot decode(BsonDocument doc, CounterKey key, Shape shape) {
        try {
            long version = integer(doc.get(VERSION), VERSION);
            if (version == CounterSnapshot.ABSENT) {
                throw new IllegalArgumentException("version " + CounterSnapshot.ABSENT + " is no record's version");
            }
            BsonValue counters = doc.get(COUNTERS);
            if (counters == null || !counters.isDocument()) {
                throw new IllegalArgumentException(COUNTERS + " is not a document: " + counters);
            }
            TreeMap<Long, Long> frames = new TreeMap<>();
            for (Map.Entry<String, BsonValue> e : counters.asDocument().entrySet()) {
                if (frames.put(frameStart(e.getKey()), integer(e.getValue(), COUNTERS + "." + e.getKey())) != null) {
                    throw new IllegalArgumentException("frame " + e.getKey() + " is named twice");
                }
            }
            return new CounterSnapshot(version, frames);
        } catch (IllegalArgumentException e) {
            throw new SluiceException(
                    "the document of key '" + key.key() + "' in " + shape.collection.getNamespace()
                            + " is not a Sluice counter record: " + e.getMessage(),
                    e);
        }
    }

    /** A 64-bit or 32-bit integer, or a double holding a whole number (as the shell writes numbers). */
    private static long integer(@Nullable BsonValue v, String field) {
        if (v != null && v.isInt64()) {
            return v.asInt64().getValue();
        }
        if (v != null && v.isInt32()) {
            return v.asInt32().getValue();
        }
        if (v != null && v.isDouble()) {
            double d = v.asDouble().getValue();
            if (d == Math.rint(d) && Math.abs(d) <= 0x1p53) {
                return (long) d;
            }
        }
        throw new IllegalArgumentException(field + " is not a whole number: " + v);
    }

    @Override
    public String toString() {
        return "MongoCounterStore[" + database.getName() + ", timeout=" + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                + " ms" + (createIndex ? "" : ", no TTL index") + "]";
    }
}
