package dev.sluice.redis;

import dev.sluice.RateLimitListener;
import dev.sluice.SluiceException;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import dev.sluice.spi.Durations;
import dev.sluice.spi.Listeners;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.MapOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The counter store of synchronized mode ({@link dev.sluice.sync.SynchronizedStore}) on Redis or Redis Cluster
 * (Lettuce): one hash per record, read with {@code HGETALL} and compare-and-set by a small Lua script, each batch in
 * one pipeline. Obtain one from {@link RedisStore#counterStoreBuilder(io.lettuce.core.RedisClient)} or
 * {@link RedisStore#counterStoreBuilder(io.lettuce.core.cluster.RedisClusterClient)}.
 *
 * <pre>{@code
 * RedisCounterStore counters = RedisStore.counterStoreBuilder(client).build();
 * SynchronizedStore sync = SynchronizedStore.builder(counters).build();
 * RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
 *         .limit(100, Duration.ofMinutes(1))
 *         .store(sync)
 *         .build();
 * }</pre>
 *
 * <ul>
 *   <li>{@link #load}: one {@code HGETALL} per key, all sent together, one round trip.</li>
 *   <li>{@link #compareAndSet}: one {@code EVALSHA} of a compare-and-set script per write, all sent together, one
 *       round trip; a server that does not know the script ({@code NOSCRIPT}: restarted, failed over, a new cluster
 *       node) costs one more, for the writes it refused, sent with {@code EVAL}. Each write is atomic on its own:
 *       it replaces the record's version and frames and sets its expiry, or does nothing.</li>
 *   <li>Records are exact: versions (any {@code long}), frame starts (nanoseconds) and counts are kept as decimal
 *       strings, never as Lua numbers.</li>
 *   <li>Each record expires at {@link CounterWrite#expireAt()} plus the
 *       {@linkplain RedisStore.CounterStoreBuilder#expiryMargin(Duration) expiry margin}, rounded up to the
 *       millisecond ({@code PEXPIREAT}).</li>
 * </ul>
 *
 * <p><b>Failures.</b> A call that gets no complete answer within the builder's
 * {@link RedisStore.CounterStoreBuilder#timeout(Duration) timeout} (the server is down or stalled, the connection broke mid-pipeline), or whose commands fail, throws a
 * {@link SluiceException} with the driver's exception as its cause; commands still pending then are cancelled. The
 * writes of a failed {@link #compareAndSet} may have been applied, some or all: {@code SynchronizedStore} settles each
 * by reading the record again, as the {@link CounterStore} contract has it.
 *
 * <p><b>Listener.</b> The builder's {@link dev.sluice.spi.CounterStoreBuilder#listener(RateLimitListener) listener} hears how long every
 * {@link #load} and {@link #compareAndSet} took ({@code onStoreCall}) and every one that failed ({@code onStoreFailure},
 * before it is thrown), with {@code null} as the limiter: these calls are the synchronized store's background work,
 * not a request's. A listener that throws changes nothing.
 *
 * <p>Thread-safe. A store holds one connection of its own (not shared with a {@link RedisStore}): its builder waits
 * for it up to its {@link dev.sluice.spi.StoreBuilder#startupTimeout startupTimeout}; a call that finds it lost fails
 * at once and the store opens a new one, an attempt at most every 100 ms (see {@link RedisStore}). {@link #close()}
 * closes it, not the client; calls throw {@link IllegalStateException} from then on.
 */
public final class RedisCounterStore implements CounterStore, AutoCloseable {

    /*
     * How the Redis counter store is designed, and why.
     *
     * A record is a hash: field "v" the version, one field per frame (its start, nanoseconds since the epoch) holding
     * the frame's count. The key has the exact-mode store's shape and escaping: namespace, the limiter's key as the
     * hash tag, then "sync" and the shape, so that a record lives in its key's Redis Cluster slot, next to that key's
     * exact-mode state, and never meets it (exact mode's names end in the shape without "sync"). For the namespace
     * "sluice", a fixed window of 100 per minute and the key "client:{abc}", after 12 requests at 12:00:05 on
     * 2026-01-01:
     *
     *     sluice:{client:%7Babc%7D}:sync:fw:60000000000
     *         v                     6108471327014410087
     *         1767268800000000000   12
     *     PEXPIREAT 1767268861000   (the window ends at 12:01:00; one second of margin)
     *
     * Everything stays a decimal string. Versions are random 64-bit values and frames are nanoseconds (1.8e18 today),
     * both far past 2^53 where Lua's doubles stop being exact: 9007199254740993 and 9007199254740992 are the same
     * double, so a script comparing them as numbers would let a write through at a version it never read. The
     * script compares the version as a string (Long.toString writes one canonical form) and copies the frames and
     * counts as the strings they came as.
     *
     * The compare-and-set script (counter_cas.lua) reads "v", and only if it is the expected one (expected "0": only
     * if the key does not exist) deletes the hash, writes "v" and the frames, and sets PEXPIREAT. Redis runs a script
     * atomically, so a write is applied whole or not at all, whatever other instances send at the same time. After 3
     * more requests on that key, a flush of it and two other dirty keys is one pipeline of three EVALSHAs, this one
     * (expected version, new version, expiry, then frame and count)
     *
     *     EVALSHA <sha1> 1 sluice:{client:%7Babc%7D}:sync:fw:60000000000 6108471327014410087 2270925391290530443
     *             1767268861000 1767268800000000000 15
     *
     * each answered 1 (applied) or 0 (the version had moved on: another instance wrote first).
     *
     * One pipeline: the batch's commands are built first and handed to Lettuce as one collection
     * (StatefulConnection.dispatch(Collection)), which writes them to the socket in one write and flush; the replies
     * are then awaited together. On a standalone server that is one network round trip per call, however many
     * keys (up to the batch size) and however many requests each key saw. On a cluster, Lettuce's cluster connection
     * splits the collection by hash slot and writes each slot's commands to the node that owns it, all before any
     * reply is awaited: the call still costs one round trip of latency (that of the slowest node it reaches), over one
     * write per slot present in the batch.
     */

    /** The default {@link RedisStore.CounterStoreBuilder#expiryMargin(Duration)}. */
    public static final Duration DEFAULT_EXPIRY_MARGIN = Duration.ofSeconds(1);

    private static final StringCodec CODEC = StringCodec.UTF8;
    private static final String VERSION = "v";

    private final Connector<?> connector;
    private final String namespace;
    private final String keyPrefix;
    private final Duration timeout;
    private final long timeoutNanos;
    private final long marginMillis;
    private final RateLimitListener listener;

    RedisCounterStore(
            Connector<?> connector,
            String namespace,
            Duration timeout,
            Duration expiryMargin,
            RateLimitListener listener) {
        this.connector = connector;
        this.listener = listener;
        this.namespace = namespace;
        this.keyPrefix = RedisDecider.escape(namespace) + ":{";
        this.timeout = timeout;
        this.timeoutNanos = saturatedNanos(timeout);
        this.marginMillis = saturatedMillis(expiryMargin);
    }

    /**
     * The Redis key of {@code key}'s record, {@code <namespace>:{<key>}:sync:<shape>} with {@code %}, <code>{</code>
     * and <code>}</code> percent-encoded in each part, for inspection and operations.
     */
    public String redisKey(CounterKey key) {
        Objects.requireNonNull(key, "key must not be null");
        return keyPrefix + RedisDecider.escape(key.key()) + "}:sync:" + RedisDecider.escape(key.shape());
    }

    /**
     * Reads the records of {@code keys} in one pipeline of {@code HGETALL}s.
     *
     * @throws SluiceException if Redis does not answer every read within the timeout, fails one, or holds something
     *                         other than a counter record at one of the keys
     */
    @Override
    public List<CounterSnapshot> load(List<CounterKey> keys) {
        Objects.requireNonNull(keys, "keys must not be null");
        if (keys.isEmpty()) {
            return List.of();
        }
        long start = System.nanoTime();
        try {
            return loadNow(keys, start + timeoutNanos);
        } catch (SluiceException e) {
            Listeners.failure(listener, null, e);
            throw e;
        } finally {
            Listeners.call(listener, null, System.nanoTime() - start);
        }
    }

    private List<CounterSnapshot> loadNow(List<CounterKey> keys, long deadline) {
        String what = "reading " + keys.size() + " counter records";
        List<AsyncCommand<String, String, Map<String, String>>> reads = new ArrayList<>(keys.size());
        for (CounterKey key : keys) {
            CommandArgs<String, String> args = new CommandArgs<>(CODEC).addKey(redisKey(key));
            reads.add(new AsyncCommand<>(new Command<>(CommandType.HGETALL, new MapOutput<>(CODEC), args)));
        }
        send(reads, deadline, what);
        List<CounterSnapshot> snapshots = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            Object reply = outcome(reads.get(i));
            if (reply instanceof Throwable) {
                throw failure(what, (Throwable) reply);
            }
            @SuppressWarnings("unchecked")
            Map<String, String> hash = (Map<String, String>) reply;
            snapshots.add(snapshot(keys.get(i), hash));
        }
        return snapshots;
    }

    /**
     * Applies each write whose expected version is the record's, in one pipeline of compare-and-set scripts (and one
     * more, of {@code EVAL}s, for writes a server refused with {@code NOSCRIPT}).
     *
     * @throws SluiceException if Redis does not answer every write within the timeout, or fails one; the writes may
     *                         then have been applied or not, each on its own
     */
    @Override
    public boolean[] compareAndSet(List<CounterWrite> writes) {
        Objects.requireNonNull(writes, "writes must not be null");
        if (writes.isEmpty()) {
            return new boolean[0];
        }
        long start = System.nanoTime();
        try {
            return compareAndSetNow(writes, start + timeoutNanos);
        } catch (SluiceException e) {
            Listeners.failure(listener, null, e);
            throw e;
        } finally {
            Listeners.call(listener, null, System.nanoTime() - start);
        }
    }

    private boolean[] compareAndSetNow(List<CounterWrite> writes, long deadline) {
        boolean[] applied = new boolean[writes.size()];
        String what = "writing " + writes.size() + " counter records";
        List<Integer> pending = new ArrayList<>(writes.size());
        for (int i = 0; i < writes.size(); i++) {
            pending.add(i);
        }
        LuaScript script = LuaScript.COUNTER_CAS;
        for (boolean withText : new boolean[] {false, true}) {
            List<AsyncCommand<String, String, Long>> runs = new ArrayList<>(pending.size());
            for (int i : pending) {
                runs.add(cas(writes.get(i), script, withText));
            }
            send(runs, deadline, what);
            List<Integer> noScript = new ArrayList<>();
            Throwable failed = null;
            for (int j = 0; j < runs.size(); j++) {
                Object reply = outcome(runs.get(j));
                if (reply instanceof Long) {
                    applied[pending.get(j)] = (Long) reply == 1;
                } else if (!withText && isNoScript((Throwable) reply)) {
                    noScript.add(pending.get(j));
                } else if (failed == null) {
                    failed = (Throwable) reply;
                }
            }
            if (failed != null) {
                throw failure(what, failed);
            }
            if (noScript.isEmpty()) {
                break;
            }
            pending = noScript;
        }
        return applied;
    }

    /** Whether the store's connection is open now: for a readiness probe. */
    public boolean isConnected() {
        return connector.connected();
    }

    /** Closes the store's connection; calls throw {@link IllegalStateException} from then on. The client stays open. */
    @Override
    public void close() {
        connector.close();
    }

    @Override
    public String toString() {
        return "RedisCounterStore[" + connector + ", namespace " + namespace + ", timeout " + Durations.format(timeout)
                + "]";
    }

    // ---- commands -------------------------------------------------------------------------------------------------

    private AsyncCommand<String, String, Long> cas(CounterWrite w, LuaScript script, boolean withText) {
        CommandArgs<String, String> args = new CommandArgs<>(CODEC)
                .add(withText ? script.text() : script.sha())
                .add(1)
                .addKey(redisKey(w.key()))
                .add(Long.toString(w.expectedVersion()))
                .add(Long.toString(w.newVersion()))
                .add(Long.toString(expiryMillis(w.expireAtNanos())));
        for (Map.Entry<Long, Long> frame : w.counters().entrySet()) {
            args.add(Long.toString(frame.getKey())).add(Long.toString(frame.getValue()));
        }
        return new AsyncCommand<>(
                new Command<>(withText ? CommandType.EVAL : CommandType.EVALSHA, new IntegerOutput<>(CODEC), args));
    }

    /** {@code expireAtNanos} rounded up to the millisecond, plus the margin; saturated. */
    long expiryMillis(long expireAtNanos) {
        long millis =
                Math.floorDiv(expireAtNanos, 1_000_000L) + (Math.floorMod(expireAtNanos, 1_000_000L) == 0 ? 0 : 1);
        return millis > Long.MAX_VALUE - marginMillis ? Long.MAX_VALUE : millis + marginMillis;
    }

    /**
     * Sends {@code commands} as one collection, then waits for all their answers until {@code deadline}; on timeout
     * or interruption cancels those still pending and throws.
     */
    private void send(List<? extends AsyncCommand<String, String, ?>> commands, long deadline, String what) {
        StatefulConnection<String, String> connection = connector.connection();
        try {
            connection.dispatch(commands);
        } catch (RuntimeException e) {
            commands.forEach(c -> c.cancel(false));
            throw new SluiceException("Redis failed " + what + ": " + e, e);
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(commands.toArray(new CompletableFuture<?>[0]));
        try {
            all.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            // every command is done; outcome() tells which failed
        } catch (TimeoutException e) {
            commands.forEach(c -> c.cancel(false));
            throw new SluiceException("no answer from Redis within " + Durations.format(timeout) + " " + what, e);
        } catch (InterruptedException e) {
            commands.forEach(c -> c.cancel(false));
            Thread.currentThread().interrupt();
            throw new SluiceException("interrupted while " + what, e);
        }
    }

    /** The reply of a completed command, or the {@link Throwable} it failed with. */
    private static Object outcome(CompletableFuture<?> command) {
        try {
            return command.join();
        } catch (CompletionException e) {
            return e.getCause() != null ? e.getCause() : e;
        } catch (CancellationException e) {
            return e;
        }
    }

    private static SluiceException failure(String what, Throwable cause) {
        return new SluiceException("Redis failed " + what + ": " + cause, cause);
    }

    private static boolean isNoScript(@Nullable Throwable t) {
        return t instanceof RedisNoScriptException
                || (t != null && t.getMessage() != null && t.getMessage().startsWith("NOSCRIPT"));
    }

    private CounterSnapshot snapshot(CounterKey key, Map<String, String> hash) {
        if (hash == null || hash.isEmpty()) {
            return CounterSnapshot.absent();
        }
        try {
            String version = hash.get(VERSION);
            if (version == null) {
                throw new IllegalArgumentException("no field " + VERSION);
            }
            long v = Long.parseLong(version);
            if (v == CounterSnapshot.ABSENT) {
                throw new IllegalArgumentException("version " + CounterSnapshot.ABSENT);
            }
            Map<Long, Long> counters = new TreeMap<>();
            for (Map.Entry<String, String> field : hash.entrySet()) {
                if (!field.getKey().equals(VERSION)) {
                    counters.put(Long.parseLong(field.getKey()), Long.parseLong(field.getValue()));
                }
            }
            return new CounterSnapshot(v, counters);
        } catch (IllegalArgumentException e) {
            throw new SluiceException(
                    "the Redis hash " + redisKey(key) + " is not a counter record (" + e.getMessage() + "): "
                            + hash.size() + " fields",
                    e);
        }
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    private static long saturatedMillis(Duration d) {
        try {
            return d.toMillis();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
