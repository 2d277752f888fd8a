package dev.sluice.redis;

import dev.sluice.SluiceException;
import dev.sluice.spi.StoreDecision;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.SlotHash;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The consuming decisions of a {@link RedisStore}, single and joint, sent together: while one batch is in flight on a
 * lane, the requests that arrive wait, and go together in the next, as one run of {@code batch.lua}. Thread-safe.
 *
 * <p>How it is designed, and why. A decision is one script run of a few microseconds on the server, and one round
 * trip of tens of microseconds on a loopback (more across a network) for the client, its kernel and Redis's: under
 * load, the round trips, not the scripts, bound what a server and its clients decide per second. So a lane sends at
 * most one batch at a time (group commit): a request that finds the lane idle goes at once, alone, and adds no
 * latency; requests that arrive while a batch is in flight queue, and all of them (up to {@value #MAX_REQUESTS}
 * requests or {@value #MAX_KEYS} keys) go in the next batch when it returns. The batch size follows the load by
 * itself: at 64 concurrent callers about 64 requests share each round trip. Redis runs the script atomically, the
 * requests one after the other, each exactly as its own script would (a joint one all or nothing), so batching
 * changes no decision. On a Redis Cluster a script's keys must share a hash slot, so there is one lane per slot.
 *
 * <p>Deadlines. Every request carries its deadline ({@link System#nanoTime()}); its caller waits for it no longer,
 * and is then answered by the failure policy. Such a request must never be applied afterwards, or a refused request
 * would consume. A request whose deadline passes while it waits for the lane is dropped, never sent. A request in a
 * batch that reaches Redis late (a stalled server, a paused client, a frozen network) is refused by the script: each
 * carries its deadline by the server's clock, and the script, which reads the server's {@code TIME} once, answers
 * {@code 0} and touches nothing for a request past it. The server's clock is learned from the batches themselves:
 * each answer carries the {@code TIME} the script read, which is no later than the moment the answer arrived, so
 * {@code TIME - arrival} is a lower bound of the offset between the server's clock and this process's
 * {@link System#nanoTime()}; the lane keeps the highest such bound, lowered by 100 µs a second for drift. A deadline
 * sent as {@code nanoTime deadline + offset bound} is never later, by the server's clock, than the true deadline: a
 * request is never applied past its deadline, and may be refused up to one round trip before it. A lane whose offset
 * is unknown (its first batch) first runs the script with no request, to learn it.
 *
 * <p>Example: 64 callers on one key, a 2 ms round trip, a 15 ms deadline. The first request goes alone; the 63 that
 * arrive in the next 2 ms go together when it returns; Redis does 64 decisions in 2 round trips instead of 64. If
 * Redis stalls for 1 s, the batch in flight and every request queued behind it are answered by the failure policy
 * 15 ms after they came; when Redis wakes it runs the stalled batch and refuses every request of it as past its
 * deadline, and the queued ones were never sent: the counts are what they were before the stall.
 */
final class RedisBatches {

    /** The most requests in one batch. */
    static final int MAX_REQUESTS = 256;

    /** The most keys in one batch, beyond which a batch takes no more requests. */
    static final int MAX_KEYS = 1024;

    /** How much the offset bound is lowered per second, in nanoseconds: 100 µs, ten times the drift NTP allows. */
    private static final long DRIFT_PER_SECOND = 100_000;

    private final Connector<?> connector;
    private final @Nullable Lane lane; // standalone: the one lane
    private final ConcurrentHashMap<Integer, Lane> bySlot = new ConcurrentHashMap<>(); // a cluster: one lane a slot

    RedisBatches(Connector<?> connector) {
        this.connector = connector;
        this.lane = connector.cluster() ? null : new Lane();
    }

    /**
     * Decides one request in the next batch and waits for it until {@code deadlineNanos}.
     *
     * @param keys   the parts' Redis keys, all in one hash slot
     * @param fields the 9 fields of each part, in order ({@code group.lua})
     * @param joint  all or nothing ({@code joint.lua}); else one part, acquiring ({@code single.lua})
     * @throws SluiceException       if Redis fails or does not answer by the deadline; the request then took nothing
     *                               (but for one Redis ran in time whose answer came too late)
     * @throws IllegalStateException if the store is closed
     */
    List<StoreDecision> decide(String[] keys, List<String> fields, boolean joint, long deadlineNanos) {
        Request r = new Request(keys, fields, joint, deadlineNanos);
        Lane l = lane != null ? lane : bySlot.computeIfAbsent(SlotHash.getSlot(keys[0]), s -> new Lane());
        l.submit(r);
        try {
            return r.answer.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            r.answer.cancel(false); // the lane drops it unsent, or the script refuses it as past its deadline
            l.givenUp();
            throw new SluiceException("no answer from Redis by the request's deadline", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            if (cause instanceof SluiceException || cause instanceof IllegalStateException) {
                throw (RuntimeException) cause;
            }
            throw new SluiceException("Redis failed running " + LuaScript.BATCH + ": " + cause, cause);
        } catch (InterruptedException e) {
            r.answer.cancel(false);
            l.givenUp();
            Thread.currentThread().interrupt();
            throw new SluiceException("interrupted while waiting for Redis", e);
        }
    }

    /** One request of a batch, and its answer. */
    private static final class Request {
        final String[] keys;
        final List<String> fields;
        final boolean joint;
        final long deadlineNanos;
        /** Done when answered, failed, or given up by its caller (cancelled). */
        final CompletableFuture<List<StoreDecision>> answer = new CompletableFuture<>();

        Request(String[] keys, List<String> fields, boolean joint, long deadlineNanos) {
            this.keys = keys;
            this.fields = fields;
            this.joint = joint;
            this.deadlineNanos = deadlineNanos;
        }
    }

    /** The requests of one slot (of every slot, on a standalone Redis): one batch in flight at a time. */
    private final class Lane {
        private final ArrayDeque<Request> waiting = new ArrayDeque<>(); // guarded by this
        private boolean sending; // guarded by this: a batch is in flight
        private boolean knowsClock; // guarded by this
        private long offsetNanos; // guarded by this: a lower bound of the server's epoch nanoseconds - nanoTime
        private long offsetAt; // guarded by this: the nanoTime offsetNanos was last raised or lowered at
        private @Nullable CompletableFuture<?> inFlight; // guarded by this: the batch in flight, until it completes
        private List<Request> inFlightBatch = List.of(); // guarded by this: its requests

        void submit(Request r) {
            synchronized (this) {
                if (sending) {
                    waiting.add(r);
                    return;
                }
                sending = true;
            }
            send(List.of(r));
        }

        /** The next batch from the requests waiting, dropping those given up or past their deadline; or none. */
        private void next() {
            List<Request> batch = new ArrayList<>();
            synchronized (this) {
                long now = System.nanoTime();
                int keys = 0;
                while (!waiting.isEmpty() && batch.size() < MAX_REQUESTS && keys < MAX_KEYS) {
                    Request r = waiting.poll();
                    if (r.answer.isDone()) {
                        continue;
                    }
                    if (now - r.deadlineNanos >= 0) {
                        r.answer.completeExceptionally(new SluiceException(
                                "no answer from Redis by the request's deadline: not sent",
                                new TimeoutException("the request's deadline passed while it waited")));
                        continue;
                    }
                    batch.add(r);
                    keys += r.keys.length;
                }
                if (batch.isEmpty()) {
                    sending = false;
                    return;
                }
            }
            send(batch);
        }

        private void send(List<Request> batch) {
            boolean knows;
            synchronized (this) {
                knows = knowsClock;
            }
            CompletionStage<?> sent;
            try {
                if (knows) {
                    sent = run(batch);
                } else { // a run with no request, to learn the server's clock
                    String[] probe = {batch.get(0).keys[0]};
                    sent = eval(probe, new String[] {"0"}).thenCompose(r -> {
                        learnClock(r, System.nanoTime());
                        return run(batch);
                    });
                }
            } catch (RuntimeException e) { // not connected, or closed
                fail(batch, e);
                next();
                return;
            }
            CompletableFuture<?> flight = sent.toCompletableFuture();
            synchronized (this) {
                inFlight = flight;
                inFlightBatch = batch;
            }
            var unused = flight.whenComplete((r, e) -> {
                if (e != null) {
                    fail(batch, e instanceof CompletionException && e.getCause() != null ? e.getCause() : e);
                }
                synchronized (this) {
                    if (inFlight == flight) {
                        inFlight = null;
                        inFlightBatch = List.of();
                    }
                }
                next();
            });
        }

        /**
         * Lets the lane go on once every request of the batch in flight has been given up by its caller. Without
         * this, a batch that never returns (sent on a connection whose loss the driver had not yet seen, and which
         * the driver then keeps for its own reconnect) would hold the lane, and every later request would wait out
         * its whole deadline behind it, through the whole outage, instead of failing at once as not connected. A
         * batch let go this way is never applied late: Redis refuses each of its requests as past its deadline.
         */
        void givenUp() {
            CompletableFuture<?> flight;
            synchronized (this) {
                flight = inFlight;
                if (flight == null) {
                    return;
                }
                for (Request q : inFlightBatch) {
                    if (!q.answer.isDone()) {
                        return;
                    }
                }
            }
            flight.cancel(false); // its completion sends what waits, or frees the lane
        }

        /** Sends {@code batch}; completes once every request of it is answered. */
        private CompletionStage<Void> run(List<Request> batch) {
            long offset;
            synchronized (this) {
                offset = offsetNanos;
            }
            int keyCount = 0;
            int fieldCount = 1;
            for (Request r : batch) {
                keyCount += r.keys.length;
                fieldCount += 3 + r.fields.size();
            }
            String[] keys = new String[keyCount];
            String[] args = new String[fieldCount];
            args[0] = Integer.toString(batch.size());
            int k = 0;
            int a = 1;
            for (Request r : batch) {
                System.arraycopy(r.keys, 0, keys, k, r.keys.length);
                k += r.keys.length;
                args[a++] = Long.toString(Math.floorDiv(r.deadlineNanos + offset, 1000));
                args[a++] = r.joint ? "j" : "a";
                args[a++] = Integer.toString(r.keys.length);
                for (String f : r.fields) {
                    args[a++] = f;
                }
            }
            return eval(keys, args).thenAccept(answer -> answer(batch, answer, System.nanoTime()));
        }

        /** Hands each request its decisions, or its refusal as past its deadline. */
        private void answer(List<Request> batch, List<Object> answer, long arrived) {
            learnClock(answer, arrived);
            int i = 1;
            for (Request r : batch) {
                int n = r.keys.length;
                if (i >= answer.size()) {
                    r.answer.completeExceptionally(malformed(answer));
                    continue;
                }
                long status = number(answer, i++);
                if (status == 0) {
                    r.answer.completeExceptionally(
                            new SluiceException("Redis ran the request past its deadline: refused, nothing taken"));
                    continue;
                }
                if (i + 5 * n > answer.size()) {
                    r.answer.completeExceptionally(malformed(answer));
                    continue;
                }
                List<StoreDecision> decisions = new ArrayList<>(n);
                for (int p = 0; p < n; p++, i += 5) {
                    decisions.add(RedisDecider.decision(answer, i));
                }
                r.answer.complete(decisions);
            }
        }

        /** Raises the offset bound to what {@code answer}'s TIME, read before {@code arrived}, shows. */
        private void learnClock(List<Object> answer, long arrived) {
            long sample = number(answer, 0) * 1000 - arrived;
            synchronized (this) {
                if (!knowsClock) {
                    offsetNanos = sample;
                } else {
                    long drift = Math.max(0, arrived - offsetAt) / (1_000_000_000L / DRIFT_PER_SECOND);
                    offsetNanos = Math.max(sample, offsetNanos - drift);
                }
                offsetAt = arrived;
                knowsClock = true;
            }
        }

        private void fail(List<Request> batch, Throwable e) {
            Throwable failure = e instanceof SluiceException || e instanceof IllegalStateException
                    ? e
                    : new SluiceException("Redis failed running " + LuaScript.BATCH + ": " + e, e);
            for (Request r : batch) {
                r.answer.completeExceptionally(failure);
            }
        }
    }

    /** Runs the batch script by {@code EVALSHA}, sending it with {@code EVAL} if the server answers NOSCRIPT. */
    private CompletionStage<List<Object>> eval(String[] keys, String[] args) {
        RedisScriptingAsyncCommands<String, String> commands = connector.commands();
        return commands.<List<Object>>evalsha(LuaScript.BATCH.sha(), ScriptOutputType.MULTI, keys, args)
                .exceptionallyCompose(e -> {
                    Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                    if (cause instanceof RedisNoScriptException
                            || (cause.getMessage() != null && cause.getMessage().startsWith("NOSCRIPT"))) {
                        return connector
                                .commands()
                                .<List<Object>>eval(LuaScript.BATCH.text(), ScriptOutputType.MULTI, keys, args);
                    }
                    return CompletableFuture.failedStage(cause);
                });
    }

    private static long number(List<Object> answer, int i) {
        Object v = answer.get(i);
        if (!(v instanceof Long)) {
            throw malformed(answer);
        }
        return (Long) v;
    }

    private static SluiceException malformed(List<Object> answer) {
        return new SluiceException("the Redis batch script answered " + answer + ", not its decisions");
    }

    @Override
    public String toString() {
        return "RedisBatches[" + connector + "]";
    }
}
