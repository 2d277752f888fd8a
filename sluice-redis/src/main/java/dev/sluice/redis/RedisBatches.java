package dev.sluice.redis;

import dev.sluice.SluiceException;
import dev.sluice.spi.GroupCommit;
import dev.sluice.spi.ServerClock;
import dev.sluice.spi.StoreDecision;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.SlotHash;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The consuming decisions of a {@link RedisStore}, single and joint, sent together: while one batch is in flight on a
 * lane, the requests that arrive wait, and go together in the next, as one run of {@code batch.lua} (group commit,
 * {@link GroupCommit}: its class comment tells how and why, deadlines included). Thread-safe.
 *
 * <p>Redis runs the script atomically, the requests one after the other, each exactly as its own script would (a
 * joint one all or nothing), so batching changes no decision. On a Redis Cluster a script's keys must share a hash
 * slot, so there is one lane per slot. A batch carries at most {@value #MAX_REQUESTS} requests or {@value #MAX_KEYS}
 * keys. What a batch sends per decision is its deadline, its limiter (by its index among the batch's distinct
 * limiters, whose fields go once), cost and time: the script parses a limiter once per batch.
 *
 * <p>Deadlines by Redis's clock. A request in a batch that reaches Redis late (a stalled server, a paused client, a
 * frozen network) is refused by the script: each carries its deadline by the server's clock ({@link ServerClock},
 * learned from the {@code TIME} each answer carries), and the script, which reads the server's {@code TIME} once,
 * answers {@code 0} and touches nothing for a request past it. A lane whose clock is unknown (its first batch) first
 * runs the script with no request, to learn it.
 */
final class RedisBatches {

    /** The most requests in one batch. */
    static final int MAX_REQUESTS = 256;

    /** The most keys in one batch, beyond which a batch takes no more requests. */
    static final int MAX_KEYS = 1024;

    private final Connector<?> connector;
    private final @Nullable Lane lane; // standalone: the one lane
    private final ConcurrentHashMap<Integer, Lane> bySlot = new ConcurrentHashMap<>(); // a cluster: one lane a slot

    RedisBatches(Connector<?> connector) {
        this.connector = connector;
        this.lane = connector.cluster() ? null : new Lane();
    }

    /**
     * One part of a request: its Redis key, its limiter's fields ({@link RedisDecider#limiterFields}: the same array
     * for every request of one limiter), its cost, and its time ({@code T} for Redis's clock, else microseconds).
     */
    static final class Part {
        private final String key;
        private final String[] limiter;
        private final long cost;
        private final String now;

        Part(String key, String[] limiter, long cost, String now) {
            this.key = key;
            this.limiter = limiter;
            this.cost = cost;
            this.now = now;
        }

        String key() {
            return key;
        }
    }

    /**
     * Decides one request in the next batch and waits for it until {@code deadlineNanos}.
     *
     * @param parts its parts, their keys all in one hash slot
     * @param joint all or nothing ({@code group.lua}); else one part, acquiring
     * @throws SluiceException       if Redis fails or does not answer by the deadline; the request then took nothing
     *                               (but for one Redis ran in time whose answer came too late)
     * @throws IllegalStateException if the store is closed
     */
    List<StoreDecision> decide(Part[] parts, boolean joint, long deadlineNanos) {
        return lane(parts).requests.decide(new Request(parts, joint), parts.length, deadlineNanos);
    }

    /**
     * {@link #decide} without waiting: the future completes when Redis answers, or at {@code deadlineNanos} by a
     * timer ({@link GroupCommit#submit}).
     */
    CompletableFuture<List<StoreDecision>> submit(Part[] parts, boolean joint, long deadlineNanos) {
        return lane(parts).requests.submit(new Request(parts, joint), parts.length, deadlineNanos);
    }

    private Lane lane(Part[] parts) {
        return lane != null ? lane : bySlot.computeIfAbsent(SlotHash.getSlot(parts[0].key()), s -> new Lane());
    }

    /** What one request of a batch carries. */
    private static final class Request {
        private final Part[] parts;
        private final boolean joint;

        Request(Part[] parts, boolean joint) {
            this.parts = parts;
            this.joint = joint;
        }
    }

