package dev.sluice.mongodb;

import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.spi.SharedStoreBuilder;
import dev.sluice.spi.SharedStoreOptions;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.Document;

/**
 * Limits kept in a MongoDB collection and shared by every service instance that uses it (exact mode): each decision
 * is one {@code findOneAndUpdate} on the key's document, so concurrent callers on any number of instances never admit
 * more than the limit, and decide exactly as the in-memory store does.
 *
 * <pre>{@code
 * RateLimitStore store = MongoStore.builder(mongoClient, "app").build();
 * RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
 *         .limit(100, Duration.ofMinutes(1))
 *         .store(store)
 *         .build();
 * }</pre>
 *
 * <ul>
 *   <li><b>Documents.</b> One per key and limiter shape, in the collection {@value #DEFAULT_COLLECTION} by default,
 *       with {@code _id} {@code {n: namespace, s: state name, k: key}}; a key longer than 256 UTF-8 bytes, holding
 *       a NUL or not valid UTF-16 is named by its SHA-256 {@code h} instead of {@code k}, and kept in the field
 *       {@code key}. Any characters and any length are safe.</li>
 *   <li><b>Expiry.</b> Every document carries an {@code expire} date from which its state is as good as new; the store
 *       creates a TTL index on it ({@code expireAfterSeconds: 0}) so idle keys are deleted by the server.</li>
 *   <li><b>Time.</b> {@link dev.sluice.TimeSource#STORE} (the default) times each request by the server's clock
 *       ({@code $currentDate}, milliseconds); {@link dev.sluice.TimeSource#CLOCK} sends the limiter's clock in
 *       nanoseconds.</li>
 *   <li><b>Failures.</b> Every call to the server runs under the builder's {@link Builder#timeout timeout}, applied
 *       as the driver's client-side operation timeout; when the server fails or is too slow the
 *       {@link dev.sluice.FailurePolicy} answers. The driver reconnects by itself, so the limiter works again as soon
 *       as the server is back.</li>
 * </ul>
 *
 * The client is the caller's: the store never closes it. Thread-safe.
 */
public final class MongoStore implements RateLimitStore {

    /** The collection used when none is given. */
    public static final String DEFAULT_COLLECTION = "sluice_rate_limits";
    /** The name of the TTL index the store creates on {@code expire}. */
    public static final String EXPIRE_INDEX = "sluice_expire";

    private static final long INDEX_RETRY_NANOS = 60_000_000_000L;

    private final MongoCollection<Document> collection;
    private final SharedStoreOptions options;
    private final int compactAfter;
    private final OpIds ids = OpIds.random();
    private volatile boolean indexed;
    private final AtomicLong nextIndexAttempt = new AtomicLong(System.nanoTime());  // System.nanoTime()

    private MongoStore(Builder b, SharedStoreOptions options) {
        this.options = options;
        this.compactAfter = b.compactAfter;
        MongoCollection<Document> c = b.database.getCollection(b.collection)
                .withCodecRegistry(MongoClientSettings.getDefaultCodecRegistry())
                .withReadPreference(ReadPreference.primary())
                // at least 1 ms: the driver reads a timeout of 0 as none at all
                .withTimeout(Math.max(1, options.timeout().toMillis()), TimeUnit.MILLISECONDS);
        WriteConcern w = b.database.getWriteConcern();
        this.collection = w.isAcknowledged() ? c : c.withWriteConcern(WriteConcern.ACKNOWLEDGED);
        this.indexed = !b.createIndex;
        ensureIndex(System.nanoTime() + options.timeout().toNanos());
    }

    /** A builder for a store in {@code database} of {@code client}. */
    public static Builder builder(MongoClient client, String database) {
        Objects.requireNonNull(client, "client must not be null");
        Objects.requireNonNull(database, "database must not be null");
        if (database.isEmpty()) {
            throw new IllegalArgumentException("database must not be empty");
        }
        return new Builder(client.getDatabase(database));
    }

    /** A builder for a store in {@code database}. */
    public static Builder builder(MongoDatabase database) {
        return new Builder(Objects.requireNonNull(database, "database must not be null"));
    }

