package dev.sluice.redis;

import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The servers and clients the tests share, created on first use: one standalone Redis and one 3-master cluster
 * for the whole test run (started by the testkit unless environment variables name external ones).
 */
final class Servers {

    /**
     * The timeout of every store of a test that is not about timeouts. Generous: on a loaded machine a call can wait
     * seconds for the CPU, and a test must fail on a wrong answer, never on a slow one turned into a timeout.
     */
    static final Duration PATIENCE = Duration.ofSeconds(30);

    private static RedisClient client; // guarded by Servers.class
    private static RedisCommands<String, String> redis; // likewise
    private static RedisCommands<byte[], byte[]> bytes; // likewise
    private static RedisClusterClient clusterClient; // likewise
    private static RedisAdvancedClusterCommands<String, String> cluster; // likewise

    private Servers() {}

    /** A client of the shared standalone server, with {@link RedisStore#recommendedClientOptions()}. */
    static synchronized RedisClient client() {
        if (client == null) {
            client = RedisClient.create(RedisServers.shared().uri());
            client.setOptions(RedisStore.recommendedClientOptions());
        }
        return client;
    }

    /** Commands on the shared standalone server, to inspect what the store wrote. */
    static synchronized RedisCommands<String, String> redis() {
        if (redis == null) {
            redis = client().connect().sync();
        }
        return redis;
    }

    /**
     * The state of a bucket or window key on the shared standalone server, decoded: the script packs it as
     * little-endian doubles. {@code null} if there is no such key.
     */
    static synchronized long[] packedState(String key) {
        if (bytes == null) {
            bytes = client().connect(ByteArrayCodec.INSTANCE).sync();
        }
        byte[] value = bytes.get(key.getBytes(StandardCharsets.UTF_8));
        if (value == null) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        long[] numbers = new long[value.length / Double.BYTES];
        for (int i = 0; i < numbers.length; i++) {
            double d = b.getDouble();
            numbers[i] = (long) d;
            if (numbers[i] != d) {
                throw new AssertionError("not an integer in the state of " + key + ": " + d);
            }
        }
        return numbers;
    }

    /** A client of the shared cluster, with {@link RedisStore#recommendedClusterClientOptions()}. */
    static synchronized RedisClusterClient clusterClient() {
        if (clusterClient == null) {
            List<RedisURI> seeds = RedisServers.sharedCluster().uris().stream()
                    .map(RedisURI::create)
                    .collect(Collectors.toList());
            clusterClient = RedisClusterClient.create(seeds);
            clusterClient.setOptions(RedisStore.recommendedClusterClientOptions());
        }
        return clusterClient;
    }

    /** Commands on the shared cluster, to inspect what the store wrote. */
    static synchronized RedisAdvancedClusterCommands<String, String> cluster() {
        if (cluster == null) {
            cluster = clusterClient().connect().sync();
        }
        return cluster;
    }
}
