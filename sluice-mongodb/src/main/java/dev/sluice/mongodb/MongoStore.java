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
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.Durations;
import dev.sluice.spi.Listeners;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.SharedJoint;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.spi.SharedStoreBuilder;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.spi.StoreConnection;
import dev.sluice.spi.WarmUp;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.bson.BsonValue;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * Limits kept in a MongoDB collection and shared by every service instance that uses it (exact mode): each decision
 * is appended to the key's document by one {@code findOneAndUpdate}, so concurrent callers on any number of instances
 * never admit more than the limit, and decide exactly as the in-memory store does. Concurrent decisions on one key
 * share that call: while one is in flight, those that arrive go together in the next (one round trip for many on a
 * hot key); decisions on different keys go side by side.
 *
 * <pre>{@code
 * MongoClient mongoClient = MongoClients.create("mongodb://db-1,db-2,db-3/?replicaSet=rs0"); // yours, with its defaults
 * RateLimitStore store = MongoStore.builder(mongoClient, "app").build();  // waits up to 10 s for the server
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
 *       as the server is back: while calls wait for a server the driver checks it every 500 ms (its minimum
 *       heartbeat frequency, not the 10 s heartbeat of an idle client; {@code MongoRecoveryTest}). The client needs
 *       no particular settings.</li>
 *   <li><b>Start-up.</b> {@link Builder#build()} waits up to the {@link Builder#startupTimeout startup timeout}
 *       (default 10 s) for the server to answer a {@code ping}, so a new process's first decisions are not failure
 *       policy answers to a connection still being made; a server that does not answer in time gives a store all the
 *       same, and a warning.</li>
 *   <li><b>Closing.</b> The client is the caller's: the store never closes it. Once it is closed, every call throws
 *       an {@link IllegalStateException} saying so (the driver's {@code "state should be: open"} is its cause), which
 *       the limiter passes to its caller instead of the failure policy.</li>
 * </ul>
 *
 * Thread-safe.
 *
 * <p><b>Synchronized mode.</b> {@link #counterStoreBuilder(MongoDatabase)} builds the {@link CounterStore} that
 * {@link dev.sluice.sync.SynchronizedStore} shares counts through, in the document shape of Allegro's rate limiter.
 */
public final class MongoStore implements RateLimitStore {

    /** The collection used when none is given. */
    public static final String DEFAULT_COLLECTION = "sluice_rate_limits";
    /** The name of the TTL index the store creates on {@code expire}. */
    public static final String EXPIRE_INDEX = "sluice_expire";

    private static final long INDEX_RETRY_NANOS = 60_000_000_000L;
    private static final Duration MAX_WAIT = Duration.ofDays(365);
    private static final System.Logger LOG = System.getLogger(MongoStore.class.getName());

    private final MongoCollection<Document> collection;
    private final SharedStoreOptions options;
    private final int compactAfter;
    private final OpIds ids = OpIds.random();
    private final SharedJoint joint;
    private final MongoBatches batches;
    private volatile boolean indexed;
    private final AtomicLong nextIndexAttempt = new AtomicLong(System.nanoTime()); // System.nanoTime()

    private MongoStore(Builder b, SharedStoreOptions options) {
        this.options = options;
        this.joint = new SharedJoint(null, options);
        this.compactAfter = b.compactAfter;
        MongoCollection<Document> c = b.database
                .getCollection(b.collection)
                .withCodecRegistry(MongoClientSettings.getDefaultCodecRegistry())
                .withReadPreference(ReadPreference.primary())
                // at least 1 ms: the driver reads a timeout of 0 as none at all
                .withTimeout(Math.max(1, options.timeout().toMillis()), TimeUnit.MILLISECONDS);
        WriteConcern w = b.database.getWriteConcern();
        this.collection = w.isAcknowledged() ? c : c.withWriteConcern(WriteConcern.ACKNOWLEDGED);
        this.batches = new MongoBatches(b.database.withReadPreference(ReadPreference.primary()), collection);
        this.indexed = !b.createIndex;
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

    /**
     * {@code database} of {@code client} as a {@link StoreConnection}, for {@link dev.sluice.assembly.StoreAssembly}
     * to build the store of a mode on; closing the connection leaves the client open.
     */
    public static StoreConnection connection(MongoClient client, String database) {
        return connection(client, database, () -> {});
    }

    static StoreConnection connection(MongoClient client, String database, AutoCloseable closer) {
        return StoreConnection.of(
                (timeout, overLimitCache) -> {
                    Builder b = builder(client, database).overLimitCache(overLimitCache);
                    return (timeout == null ? b : b.timeout(timeout)).build();
                },
                () -> counterStoreBuilder(client, database),
                closer);
    }

    /** A builder for the counter store of synchronized mode in {@code database} of {@code client}. */
    public static CounterStoreBuilder counterStoreBuilder(MongoClient client, String database) {
        Objects.requireNonNull(client, "client must not be null");
        Objects.requireNonNull(database, "database must not be null");
        if (database.isEmpty()) {
            throw new IllegalArgumentException("database must not be empty");
        }
        return new CounterStoreBuilder(client.getDatabase(database));
    }

    /**
     * A builder for the counter store of synchronized mode ({@link dev.sluice.sync.SynchronizedStore}) in
     * {@code database}: the records every instance flushes its counts to and refreshes them from.
     *
     * <pre>{@code
     * CounterStore counters = MongoStore.counterStoreBuilder(database).build();
     * SynchronizedStore sync = SynchronizedStore.builder(counters).build();
     * RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
     *         .limit(100, Duration.ofMinutes(1))
     *         .store(sync)
     *         .build();
     * }</pre>
     *
     * <p>A record is one document, in a collection per limiter shape (such as {@code tail:60000000000}),
     * shaped as in Allegro's write-up:
     *
     * <pre>{@code
     * { _id: { clientId: "abc", username: "jane" },        // the key "abc:jane", by the KeyCodec
     *   version: NumberLong("6108471327014410087"),        // random, new with every write
     *   expire: ISODate("2026-01-01T12:04:00Z"),           // TTL index {expire: 1}, expireAfterSeconds: 0
     *   requestCounters: { "1767268800": NumberLong(12),   // frame start in epoch seconds -> count
     *                      "1767268860": NumberLong(3) } }
     * }</pre>
     *
     * <ul>
     *   <li><b>Keys.</b> The {@link KeyCodec} maps a limiter's key to {@code _id}; by default
     *       {@link KeyCodec#clientAndUser()}. Any key is safe: dots, dollars and any Unicode are string values, and a
     *       key that is long, holds a NUL or is not valid UTF-16 is named by a hash.</li>
     *   <li><b>Frames.</b> {@code requestCounters} maps each frame (a window or sub-window) to its count
     *       ({@code NumberLong}), named by its start in epoch seconds; a frame that does not start on a whole second
     *       (sub-windows shorter than a second) is named with the nanoseconds too, {@code "1767268800_250000000"}.
     *       Counts are exact whatever the frame size.</li>
     *   <li><b>Calls.</b> {@code load} is one {@code find({_id: {$in: [...]}})}; {@code compareAndSet} is one unordered
     *       {@code bulkWrite} of {@code replaceOne({_id, version: expected}, record, {upsert: true})}: a
     *       duplicate-key error at a write's index is a conflict. A write expecting a version whose record is gone
     *       (deleted by the TTL index) creates the record and is reported applied, which leaves the store holding
     *       what a refusal, a re-read and a create would have written.</li>
     *   <li><b>Expiry.</b> {@code expire} is the moment the record's last frame stops counting plus a minute, for
     *       a server clock that runs ahead (above, a sliding tail over a minute: the frame of 12:01 counts until
     *       12:03); the store creates the TTL index {@value #EXPIRE_INDEX} on each collection it uses.</li>
     *   <li><b>Failures.</b> Every call runs under the builder's {@link CounterStoreBuilder#timeout timeout}, applied
     *       as the driver's client-side operation timeout. A failure throws a {@link SluiceException} whose cause is
     *       the driver's exception; the synchronized store keeps the counts and writes them when the server is
     *       back.</li>
     * </ul>
     */
    public static CounterStoreBuilder counterStoreBuilder(MongoDatabase database) {
        return new CounterStoreBuilder(Objects.requireNonNull(database, "database must not be null"));
    }

    /**
     * A limiter with {@code config} whose state lives in this store's collection. Every limiter of this store shares
     * one joint decider: a joint request over them takes each part in turn and, at the first refusal, gives back what
     * it took (mongo-java-server and single-document updates offer nothing atomic over several documents).
     */
    @Override
    public RateLimiter bind(LimiterConfig config) {
        Objects.requireNonNull(config, "config must not be null");
        return SharedRateLimiter.create(config, decider(config), options, joint);
    }

    private MongoDecider decider(LimiterConfig config) {
        return decider(config, options.namespace());
    }

    /** A decider of this store whose documents are under {@code namespace}. */
    private MongoDecider decider(LimiterConfig config, String namespace) {
        return new MongoDecider(config, namespace, options, collection, ids, compactAfter, this::ensureIndex, batches);
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
            rest.createIndex(
                    Indexes.ascending(MongoDecider.EXPIRE),
                    new IndexOptions().name(EXPIRE_INDEX).expireAfter(0L, TimeUnit.SECONDS));
            indexed = true;
        } catch (IllegalStateException e) {
            throw closed(collection.getNamespace(), e);
        } catch (MongoException e) {
            Listeners.failure(
                    options.listener(),
                    null,
                    new SluiceException(
                            "could not create the TTL index " + EXPIRE_INDEX + " on " + collection.getNamespace()
                                    + " (tried again in a minute): " + e,
                            e));
        }
    }

    /**
     * Waits up to {@code startupTimeout} for a server of {@code database} to answer a {@code ping} (zero: does not
     * wait). If none does, logs one warning saying so and returns false; the driver goes on looking for the server in
     * the background.
     *
     * @throws IllegalStateException if the client is closed
     */
    static boolean awaitServer(MongoDatabase database, Duration startupTimeout, String what) {
        if (startupTimeout.isZero()) {
            return false;
        }
        // at least 1 ms: the driver reads 0 as no timeout at all
        long millis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(boundedNanos(startupTimeout)));
        try {
            database.withTimeout(millis, TimeUnit.MILLISECONDS).runCommand(new Document("ping", 1));
            return true;
        } catch (MongoException e) {
            LOG.log(
                    Level.WARNING,
                    "MongoDB did not answer " + what + " on " + database.getName() + " within the startup timeout of "
                            + Durations.format(startupTimeout)
                            + "; built all the same: each decision waits for the server up to the"
                            + " store's timeout and is answered by the failure policy until the server is found: "
                            + e);
            return false;
        } catch (IllegalStateException e) {
            throw closed(database.getName(), e);
        }
    }

    /**
     * The exception for the driver's {@link IllegalStateException} (such as {@code "state should be: open"}): the
     * driver throws one only when the client (or a session or pool of it) has been closed, a mistake of the
     * application that no failure policy answers for.
     */
    static IllegalStateException closed(Object where, IllegalStateException e) {
        if (e instanceof ClientClosedException) {
            return e;
        }
        return new ClientClosedException(
                "the MongoClient behind the Sluice store on " + where + " has been closed (the driver says: "
                        + e.getMessage() + "); close the store's users before the client",
                e);
    }

    /** {@code d} in nanoseconds, at most a year's (so that adding it to {@link System#nanoTime()} cannot overflow). */
    static long boundedNanos(Duration d) {
        return d.compareTo(MAX_WAIT) > 0 ? MAX_WAIT.toNanos() : d.toNanos();
    }

    /** Thrown by a store whose MongoClient has been closed: told apart from a malformed document's failure. */
    static final class ClientClosedException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        ClientClosedException(String message, IllegalStateException cause) {
            super(message, cause);
        }
    }

    /** {@code collection} with the time left until {@code deadline} as its timeout; null if less than a millisecond. */
    static <T> @Nullable MongoCollection<T> within(MongoCollection<T> collection, long deadline) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        return left < 1 ? null : collection.withTimeout(left, TimeUnit.MILLISECONDS);
    }

    /** {@code name} if MongoDB accepts it as a collection name. */
    static String requireCollectionName(String name) {
        Objects.requireNonNull(name, "collection must not be null");
        if (name.isEmpty() || name.contains("$") || name.startsWith("system.") || name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException(
                    "collection must be a valid MongoDB collection name, was '" + name + "'");
        }
        return name;
    }

    @Override
    public String toString() {
        return "MongoStore[" + collection.getNamespace() + ", namespace=" + options.namespace() + ", "
                + options.timeSource() + ", " + options.failurePolicy() + ", timeout="
                + Durations.format(options.timeout()) + "]";
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
            this.collection = requireCollectionName(name);
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
         * The store. First waits up to the {@link #startupTimeout startup timeout} (default 10 s) for the server to
         * answer a {@code ping}, then creates the TTL index in what is left of it, and within the same bound makes the
         * store's first calls itself ({@link WarmUp}: a {@code peek} and a consuming decision through the batches of every
         * algorithm, from several threads, on a key under a namespace of the warm-up's own), so that the first decisions of a new process find a connected client whose connections are open
         * and whose classes are loaded, instead of being answered by the failure policy. If the server does not
         * answer in time, the store is built all the same and one warning is logged ({@link System.Logger}
         * {@code dev.sluice.mongodb.MongoStore}); until the driver finds the server, each decision waits for it up to
         * the store's {@link #timeout timeout} and is then answered by the failure policy, and the TTL index is created
         * after the first decision the server answers.
         * With a startup timeout of zero, nothing is sent before the first decision.
         *
         * @throws IllegalStateException if the client is closed
         */
        public MongoStore build() {
            MongoStore store = new MongoStore(this, options());
            long start = System.nanoTime();
            long deadline = start + boundedNanos(startupTimeout());
            if (awaitServer(database, startupTimeout(), "a ping from the exact-mode store")) {
                store.ensureIndex(deadline);
                store.batches.warm(deadline);
                WarmUp.run(
                        startupTimeout().minusNanos(System.nanoTime() - start),
                        WarmUp.calls(config -> store.decider(config, WarmUp.namespace(store.options.namespace()))));
            }
            return store;
        }
    }
    /**
     * Maps a limiter's key to the {@code _id} of its document in the counter store
     * ({@link MongoStore#counterStoreBuilder}). It must be injective, two keys never getting equal {@code _id}s (the
     * store checks within each call, and throws if two keys of a call get one), and give a value MongoDB accepts as
     * {@code _id}. Implementations are stateless and thread-safe.
     */
    @FunctionalInterface
    public interface KeyCodec {

        /** The {@code _id} of the document of {@code key}, a non-empty key. */
        BsonValue id(String key);

        /**
         * Allegro's {@code {clientId, username}}, the default: the key is split at its first colon,
         * {@code "abc:jane"} giving {@code {clientId: "abc", username: "jane"}}, {@code "abc:jane:x"}
         * {@code {clientId: "abc", username: "jane:x"}}, and a key without a colon, as a client-credentials key,
         * {@code "abc"} giving {@code {clientId: "abc"}} with no username (not a null one: {@code "abc:"} is
         * {@code {clientId: "abc", username: ""}}). A key over 256 UTF-8 bytes, holding a NUL or an unpaired
         * surrogate is {@code {sha256: "<the SHA-256 of its UTF-16 code units, base64url>"}} instead, which no other
         * key's {@code _id} equals.
         */
        static KeyCodec clientAndUser() {
            return MongoKeys::clientAndUser;
        }

        /**
         * The key itself as a string {@code _id}; a key over 256 UTF-8 bytes, holding a NUL or an unpaired surrogate is
         * {@code {sha256: "<hash>"}} instead, as with {@link #clientAndUser()}.
         */
        static KeyCodec string() {
            return MongoKeys::string;
        }
    }

    /**
     * Builds the {@link CounterStore} of synchronized mode: see {@link MongoStore#counterStoreBuilder(MongoDatabase)}.
     * The options of every counter store ({@link dev.sluice.spi.CounterStoreBuilder}): the {@link #timeout timeout}
     * bounds each call (a read or a write of a batch, and the TTL index's creation after it), applied as the driver's
     * client-side operation timeout; the {@link #listener listener} hears when the TTL index cannot be created (tried
     * again a minute later), while failed reads and writes throw and the synchronized store reports them. Not
     * thread-safe; setters validate at once.
     */
    public static final class CounterStoreBuilder extends dev.sluice.spi.CounterStoreBuilder<CounterStoreBuilder> {

        private final MongoDatabase database;
        private @Nullable Function<? super String, String> naming; // null: defaultCollection
        private KeyCodec keyCodec = KeyCodec.clientAndUser();
        private boolean createIndex = true;

        private CounterStoreBuilder(MongoDatabase database) {
            this.database = database;
        }

        /**
         * The prefix of the collections; default {@code "sluice"}. The records of a shape are in the collection
         * {@code <namespace>_counters_<shape>}, with each {@code ':'} of the shape written {@code '_'}: for example
         * {@code sluice_counters_tail_60000000000} for a sliding tail over a minute, and
         * {@code sluice_counters_swc_1000000000_4} for a sub-window counter over a second with four sub-windows.
         * (Another character than a letter, digit, {@code '-'} or {@code ':'} is written {@code '.'} and four hex
         * digits, so that different shapes never share a collection.) Checked as every store's namespace is
         * ({@link SharedStoreOptions#requireNamespace}), which rules out what MongoDB refuses at the start of a
         * collection name.
         */
        @Override
        public CounterStoreBuilder namespace(String namespace) {
            return super.namespace(namespace);
        }

        /**
         * Names the collection of each shape instead of {@link #namespace}; it must give different shapes different
         * names, each a valid collection name (checked at the first use of a shape).
         */
        public CounterStoreBuilder collectionNaming(Function<? super String, String> naming) {
            this.naming = Objects.requireNonNull(naming, "collectionNaming must not be null");
            return this;
        }

        /** Maps keys to {@code _id}s; default {@link KeyCodec#clientAndUser()}. */
        public CounterStoreBuilder keyCodec(KeyCodec codec) {
            this.keyCodec = Objects.requireNonNull(codec, "keyCodec must not be null");
            return this;
        }

        /**
         * Whether the store creates the TTL index {@value MongoStore#EXPIRE_INDEX} on {@code expire} in each
         * collection it uses (default {@code true}), at its first call there. Turn it off where the application's
         * user may not create indexes, and create {@code {expire: 1}, {expireAfterSeconds: 0}} by other means:
         * without it records are never deleted.
         */
        public CounterStoreBuilder createIndex(boolean createIndex) {
            this.createIndex = createIndex;
            return this;
        }

        /**
         * The counter store. Waits up to the {@link #startupTimeout startup timeout} (default 10 s) for the server to
         * answer a {@code ping}, so that a new process's first flush and refresh find a connected client; the TTL
         * indexes are created at the first call in each collection. If the server does not answer in time, the store
         * is built all the same and one warning is logged ({@link System.Logger}
         * {@code dev.sluice.mongodb.MongoStore}); until the driver finds the server each call waits for it up to the
         * {@link #timeout timeout} and throws, and the synchronized store keeps its counts meanwhile. With a startup
         * timeout of zero, nothing is sent before the first call.
         *
         * @throws IllegalStateException if the client is closed
         */
        @Override
        public CounterStore build() {
            awaitServer(database, startupTimeout(), "a ping from the counter store");
            String ns = namespace();
            Function<? super String, String> n =
                    naming != null ? naming : shape -> MongoCounterStore.defaultCollection(ns, shape);
            return new MongoCounterStore(database, n, keyCodec, timeout().toNanos(), createIndex, listener());
        }
    }
}
