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
import java.util.List;
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
 * keys.
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
        Lane l = lane != null ? lane : bySlot.computeIfAbsent(SlotHash.getSlot(keys[0]), s -> new Lane());
        return l.requests.decide(new Request(keys, fields, joint), keys.length, deadlineNanos);
    }

    /** What one request of a batch carries. */
    private static final class Request {
        private final String[] keys;
        private final List<String> fields;
        private final boolean joint;

        Request(String[] keys, List<String> fields, boolean joint) {
            this.keys = keys;
            this.fields = fields;
            this.joint = joint;
        }

        String[] keys() {
            return keys;
        }

        List<String> fields() {
            return fields;
        }

        boolean joint() {
            return joint;
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
            String[] probe = {batch.get(0).payload().keys()[0]}; // a run with no request, to learn the server's clock
            return eval(probe, new String[] {"0"}).thenCompose(r -> {
                learnClock(r, System.nanoTime());
                return run(batch);
            });
        }

        /** Sends {@code batch}; completes once every request of it is answered. */
        private CompletionStage<Void> run(List<GroupCommit.Request<Request, List<StoreDecision>>> batch) {
            int keyCount = 0;
            int fieldCount = 1;
            for (var r : batch) {
                keyCount += r.payload().keys().length;
                fieldCount += 3 + r.payload().fields().size();
            }
            String[] keys = new String[keyCount];
            String[] args = new String[fieldCount];
            args[0] = Integer.toString(batch.size());
            int k = 0;
            int a = 1;
            for (var r : batch) {
                Request q = r.payload();
                System.arraycopy(q.keys(), 0, keys, k, q.keys().length);
                k += q.keys().length;
                args[a++] = Long.toString(Math.floorDiv(clock.serverTime(r.deadlineNanos()), 1000));
                args[a++] = q.joint() ? "j" : "a";
                args[a++] = Integer.toString(q.keys().length);
                for (String f : q.fields()) {
                    args[a++] = f;
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
                int n = r.payload().keys().length;
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
