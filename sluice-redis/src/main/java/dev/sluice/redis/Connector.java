package dev.sluice.redis;

import dev.sluice.SluiceException;
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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The one connection of a {@link RedisStore} or a {@link RedisCounterStore}, opened in the background from build time on, never waited for by the
 * build, so that a store built while Redis is down works as soon as Redis is up. A failed attempt is retried by a later call, at most
 * every {@value #RETRY_MILLIS} ms; once open, the connection reconnects by itself (Lettuce's auto-reconnect).
 * Thread-safe.
 *
 * @param <C> the kind of connection (standalone or cluster)
 */
final class Connector<C extends StatefulConnection<String, String>> implements AutoCloseable {

    static final long RETRY_MILLIS = 100;

    private final Supplier<CompletableFuture<C>> connect;
    private final Function<C, RedisScriptingAsyncCommands<String, String>> commandsOf;
    private final String target;
    private final boolean cluster;
    private final Object lock = new Object();
    private volatile @Nullable Open<C> ready; // written under lock; null until connected and after close
    private @Nullable CompletableFuture<C> attempt; // guarded by lock
    private long failedAt; // guarded by lock: System.nanoTime() of the last failed attempt
    private boolean closed; // guarded by lock

    /** An open connection and its commands. */
    private record Open<C>(C connection, RedisScriptingAsyncCommands<String, String> commands) {}

    private Connector(
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

    /** Starts connecting in the background unless connected or connecting; never blocks. */
    void connectSoon() {
        synchronized (lock) {
            if (!closed && ready == null && attempt == null) {
                attempt = start();
            }
        }
    }

    /**
     * The connection's commands, connecting first if needed, by {@code deadline} ({@link System#nanoTime()}).
     *
     * @throws SluiceException if there is no connection by then, or the store is closed
     */
    RedisScriptingAsyncCommands<String, String> commands(long deadline, Duration timeout) {
        return open(deadline, timeout).commands();
    }

    /**
     * The connection itself, for commands sent together ({@code dispatch} of a collection), connecting first if
     * needed, by {@code deadline} ({@link System#nanoTime()}).
     *
     * @throws SluiceException if there is no connection by then, or the store is closed
     */
    C connection(long deadline, Duration timeout) {
        return open(deadline, timeout).connection();
    }

    private Open<C> open(long deadline, Duration timeout) {
        Open<C> open = ready;
        if (open != null) {
            return open;
        }
        CompletableFuture<C> current;
        synchronized (lock) {
            if (closed) {
                throw new SluiceException("the Redis store is closed");
            }
            if (ready != null) {
                return ready;
            }
            if (attempt == null
                    || (attempt.isCompletedExceptionally()
                            && System.nanoTime() - failedAt >= TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS))) {
                attempt = start();
            }
            current = attempt;
        }
        C c = await(current, deadline, timeout, "connecting to " + target, false);
        synchronized (lock) {
            if (closed) {
                throw new SluiceException("the Redis store is closed");
            }
            return opened(c);
        }
    }

    /** Takes {@code c} as the connection unless one is already taken; the one taken. Guarded by lock. */
    private Open<C> opened(C c) {
        Open<C> open = ready;
        if (open == null) {
            open = new Open<>(c, commandsOf.apply(c));
            ready = open;
        }
        return open;
    }

    private CompletableFuture<C> start() {
        CompletableFuture<C> f;
        try {
            f = connect.get();
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        // Neither future is read: callers wait on f itself; the callback cannot fail but for a bug, and a late
        // connection's close has no one to tell it failed.
        var unusedCallback = f.whenComplete((c, error) -> {
            synchronized (lock) {
                if (error != null) {
                    failedAt = System.nanoTime();
                } else if (closed) {
                    var unusedClose = c.closeAsync();
                } else {
                    opened(c); // also when no call is waiting for it
                }
            }
        });
        return f;
    }

    /**
     * Waits for {@code f} until {@code deadline}; a future still pending then is cancelled (so a command queued
     * while disconnected is never sent later).
     *
     * @throws SluiceException on timeout, failure, cancellation or interruption, with the driver's exception as the
     *                         cause
     */
    static <T> T await(Future<T> f, long deadline, Duration timeout, String what) {
        return await(f, deadline, timeout, what, true);
    }

    /**
     * {@link #await(Future, long, Duration, String)}, leaving {@code f} running on timeout or interruption unless
     * {@code cancel}: a connection attempt is shared by every call waiting for it, and the connection it opens late
     * serves the calls after them (cancelled, it would be opened anyway, and never used nor closed).
     */
    private static <T> T await(Future<T> f, long deadline, Duration timeout, String what, boolean cancel) {
        try {
            return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            if (cancel) {
                f.cancel(false);
            }
            throw new SluiceException("no answer from Redis within " + timeout + " " + what, e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new SluiceException("Redis failed " + what + ": " + cause, cause);
        } catch (CancellationException e) {
            throw new SluiceException("cancelled while " + what, e);
        } catch (InterruptedException e) {
            if (cancel) {
                f.cancel(false);
            }
            Thread.currentThread().interrupt();
            throw new SluiceException("interrupted while " + what, e);
        }
    }

    /** Closes the connection (not the client, which belongs to the caller). Later calls fail. */
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
