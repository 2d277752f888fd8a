package dev.sluice.redis;

import dev.sluice.spi.StoreConnection;
import dev.sluice.spi.StoreProvider;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Opens {@code redis://host:port[/db]}, {@code rediss://…} (TLS) and {@code redis-cluster://host:port[,host:port…]}
 * for {@link dev.sluice.assembly.StoreAssembly}; found through {@link java.util.ServiceLoader}, not called directly.
 * The credentials of a cluster URI's first node that has some serve every node that has none.
 */
public final class RedisStoreProvider implements StoreProvider {

    private static final String CLUSTER = "redis-cluster://";

    /** For {@link java.util.ServiceLoader}. */
    public RedisStoreProvider() {}

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss", "redis-cluster");
    }

    @Override
    public StoreConnection connect(String uri) {
        if (!uri.startsWith(CLUSTER)) {
            RedisClient client = RedisClient.create(redisUri(uri));
            return RedisStore.connection(client, client::shutdown);
        }
        List<RedisURI> nodes = new ArrayList<>();
        List<RedisURI> withoutCredentials = new ArrayList<>();
        RedisURI credentials = null;
        for (String node : uri.substring(CLUSTER.length()).split(",", -1)) {
            RedisURI u = redisUri("redis://" + node);
            if (!node.contains("@")) {
                withoutCredentials.add(u);
            } else if (credentials == null) {
                credentials = u;
            }
            nodes.add(u);
        }
        if (credentials != null) {
            for (RedisURI u : withoutCredentials) {
                u.setCredentialsProvider(credentials.getCredentialsProvider());
            }
        }
        RedisClusterClient client = RedisClusterClient.create(nodes);
        client.setOptions(RedisStore.recommendedClusterClientOptions());
        return RedisStore.connection(client, client::shutdown);
    }

    private static RedisURI redisUri(String uri) {
        try {
            return RedisURI.create(uri);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "expected redis://[[user]:password@]host[:port][/database] or redis-cluster://host:port[,host:port…]"
                            + " (" + e.getMessage() + ")",
                    e);
        }
    }
}
