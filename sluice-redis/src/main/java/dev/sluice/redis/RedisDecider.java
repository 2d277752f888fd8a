package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import dev.sluice.SluiceException;
import dev.sluice.spi.AtomicDecider;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.spi.StoreDecision;
import dev.sluice.spi.WarmUp;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Decides for one bound {@link LimiterConfig}: a consuming decision in the next batch of the store
 * ({@link RedisBatches}), a {@code peek} or a give-back by one {@code EVALSHA} of the algorithm's script, reloaded with
 * {@code EVAL} when the server answers {@code NOSCRIPT} (a restarted or failed-over server, a new cluster node).
 * Thread-safe and stateless beyond its configuration.
 */
final class RedisDecider implements AtomicDecider {

    /** How many fields {@link #limiterFields} has. */
    static final int LIMITER_FIELDS = 7;

    private final Connector<?> connector;
    private final RedisBatches batches;
    private final LuaScript script;
    private final String keyPrefix;
    private final String keySuffix;
    private final String limit;
    private final String window;
    private final String countRejected;
    private final String margin;
    private final @Nullable String subWindow; // null unless a sliding-window counter
    private final String strict;
    private final String code;
    private final Duration timeout;
    private final String[] limiterFields;

    RedisDecider(
            Connector<?> connector,
            RedisBatches batches,
            LimiterConfig config,
            SharedStoreOptions options,
            long marginMillis) {
        this(connector, batches, config, options.namespace(), options, marginMillis);
    }

    /** A decider whose keys are under {@code namespace}, not the options' (the warm-up's, {@link WarmUp#namespace}). */
    RedisDecider(
            Connector<?> connector,
            RedisBatches batches,
            LimiterConfig config,
            String namespace,
            SharedStoreOptions options,
            long marginMillis) {
        this.connector = connector;
        this.batches = batches;
        this.script = LuaScript.of(config.algorithm());
        this.keyPrefix = escape(namespace) + ":{";
        this.keySuffix = "}:" + SharedStoreOptions.shape(config);
        long windowMicros = config.windowNanos() / 1000;
        this.limit = Long.toString(config.limit());
        this.window = Long.toString(windowMicros);
        this.countRejected = config.countRejected() ? "1" : "0";
        this.margin = Long.toString(marginMillis);
        boolean swc = config.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER;
        this.subWindow = swc ? Long.toString(windowMicros / config.buckets()) : null;
        this.strict = config.strict() ? "1" : "0";
        this.code = config.algorithm().code();
        this.timeout = options.timeout();
        this.limiterFields =
                new String[] {code, limit, window, countRejected, margin, subWindow != null ? subWindow : "0", strict};
    }

    /** The Redis key holding {@code key}'s state. */
    String redisKey(String key) {
        return keyPrefix + escape(key) + keySuffix;
    }

    /** Whether this decider's limiter counts rejections. */
    boolean countsRejected() {
        return countRejected.equals("1");
    }

    /** The store this decider decides on. */
    Connector<?> connector() {
        return connector;
    }

    /**
     * A part of a batched request ({@link RedisBatches}) for {@code key}, of {@code cost} at {@code nowNanos}: its
     * limiter's fields are this decider's ({@code batch.lua}: algorithm code, limit, window, countRejected, margin,
     * sub-window, strict), one array that every request of this limiter shares.
     */
    RedisBatches.Part part(String key, long cost, long nowNanos) {
        return new RedisBatches.Part(redisKey(key), limiterFields, cost, now(nowNanos));
    }

    /**
     * A consuming decision goes in the next batch ({@link RedisBatches}), by the store's timeout; a {@code peek} runs
     * the algorithm's own script.
     */
    @Override
    public StoreDecision decide(String key, long cost, boolean consume, long nowNanos) {
        if (consume) {
            return batches.decide(
                            new RedisBatches.Part[] {part(key, cost, nowNanos)},
                            false,
                            System.nanoTime() + timeout.toNanos())
                    .get(0);
        }
        List<Object> r = run(key, "p", nowNanos, cost, 0);
        if (r.size() != 5) {
            throw new SluiceException("the Redis script answered " + r + ", not a decision");
        }
        return decision(r, 0);
    }

