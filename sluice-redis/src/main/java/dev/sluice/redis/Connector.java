package dev.sluice.redis;

import dev.sluice.SluiceException;
import dev.sluice.spi.Durations;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The one connection of a {@link RedisStore} or a {@link RedisCounterStore}, and its reconnection. Thread-safe.
 *
 * <ul>
 *   <li><b>Start-up.</b> The first connection attempt starts when the store is built, which waits for it up to the
 *       builder's {@code startupTimeout} ({@link #awaitConnected}).</li>
 *   <li><b>No call waits for a connection.</b> A call that finds no open connection fails at once, and starts an
 *       attempt in the background unless one is under way or one started less than {@value #RETRY_MILLIS} ms ago. So
 *       during an outage every call is answered by the failure policy in microseconds, not after its timeout.</li>
 *   <li><b>A lost connection is replaced, not waited for.</b> Lettuce reconnects a lost connection by itself, but
 *       with the backoff of the client's resources (by default up to 30 s between attempts), and, with its default
 *       options, queues the commands sent meanwhile. A call that finds the connection inactive closes it (which ends
 *       Lettuce's attempts) and opens a new one as above. Correct answers are thus back within about
 *       {@value #RETRY_MILLIS} ms of Redis accepting connections again, whatever the client's options.</li>
 * </ul>
 *
 * <p>Example: Redis crashes at 12:00:00.000 and is back at 12:00:05.000, calls coming every millisecond. The call
 * at 12:00:00.001 finds the connection inactive, drops it, starts an attempt (refused within a millisecond) and
 * fails; the calls after it fail at once, and one every 100 ms starts an attempt. The attempt of 12:00:05.000 (or at
 * the latest of 12:00:05.100) connects, and the calls after it are decided by Redis again.
 *
 * @param <C> the kind of connection (standalone or cluster)
 */
final class Connector<C extends StatefulConnection<String, String>> implements AutoCloseable {

    static final long RETRY_MILLIS = 100;

    private static final System.Logger LOG = System.getLogger(Connector.class.getName());

    private final Supplier<CompletableFuture<C>> connect;
    private final Function<C, RedisScriptingAsyncCommands<String, String>> commandsOf;
    private final String target;
    private final boolean cluster;
    private final Object lock = new Object();
    private volatile @Nullable Open<C> ready; // written under lock; null until connected, after a loss and after close
    private @Nullable CompletableFuture<C> attempt; // guarded by lock: the attempt under way, if any
    // guarded by lock: done once the last attempt's outcome is recorded (ready or lastFailure set); what awaitConnected
    // waits for, since the attempt itself wakes its waiters before its callback has run
    private @Nullable CompletableFuture<?> settled;
    private long attemptedAt; // guarded by lock: System.nanoTime() when the last attempt started
    private boolean attempted; // guarded by lock: whether any attempt started
    private @Nullable Throwable lastFailure; // guarded by lock: why the last attempt failed, or the connection was lost
    private boolean closed; // guarded by lock

    /** An open connection and its commands. */
    private record Open<C>(C connection, RedisScriptingAsyncCommands<String, String> commands) {}

    Connector(
            Supplier<CompletableFuture<C>> connect,
            Function<C, RedisScriptingAsyncCommands<String, String>> commandsOf,
            String target,
            boolean cluster) {
        this.connect = connect;
        this.commandsOf = commandsOf;
        this.target = target;
        this.cluster = cluster;
    }

    static Connector<StatefulRedisConnection<String, String>> standalone(RedisClient client) {
        return new Connector<>(
                () -> inBackground(() -> client.connect(StringCodec.UTF8)),
                StatefulRedisConnection::async,
                "Redis",
                false);
    }

    static Connector<StatefulRedisClusterConnection<String, String>> cluster(RedisClusterClient client) {
        return new Connector<>(
                () -> inBackground(() -> client.connect(StringCodec.UTF8)),
                StatefulRedisClusterConnection::async,
                "Redis Cluster",
                true);
    }

    /**
     * Runs a blocking connect on a thread of its own. Lettuce's asynchronous connects do not fit: a
     * {@code RedisClient} connects asynchronously only to a URI given with the call (it keeps its own private), and
     * a {@code RedisClusterClient} only once its topology has been loaded, which blocks.
     */
    private static <C> CompletableFuture<C> inBackground(Supplier<C> connect) {
        return CompletableFuture.supplyAsync(connect, task -> {
            Thread t = new Thread(task, "sluice-redis-connect");
            t.setDaemon(true);
            t.start();
        });
    }

    /** Whether this connects to a Redis Cluster, where a script's keys must share one hash slot. */
    boolean cluster() {
        return cluster;
    }

    /** Whether the connection is open now: connected, not lost, not closed. */
    boolean connected() {
        Open<C> open = ready;
        return open != null && open.connection().isOpen();
    }

    /**
     * Starts connecting and waits up to {@code bound} for the connection; returns whether it is open. A connection
     * that is not open by then is still being made, or will be by the next call; the wait is logged.
     */
    boolean awaitConnected(Duration bound) {
        CompletableFuture<?> current;
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the " + target + " store is closed");
            }
            if (ready == null && attempt == null) {
                start();
            }
            current = ready == null ? settled : null;
        }
        if (current != null && !bound.isZero()) {
            try {
                current.get(bound.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException | CancellationException e) {
                // told below
            }
        }
        if (connected()) {
            return true;
        }
        if (!bound.isZero()) {
            Throwable why;
            synchronized (lock) {
                why = lastFailure;
            }
            LOG.log(
                    System.Logger.Level.WARNING,
                    "Sluice: not connected to " + target + " after " + Durations.format(bound)
                            + (why == null ? "" : " (" + why + causedBy(why) + ")")
                            + "; decisions follow the failure policy until it is, and the store keeps connecting");
        }
        return false;
    }

    /**
     * The connection's commands.
     *
     * @throws SluiceException        if there is no open connection now (one is then being made)
     * @throws IllegalStateException if the store is closed
     */
    RedisScriptingAsyncCommands<String, String> commands() {
        return open().commands();
    }

    /**
     * The connection itself, for commands sent together ({@code dispatch} of a collection).
     *
     * @throws SluiceException        if there is no open connection now (one is then being made)
     * @throws IllegalStateException if the store is closed
     */
    C connection() {
        return open().connection();
    }

    private Open<C> open() {
        Open<C> open = ready;
        if (open != null && open.connection().isOpen()) {
            return open;
        }
        Throwable why;
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the " + target + " store is closed");
            }
            open = ready;
            if (open != null) {
                if (open.connection().isOpen()) {
                    return open;
                }
                ready = null; // lost: Lettuce would reconnect it at its own pace; a new one is made at ours
                lastFailure = new SluiceException("the connection to " + target + " was lost");
                var unusedClose = open.connection().closeAsync();
            }
            long now = System.nanoTime();
            if (attempt == null && (!attempted || now - attemptedAt >= TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS))) {
                start();
            }
            why = lastFailure;
        }
        if (why == null) {
            throw new SluiceException("not connected to " + target + " yet; connecting");
        }
        throw new SluiceException(
                "not connected to " + target + ": " + why.getMessage() + causedBy(why) + "; connecting", why);
    }

    /**
     * {@code ", caused by "} and the root cause of {@code t}, if it has another: the reason behind Lettuce's "Unable to
     * connect", such as a TLS handshake's refusal; "" if none.
     */
    static String causedBy(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == t ? "" : ", caused by " + root;
    }

    /** Starts an attempt; the caller holds the lock and has checked that none is under way. */
    private void start() {
        attempted = true;
        attemptedAt = System.nanoTime();
        CompletableFuture<C> f = connectOrFail();
        attempt = f;
        // Waiting for the attempt itself is not enough: a waiter on it may wake before this callback has made the
        // connection ready, and report a connection just made as missing. awaitConnected waits for this one.
        settled = f.whenComplete((c, error) -> {
            synchronized (lock) {
                if (attempt == f) {
                    attempt = null;
                }
                if (error != null) {
                    lastFailure =
                            error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
                } else if (closed) {
                    var unusedClose = c.closeAsync();
                } else {
                    ready = new Open<>(c, commandsOf.apply(c));
                }
            }
        });
    }

    private CompletableFuture<C> connectOrFail() {
        try {
            return connect.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Waits for {@code f} until {@code deadline}; a future still pending then is cancelled.
     *
     * @throws SluiceException on timeout, failure, cancellation or interruption, with the driver's exception as the
     *                         cause
     */
    static <T> T await(Future<T> f, long deadline, Duration timeout, String what) {
        try {
            return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            f.cancel(false);
            throw new SluiceException("no answer from Redis within " + Durations.format(timeout) + " " + what, e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new SluiceException("Redis failed " + what + ": " + cause, cause);
        } catch (CancellationException e) {
            throw new SluiceException("cancelled while " + what, e);
        } catch (InterruptedException e) {
            f.cancel(false);
            Thread.currentThread().interrupt();
            throw new SluiceException("interrupted while " + what, e);
        }
    }

    /** Closes the connection (not the client, which belongs to the caller); later calls throw {@link IllegalStateException}. */
    @Override
    public void close() {
        Open<C> open;
        synchronized (lock) {
            closed = true;
            open = ready;
            ready = null;
        }
        if (open != null) {
            open.connection().close();
        }
    }

    @Override
    public String toString() {
        return target;
    }
}
