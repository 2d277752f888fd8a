package dev.sluice.redis;

import dev.sluice.spi.AtomicDecider;
import dev.sluice.spi.AtomicJointDecider;
import dev.sluice.spi.StoreDecision;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Decides a joint request over limiters of one {@link RedisStore} in one run of a script: its request in the next
 * batch ({@link RedisBatches}), all or nothing over every part's key, whatever each part's algorithm, limit, window
 * and clock. On a Redis
 * Cluster only keys in one hash slot can share a script (same user key: the hash tag is the user key); for keys in
 * different slots {@link #canDecideTogether} says no, and the request is taken and given back instead.
 *
 * <p>Two parts whose limiters have the same algorithm and window share their state in Redis when they share a key
 * (the limit is not part of the Redis key). The script decides each part without consuming before any consumes, so it
 * would let two such parts both pass on one count: {@link #canDecideTogether} says no to them too, and the take and
 * give back decides them one after the other.
 *
 * <p>Thread-safe and stateless beyond its store's connection.
 */
final class RedisJoint implements AtomicJointDecider {

    private final Connector<?> connector;
    private final RedisBatches batches;
    private final Duration timeout;

    RedisJoint(Connector<?> connector, RedisBatches batches, Duration timeout) {
        this.connector = connector;
        this.batches = batches;
        this.timeout = timeout;
    }

    /** A joint request goes in a batch, by its deadline, and Redis refuses it past the deadline. */
    @Override
    public boolean keepsDeadlines() {
        return true;
    }

    @Override
    public boolean canDecideTogether(List<AtomicDecider> deciders, List<String> keys) {
        Set<String> seen = new HashSet<>();
        int slot = -1;
        for (int i = 0; i < keys.size(); i++) {
            RedisDecider decider = (RedisDecider) deciders.get(i);
            if (decider.connector() != connector) {
                return false;
            }
            String redisKey = decider.redisKey(keys.get(i));
            if (!seen.add(redisKey)) {
                return false;
            }
            if (connector.cluster()) {
                int s = SlotHash.getSlot(redisKey);
                if (slot >= 0 && s != slot) {
                    return false;
                }
                slot = s;
            }
        }
        return true;
    }

    @Override
    public List<StoreDecision> decideAll(
            List<AtomicDecider> deciders, List<String> keys, long[] costs, long[] nowNanos) {
        return decideAll(deciders, keys, costs, nowNanos, System.nanoTime() + timeout.toNanos());
    }

    @Override
    public List<StoreDecision> decideAll(
            List<AtomicDecider> deciders, List<String> keys, long[] costs, long[] nowNanos, long deadlineNanos) {
        return batches.decide(parts(deciders, keys, costs, nowNanos), joint(deciders), deadlineNanos);
    }

    /** The request goes in the next batch; the future completes when Redis answers, or by the deadline. */
    @Override
    public CompletableFuture<List<StoreDecision>> decideAllAsync(
            List<AtomicDecider> deciders, List<String> keys, long[] costs, long[] nowNanos, long deadlineNanos) {
        return batches.submit(parts(deciders, keys, costs, nowNanos), joint(deciders), deadlineNanos);
    }

    /** Sent as a joint request ({@code group.lua}), or as the single request it answers as. */
    private static boolean joint(List<AtomicDecider> deciders) {
        return !AtomicJointDecider.answersAsSingle(deciders.size(), ((RedisDecider) deciders.get(0)).countsRejected());
    }

    private static RedisBatches.Part[] parts(
            List<AtomicDecider> deciders, List<String> keys, long[] costs, long[] nowNanos) {
        RedisBatches.Part[] parts = new RedisBatches.Part[keys.size()];
        for (int i = 0; i < parts.length; i++) {
            parts[i] = ((RedisDecider) deciders.get(i)).part(keys.get(i), costs[i], nowNanos[i]);
        }
        return parts;
    }

    @Override
    public String toString() {
        return "RedisJoint[" + LuaScript.BATCH + " on " + connector + "]";
    }
}
