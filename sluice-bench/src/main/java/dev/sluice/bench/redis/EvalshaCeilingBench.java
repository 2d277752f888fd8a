package dev.sluice.bench.redis;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Threads;

/**
 * The ceiling for any one-script-per-decision limiter on this client and server: a trivial {@code EVALSHA}
 * ({@code return 1} with the key as {@code KEYS[1]}) through the same Lettuce client, the way the Sluice store calls
 * it (one shared connection, the asynchronous API, each caller waiting for its answer). What remains between this
 * and {@link SluiceRedisBench} is the algorithm: its script's work on the server and its arguments and answer.
 */
public class EvalshaCeilingBench extends RedisBench {

    private StatefulRedisConnection<String, String> connection;
    private RedisAsyncCommands<String, String> commands;
    private String sha;
    private String[][] keyArgs;

    @Override
    protected void prepare(String[] names) throws Exception {
        connection = client.connect();
        commands = connection.async();
        sha = commands.scriptLoad("return 1").get(10, TimeUnit.SECONDS);
        keyArgs = new String[keys][];
        for (int i = 0; i < keys; i++) {
            keyArgs[i] = new String[] {names[i]};
        }
    }

    @Override
    protected void release() {
        connection.close();
    }

    @Benchmark
    @Threads(1)
    public Long evalsha1T(Cursor cursor) throws InterruptedException, ExecutionException, TimeoutException {
        return evalsha(cursor);
    }

    @Benchmark
    @Threads(64)
    public Long evalsha64T(Cursor cursor) throws InterruptedException, ExecutionException, TimeoutException {
        return evalsha(cursor);
    }

    private Long evalsha(Cursor cursor) throws InterruptedException, ExecutionException, TimeoutException {
        return commands.<Long>evalsha(sha, ScriptOutputType.INTEGER, keyArgs[cursor.next()])
                .get(2, TimeUnit.SECONDS);
    }
}