    /** The requests of one slot (of every slot, on a standalone Redis): one batch in flight at a time. */
    private final class Lane {
        private final ServerClock clock = new ServerClock();
        private final GroupCommit<Request, List<StoreDecision>> requests =
                GroupCommit.<Request, List<StoreDecision>>builder("Redis", this::send)
                        .maxRequests(MAX_REQUESTS)
                        .maxWeight(MAX_KEYS)
                        .failure(e -> new SluiceException("Redis failed running " + LuaScript.BATCH + ": " + e, e))
                        .build();

        private CompletionStage<?> send(List<GroupCommit.Request<Request, List<StoreDecision>>> batch) {
            if (clock.known()) {
                return run(batch);
            }
            // a run with no request, to learn the server's clock
            String[] probe = {batch.get(0).payload().parts[0].key()};
            return eval(probe, new String[] {"0", "0"}).thenCompose(r -> {
                learnClock(r, System.nanoTime());
                return run(batch);
            });
        }

        /**
         * Sends {@code batch}; completes once every request of it is answered. The arguments ({@code batch.lua}): the
         * batch's distinct limiters, 7 fields each, then per request its deadline and its number of parts (negated
         * for a joint request), and per part its limiter's index, cost and time.
         */
        private CompletionStage<Void> run(List<GroupCommit.Request<Request, List<StoreDecision>>> batch) {
            IdentityHashMap<String[], String> limiters =
                    new IdentityHashMap<>(); // a limiter's fields: its index, from 1
            List<String[]> distinct = new ArrayList<>();
            int keyCount = 0;
            for (var r : batch) {
                for (Part p : r.payload().parts) {
                    if (!limiters.containsKey(p.limiter)) {
                        distinct.add(p.limiter);
                        limiters.put(p.limiter, Integer.toString(distinct.size()));
                    }
                }
                keyCount += r.payload().parts.length;
            }
            String[] keys = new String[keyCount];
            String[] args =
                    new String[2 + RedisDecider.LIMITER_FIELDS * distinct.size() + 2 * batch.size() + 3 * keyCount];
            int a = 0;
            args[a++] = Integer.toString(distinct.size());
            for (String[] fields : distinct) {
                System.arraycopy(fields, 0, args, a, fields.length);
                a += fields.length;
            }
            args[a++] = Integer.toString(batch.size());
            int k = 0;
            for (var r : batch) {
                Request q = r.payload();
                args[a++] = Long.toString(Math.floorDiv(clock.serverTime(r.deadlineNanos()), 1000));
                args[a++] = Integer.toString(q.joint ? -q.parts.length : q.parts.length);
                for (Part p : q.parts) {
                    keys[k++] = p.key();
                    args[a++] = Objects.requireNonNull(limiters.get(p.limiter));
                    args[a++] = Long.toString(p.cost);
                    args[a++] = p.now;
                }
            }
            return eval(keys, args).thenAccept(answer -> answer(batch, answer, System.nanoTime()));
        }

        /** Hands each request its decisions, or its refusal as past its deadline. */
        private void answer(
                List<GroupCommit.Request<Request, List<StoreDecision>>> batch, List<Object> answer, long arrived) {
            learnClock(answer, arrived);
            int i = 1;
            for (var r : batch) {
                int n = r.payload().parts.length;
                if (i >= answer.size()) {
                    r.fail(malformed(answer));
                    continue;
                }
                long status = number(answer, i++);
                if (status == 0) {
                    r.fail(new SluiceException("Redis ran the request past its deadline: refused, nothing taken"));
                    continue;
                }
                if (i + 5 * n > answer.size()) {
                    r.fail(malformed(answer));
                    continue;
                }
                List<StoreDecision> decisions = new ArrayList<>(n);
                for (int p = 0; p < n; p++, i += 5) {
                    decisions.add(RedisDecider.decision(answer, i));
                }
                r.answer(decisions);
            }
        }

        /** Learns the server's clock from {@code answer}'s TIME (microseconds), read before {@code arrived}. */
        private void learnClock(List<Object> answer, long arrived) {
            clock.learn(number(answer, 0) * 1000, arrived);
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