    /** The decision of the five integers at {@code from} in a script's answer (durations in microseconds). */
    static StoreDecision decision(List<Object> r, int from) {
        return new StoreDecision(
                number(r, from) == 1,
                number(r, from + 1),
                number(r, from + 2) * 1000,
                number(r, from + 3) * 1000,
                number(r, from + 4));
    }

    @Override
    public boolean giveBack(String key, long cost, long place, long nowNanos) {
        List<Object> r = run(key, "g", nowNanos, cost, place);
        if (r.size() != 1) {
            throw new SluiceException("the Redis script answered " + r + ", not a give-back");
        }
        return number(r, 0) == 1;
    }

    private List<Object> run(String key, String mode, long nowNanos, long cost, long place) {
        String[] keys = {redisKey(key)};
        String now = now(nowNanos);
        String[] args;
        if (subWindow != null) {
            args = new String[] {
                mode,
                now,
                limit,
                window,
                Long.toString(cost),
                countRejected,
                margin,
                Long.toString(place),
                subWindow,
                strict
            };
        } else if (mode.equals("g")) {
            args = new String[] {
                mode, now, limit, window, Long.toString(cost), countRejected, margin, Long.toString(place)
            };
        } else {
            args = new String[] {mode, now, limit, window, Long.toString(cost), countRejected, margin};
        }
        return eval(connector, script, keys, args, timeout);
    }

    private static String now(long nowNanos) {
        return nowNanos == STORE_TIME ? "T" : Long.toString(Math.floorDiv(nowNanos, 1000));
    }

    /**
     * Runs {@code script} by {@code EVALSHA}, sending it with {@code EVAL} if the server answers {@code NOSCRIPT},
     * all within {@code timeout}.
     *
     * @throws SluiceException if Redis fails or does not answer in time
     */
    static List<Object> eval(Connector<?> connector, LuaScript script, String[] keys, String[] args, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            RedisScriptingAsyncCommands<String, String> commands = connector.commands();
            try {
                return Connector.await(
                        commands.<List<Object>>evalsha(script.sha(), ScriptOutputType.MULTI, keys, args),
                        deadline,
                        timeout,
                        "running " + script);
            } catch (SluiceException e) {
                if (!isNoScript(e.getCause())) {
                    throw e;
                }
                return Connector.await(
                        commands.<List<Object>>eval(script.text(), ScriptOutputType.MULTI, keys, args),
                        deadline,
                        timeout,
                        "loading " + script);
            }
        } catch (SluiceException | IllegalStateException e) { // a failure, or a closed store
            throw e;
        } catch (RuntimeException e) {
            throw new SluiceException("Redis failed running " + script + ": " + e, e);
        }
    }

    private static boolean isNoScript(@Nullable Throwable t) {
        return t instanceof RedisNoScriptException
                || (t != null && t.getMessage() != null && t.getMessage().startsWith("NOSCRIPT"));
    }

    private static long number(List<Object> r, int i) {
        Object v = r.get(i);
        if (!(v instanceof Long)) {
            throw new SluiceException("the Redis script answered " + r + ": item " + i + " is not an integer");
        }
        return (Long) v;
    }

    /**
     * {@code s} with {@code %}, <code>{</code> and <code>}</code> percent-encoded, and unpaired surrogates (which
     * UTF-8 cannot carry) as {@code %uXXXX}: injective, and free of braces so that the hash tag is exactly the key.
     */
    static String escape(String s) {
        int n = s.length();
        int i = 0;
        while (i < n) {
            char c = s.charAt(i);
            if (c == '%' || c == '{' || c == '}' || Character.isSurrogate(c)) {
                break;
            }
            i++;
        }
        if (i == n) {
            return s;
        }
        StringBuilder b = new StringBuilder(n + 16).append(s, 0, i);
        for (; i < n; i++) {
            char c = s.charAt(i);
            if (c == '%') {
                b.append("%25");
            } else if (c == '{') {
                b.append("%7B");
            } else if (c == '}') {
                b.append("%7D");
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                b.append(c).append(s.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                b.append(String.format("%%u%04X", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return "RedisDecider[" + script + " on " + connector + "]";
    }
}