    /** A limiter with {@code config} whose state lives in this store's collection. */
    @Override
    public RateLimiter bind(LimiterConfig config) {
        Objects.requireNonNull(config, "config must not be null");
        return SharedRateLimiter.create(config, new MongoDecider(config, options, collection, ids, compactAfter,
                this::ensureIndex), options);
    }

    /** The options every limiter of this store runs with. */
    public SharedStoreOptions options() {
        return options;
    }

    /** The collection holding the limits. */
    public String collectionName() {
        return collection.getNamespace().getCollectionName();
    }

    /**
     * Creates the TTL index unless it is known to exist, in the time left until {@code deadline}. A failure (the
     * server is down, the user may not create indexes) goes to the failure listener, and is tried again after a
     * decision at least a minute later.
     */
    private void ensureIndex(long deadline) {
        if (indexed) {
            return;
        }
        long now = System.nanoTime();
        long due = nextIndexAttempt.get();
        MongoCollection<Document> rest = within(collection, deadline);
        if (now - due < 0 || rest == null || !nextIndexAttempt.compareAndSet(due, now + INDEX_RETRY_NANOS)) {
            return;
        }
        try {
            rest.createIndex(Indexes.ascending(MongoDecider.EXPIRE),
                    new IndexOptions().name(EXPIRE_INDEX).expireAfter(0L, TimeUnit.SECONDS));
            indexed = true;
        } catch (MongoException e) {
            options.failureListener().accept(new SluiceException("could not create the TTL index " + EXPIRE_INDEX
                    + " on " + collection.getNamespace() + " (tried again in a minute): " + e, e));
        }
    }

    /** {@code collection} with the time left until {@code deadline} as its timeout; null if less than a millisecond. */
    static MongoCollection<Document> within(MongoCollection<Document> collection, long deadline) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        return left < 1 ? null : collection.withTimeout(left, TimeUnit.MILLISECONDS);
    }

    @Override
    public String toString() {
        return "MongoStore[" + collection.getNamespace() + ", namespace=" + options.namespace() + ", "
                + options.timeSource() + ", " + options.failurePolicy() + ", timeout=" + options.timeout() + "]";
    }

    /**
     * Builds a {@link MongoStore}: the common options of {@link SharedStoreBuilder} and the collection. Not
     * thread-safe; setters validate at once.
     *
     * <p>The {@link #timeout timeout} bounds every call to the server, including waiting for a server to be
     * selected, a connection and the reply, whatever the client's own timeouts; the client needs no particular
     * settings.
     */
    public static final class Builder extends SharedStoreBuilder<Builder> {

        private final MongoDatabase database;
        private String collection = DEFAULT_COLLECTION;
        private boolean createIndex = true;
        private int compactAfter = MongoDecider.DEFAULT_COMPACT_AFTER;

        private Builder(MongoDatabase database) {
            this.database = database;
        }

        /** The collection that holds the limits; default {@value MongoStore#DEFAULT_COLLECTION}. */
        public Builder collection(String name) {
            Objects.requireNonNull(name, "collection must not be null");
            if (name.isEmpty() || name.contains("$") || name.startsWith("system.") || name.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("collection must be a valid MongoDB collection name, was '"
                        + name + "'");
            }
            this.collection = name;
            return this;
        }

        /**
         * Whether the store creates its TTL index {@value MongoStore#EXPIRE_INDEX} on {@code expire} (default
         * {@code true}). Turn it off where the application's user may not create indexes, and create the index
         * {@code {expire: 1}, {expireAfterSeconds: 0}} by other means: without it idle keys are never deleted.
         */
        public Builder createIndex(boolean createIndex) {
            this.createIndex = createIndex;
            return this;
        }

        /** How many requests a key's document records before they are folded into its state; for tests. */
        Builder compactAfter(int requests) {
            if (requests <= 0) {
                throw new IllegalArgumentException("compactAfter must be > 0, was " + requests);
            }
            this.compactAfter = requests;
            return this;
        }

        /**
         * The store. Tries to create the TTL index at once, within the timeout; if that fails (the server cannot be
         * reached) the store is built all the same and tries again later.
         */
        public MongoStore build() {
            return new MongoStore(this, options());
        }
    }
}
