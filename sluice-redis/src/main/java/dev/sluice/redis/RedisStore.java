package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.TimeSource;
import dev.sluice.spi.Durations;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.SharedJoint;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.spi.SharedStoreBuilder;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.spi.StoreConnection;
import dev.sluice.spi.WarmUp;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Limits shared across service instances through Redis or Redis Cluster (Lettuce), in exact mode: every decision,
 * {@code peek}, reservation and cancel is one atomic Lua script on the server, with no client-side retry loop. The
 * consuming decisions of concurrent callers share round trips: while one batch is in flight, those that arrive go
 * together in the next (one script run over all of them, per hash slot on a cluster), so a lone caller waits one round
 * trip and many callers share each.
 *
 * <pre>{@code
 * RedisClient client = RedisClient.create("redis://localhost:6379");
 * RedisStore store = RedisStore.builder(client)               // waits up to 10 s for the connection
 *         .failurePolicy(FailurePolicy.FAIL_OPEN)             // the default: allow, marked Decision.failed()
 *         .failureListener(e -> metrics.storeFailed(e))       // else a warning a minute is logged
 *         .build();
 * RateLimiter limiter = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
 *         .limit(100, Duration.ofMinutes(1))
 *         .store(store)
 *         .build();
 * ...
 * store.close();                                              // then client.shutdown()
 * }</pre>
 *
 * <p>Each limiter a store binds answers as the in-memory store would, request by request, at a resolution of one
 * microsecond: request times are floored to the microsecond and reported durations rounded up to it. Its state
 * survives only as long as Redis keeps it (a server without persistence forgets on restart).
 *
 * <p>A joint request ({@link RateLimiter#tryAcquireAll}) over limiters of one store is one run of one script over
 * all its keys, atomic like a single decision: on a standalone Redis always, on a Redis Cluster when its keys share
 * a hash slot (the same user key does: it is the hash tag). Keys in different slots are taken in order and given
 * back at the first refusal.
 *
 * <p>Synchronized mode, where instances decide from memory and share counts in bulk instead of a round trip per
 * decision, runs on the counter store from {@link #counterStoreBuilder(RedisClient)} (or the cluster variant).
 *
 * <p><b>Connection.</b> A store holds one connection of its own, and keeps it up itself:
 * <ul>
 *   <li>{@link Builder#build()} waits for it, up to the builder's
 *       {@link dev.sluice.spi.StoreBuilder#startupTimeout startupTimeout} (10 s by default), and within the same
 *       bound makes the store's first calls itself ({@link WarmUp}: a {@code peek} and a consuming decision through
 *       the batches of every algorithm, on a key under a namespace of the warm-up's own), so the first decisions of a new process are Redis's, not the failure policy's answer to a cold
 *       call. If Redis does not answer by then, the store is built
 *       all the same, logs a warning, and keeps connecting.</li>
 *   <li>A call that finds no open connection (Redis down, the connection lost) does not wait: the
 *       {@link dev.sluice.FailurePolicy} answers it at once, and the store opens a new connection, an attempt at
 *       most every 100 ms while calls come. Decisions are Redis's again within about 100 ms of Redis accepting
 *       connections, whatever the client's own reconnect settings (Lettuce's backoff reaches 30 s).</li>
 *   <li>A connection that is up but gets no answer (a stalled or partitioned server) costs each call its
 *       {@link Builder#timeout(Duration) timeout}, after which the failure policy decides. A consuming decision
 *       ({@code tryAcquire}, {@code reserve}, a joint request) answered by the failure policy this way takes nothing:
 *       it is never sent if it still waited for its batch, and the script refuses it if Redis runs it past its
 *       deadline (see {@code RedisBatches}). A {@code peek} or a {@code cancel} that times out after its command
 *       reached Redis may still take effect there.</li>
 *   <li>{@link #isConnected()} tells a readiness probe whether the connection is open. {@link #close()} closes it,
 *       not the client; calls throw {@link IllegalStateException} from then on.</li>
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class RedisStore implements RateLimitStore, AutoCloseable {

    /*
     * How the Redis store is designed, and why.
     *
     * Concurrent consuming decisions share round trips: RedisBatches sends, while one batch is in flight, the
     * requests that arrived meanwhile together in the next run of batch.lua, each decided in order exactly as its own
     * script below would decide it, and refused untouched if Redis runs it past its deadline. What follows is what one
     * request does within it.
     *
     * One decision is one run of the algorithm's code (resources dev/sluice/redis/*.lua: common.lua, the
     * algorithm's part, single.lua alone, or group.lua within batch.lua). The script reads the key's state, runs the algorithm exactly as
     * dev.sluice.algorithm does, writes the state back and sets its TTL. Redis runs a script atomically, so concurrent instances never
     * interleave inside a decision and no compare-and-swap loop is needed: a hot key costs one script run per
     * request, however many instances contend for it. A server that no longer knows the script (restarted, failed
     * over, a new cluster node) answers NOSCRIPT, and the same call sends it with EVAL, which also caches it.
     *
     * Joint requests: each algorithm's part is one Lua function deciding one key, with or without consuming, so the
     * single-key scripts and the batch script (common.lua, every algorithm, group.lua, batch.lua) run the same code.
     * A joint request (group.lua) decides every part without consuming, then, if all passed, every part again
     * consuming; else only the refused parts that count rejections consume. Example: 10/s and 100/min token buckets
     * on "u1", the minute's bucket empty: the second answers (denied, 0 left, retry after 600 ms), the first is not
     * touched, one round trip (alone in its batch: two limiters, one request of two parts, each limiter 1 and 2,
     * cost 1, Redis's time):
     *
     *     EVALSHA <batch> 2 sluice:{u1}:tb:1000000000 sluice:{u1}:tb:60000000000
     *             2  tb 10 1000000 0 1000 0 0  tb 100 60000000 0 1000 0 0  1  <deadline> -2  1 1 T  2 1 T
     *
     * A Redis Cluster runs a script only over keys of one slot: the parts of one user key always are (the hash tag
     * is that key); other requests are taken in order and given back at the first refusal (SharedJoint).
     *
     * Keys: namespace, the user's key as the hash tag, the state name (SharedStoreOptions.shape). For the
     * namespace "sluice", a token bucket of 100 per minute and the user key "client:{abc}":
     *
     *     sluice:{client:%7Babc%7D}:tb:60000000000   (42, 17000000, 1767268800000000, 1767268740000000)
     *
     * 42 tokens and 17000000/60000000 of one, last refilled at 2026-01-01T12:00:00Z and last full a minute before
     * (microseconds), packed as four little-endian doubles. The buckets and windows are such strings, read by GET
     * and written with their TTL by one SET ... PX: the fewest commands a script can run, which bounds a hot key.
     * The logs are hashes of entries.
     *
     * '%', '{' and '}' are percent-encoded in the namespace and the key, so the hash tag is exactly the user's key
     * (whatever characters it holds, at any length) and a key's state lives in one Redis Cluster slot.
     *
     * Time: microseconds since the epoch, from Redis TIME (TimeSource.STORE) or the limiter's Clock floored to the
     * microsecond (TimeSource.CLOCK). Lua numbers are doubles, exact for integers below 2^53 (about 285 years of
     * microseconds): times, counts and windows stay below that (windows are at most ten years, bind() checks the
     * limit, counts saturate at 2^52), and the
     * products that may exceed it (limit x window, count x window) go through an exact multiply-divide in the
     * script. Example, 1,000,000 per day: a refill over 12 h computes 43,200,000,000 us x 1,000,000 / 86,400,000,000
     * us; the product 4.32e16 is past 2^53 (9.0e15), so the script splits it and gets exactly 500,000 tokens.
     *
     * Expiry: a script that writes state sets the key's TTL to the time until the state is equivalent to a fresh one
     * (a window over, a bucket full, the newest log entry expired), rounded up to the millisecond; a state that
     * already is is deleted. With TimeSource.CLOCK the instances' clocks, not Redis's, say when that is, so keys
     * outlive it by Builder.expiryMargin to cover skew between them.
     */

    /** The highest limit Redis can hold: 2^52, where counts saturate. */
    static final long MAX_LIMIT = 1L << 52;

    private final Connector<?> connector;
    private final SharedStoreOptions options;
    private final long marginMillis;
    private final SharedJoint joint;
    private final RedisBatches batches;

    private RedisStore(Connector<?> connector, SharedStoreOptions options, Duration expiryMargin) {
        this.connector = connector;
        this.options = options;
        this.marginMillis = options.timeSource() == TimeSource.CLOCK ? expiryMargin.toMillis() : 0;
        this.batches = new RedisBatches(connector);
        this.joint = new SharedJoint(new RedisJoint(connector, batches, options.timeout()), options);
    }

    /** A builder for a store on a standalone Redis (or a proxy) through {@code client}. */
    public static Builder builder(RedisClient client) {
        Objects.requireNonNull(client, "client must not be null");
        return new Builder(() -> Connector.standalone(client));
    }

    /** A builder for a store on a Redis Cluster through {@code client}. */
    public static Builder builder(RedisClusterClient client) {
        Objects.requireNonNull(client, "client must not be null");
        return new Builder(() -> Connector.cluster(client));
    }

    /**
     * A builder for the counter store of synchronized mode ({@link dev.sluice.sync.SynchronizedStore}) on a
     * standalone Redis (or a proxy) through {@code client}: instances decide from memory and share their counts
     * through Redis in bulk, one pipeline per batch.
     */
    public static CounterStoreBuilder counterStoreBuilder(RedisClient client) {
        Objects.requireNonNull(client, "client must not be null");
        return new CounterStoreBuilder(() -> Connector.standalone(client));
    }

    /**
     * A builder for the counter store of synchronized mode ({@link dev.sluice.sync.SynchronizedStore}) on a Redis
     * Cluster through {@code client}; a batch spans slots and nodes (see {@link RedisCounterStore}).
     */
    public static CounterStoreBuilder counterStoreBuilder(RedisClusterClient client) {
        Objects.requireNonNull(client, "client must not be null");
        return new CounterStoreBuilder(() -> Connector.cluster(client));
    }

    /**
     * {@code client} as a {@link StoreConnection}, for {@link dev.sluice.assembly.StoreAssembly} to build the store of
     * a mode on; closing the connection leaves the client open.
     */
    public static StoreConnection connection(RedisClient client) {
        return connection(client, () -> {});
    }

    /**
     * {@code client} as a {@link StoreConnection}, for {@link dev.sluice.assembly.StoreAssembly} to build the store of
     * a mode on; closing the connection leaves the client open.
     */
    public static StoreConnection connection(RedisClusterClient client) {
        return connection(client, () -> {});
    }

    static StoreConnection connection(RedisClient client, AutoCloseable closer) {
        return connection(() -> builder(client), () -> counterStoreBuilder(client), closer);
    }

    static StoreConnection connection(RedisClusterClient client, AutoCloseable closer) {
        return connection(() -> builder(client), () -> counterStoreBuilder(client), closer);
    }

    private static StoreConnection connection(
            Supplier<Builder> builder, Supplier<CounterStoreBuilder> counters, AutoCloseable closer) {
        return StoreConnection.of(
                (timeout, overLimitCache) -> {
                    Builder b = builder.get().overLimitCache(overLimitCache);
                    return (timeout == null ? b : b.timeout(timeout)).build();
                },
                counters,
                closer);
    }

    /**
     * Client options that suit a rate limiter: commands fail at once while disconnected, and the client reconnects
     * by itself. The store needs none of it (it fails fast and reconnects on its own), but a client shared with other
     * work may want them.
     */
    public static ClientOptions recommendedClientOptions() {
        return ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .build();
    }

    /** {@link #recommendedClientOptions()} for a cluster client, also following topology changes as they happen. */
    public static ClusterClientOptions recommendedClusterClientOptions() {
        return ClusterClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enableAllAdaptiveRefreshTriggers()
                        .build())
                .build();
    }

    /**
     * A limiter with {@code config} whose state lives in Redis.
     *
     * @throws IllegalArgumentException if Redis cannot hold the configuration: a window that is not a whole number
     *         of microseconds, a limit above 2^52, or a sub-window shorter than 1 µs
     */
    @Override
    public RateLimiter bind(LimiterConfig config) {
        Objects.requireNonNull(config, "config must not be null");
        long windowNanos = config.windowNanos();
        if (windowNanos % 1000 != 0) {
            throw new IllegalArgumentException(
                    "window must be a whole number of microseconds on Redis, was " + Durations.format(config.window()));
        }
        if (config.limit() > MAX_LIMIT) {
            throw new IllegalArgumentException("limit must be at most 2^52 on Redis, was " + config.limit());
        }
        if (config.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER && windowNanos / 1000 < config.buckets()) {
            throw new IllegalArgumentException("buckets must be at most the window in microseconds ("
                    + windowNanos / 1000 + ") on Redis, was " + config.buckets());
        }
        return SharedRateLimiter.create(
                config, new RedisDecider(connector, batches, config, options, marginMillis), options, joint);
    }

    /** The Redis key that holds {@code key}'s state under {@code config}, for inspection and operations. */
    public String redisKey(String key, LimiterConfig config) {
        Objects.requireNonNull(config, "config must not be null");
        config.checkRequest(key, 1);
        return new RedisDecider(connector, batches, config, options, marginMillis).redisKey(key);
    }

    /** The options this store was built with. */
    public SharedStoreOptions options() {
        return options;
    }

    /** Whether the store's connection is open now: for a readiness probe. */
    public boolean isConnected() {
        return connector.connected();
    }

    /**
     * Closes the store's connection; limiters bound to it throw {@link IllegalStateException} from then on. The
     * client stays open.
     */
    @Override
    public void close() {
        connector.close();
    }

    @Override
    public String toString() {
        return "RedisStore[" + connector + ", " + options.timeSource() + ", " + options.failurePolicy() + ", timeout "
                + Durations.format(options.timeout()) + "]";
    }

    /**
     * Builds a {@link RedisStore}; obtain one from {@link RedisStore#builder(RedisClient)} or
     * {@link RedisStore#builder(RedisClusterClient)}. Not thread-safe; setters validate at once.
     */
    public static final class Builder extends SharedStoreBuilder<Builder> {

        /** The default {@link #expiryMargin(Duration)}. */
        public static final Duration DEFAULT_EXPIRY_MARGIN = Duration.ofSeconds(1);

        private final Supplier<Connector<?>> connector;
        private Duration expiryMargin = DEFAULT_EXPIRY_MARGIN;

        private Builder(Supplier<Connector<?>> connector) {
            this.connector = connector;
        }

        /**
         * With {@link TimeSource#CLOCK}: how long a key outlives the moment its state becomes equivalent to a fresh
         * one, to cover the skew between the instances' clocks (an instance whose clock is behind still needs the
         * state). Default 1 s; zero allowed. Ignored with {@link TimeSource#STORE}, where Redis's clock both decides
         * and expires.
         */
        public Builder expiryMargin(Duration margin) {
            this.expiryMargin = SharedStoreOptions.requireNonNegative("expiryMargin", margin);
            return this;
        }

        /**
         * The store, once connected or after the {@link #startupTimeout startupTimeout}: building succeeds while
         * Redis is down (a warning is logged), and calls made until the connection is up are answered by the
         * failure policy at once.
         */
        public RedisStore build() {
            long start = System.nanoTime();
            Connector<?> c = connector.get();
            boolean connected = c.awaitConnected(startupTimeout());
            RedisStore store = new RedisStore(c, options(), expiryMargin);
            if (connected) {
                WarmUp.run(
                        startupTimeout().minusNanos(System.nanoTime() - start),
                        WarmUp.calls(config -> new RedisDecider(
                                c,
                                store.batches,
                                config,
                                WarmUp.namespace(store.options.namespace()),
                                store.options,
                                store.marginMillis)));
            }
            return store;
        }
    }

    /**
     * Builds a {@link RedisCounterStore}: the options of every counter store
     * ({@link dev.sluice.spi.CounterStoreBuilder}: timeout, namespace, listener, which hears every call's time and
     * failure) and the expiry margin. Obtain one from {@link RedisStore#counterStoreBuilder}. Not thread-safe; setters
     * validate at once.
     */
    public static final class CounterStoreBuilder extends dev.sluice.spi.CounterStoreBuilder<CounterStoreBuilder> {

        private final Supplier<Connector<?>> connector;
        private Duration expiryMargin = RedisCounterStore.DEFAULT_EXPIRY_MARGIN;

        private CounterStoreBuilder(Supplier<Connector<?>> connector) {
            this.connector = connector;
        }

        /**
         * How long a record outlives its {@link dev.sluice.spi.CounterWrite#expireAt()}: the instances' clocks compute
         * that time and Redis's clock expires the record, so this covers the skew between them (an instance whose
         * clock is behind still counts the record's frames). Default 1 s; zero allowed.
         */
        public CounterStoreBuilder expiryMargin(Duration margin) {
            this.expiryMargin = SharedStoreOptions.requireNonNegative("expiryMargin", margin);
            return this;
        }

        /**
         * The store, once connected or after the {@link #startupTimeout startupTimeout}: building succeeds while
         * Redis is down (a warning is logged), and calls made until the connection is up fail at once.
         */
        @Override
        public RedisCounterStore build() {
            Connector<?> c = connector.get();
            c.awaitConnected(startupTimeout());
            return new RedisCounterStore(c, namespace(), timeout(), expiryMargin, listener());
        }
    }
}
