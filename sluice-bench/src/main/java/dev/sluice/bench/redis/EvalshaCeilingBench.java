package dev.sluice.bench.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The ceiling for any one-script-per-decision limiter on this client and server: a trivial {@code EVALSHA}
 * ({@code return 1} with the key as {@code KEYS[1]}) through the same Lettuce client, the way the Sluice store calls
 * it (one shared connection, the asynchronous API, each caller waiting for its answer). What remains between this
 * and {@link SluiceRedisBench} is the algorithm: its script's work on the server and its arguments and answer.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class EvalshaCeilingBench {

    @Param({"1", "100000"})
    public int keys;

    private RedisClient client;
    private StatefulRedisConnection<String, String> connection;
    private RedisAsyncCommands<String, String> commands;
    private String sha;
    private String[][] keyArgs;

    @Setup(Level.Trial)
    public void setUp(RedisTarget target) throws Exception {
        client = RedisClient.create(target.uri);
        connection = client.connect();
        commands = connection.async();
        sha = commands.scriptLoad("return 1").get(10, TimeUnit.SECONDS);
        String[] names = target.keys(keys);
        keyArgs = new String[keys][];
        for (int i = 0; i < keys; i++) {
            keyArgs[i] = new String[] {names[i]};
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        connection.close();
        client.shutdown();
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
