package dev.sluice.redis;

import dev.sluice.spi.StoreConnection;
import dev.sluice.spi.StoreProvider;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Opens {@code redis://host:port[/db]}, {@code rediss://…} (TLS), {@code redis-cluster://host:port[,host:port…]} and
 * {@code redis-sentinel://[password@]host:port[,host:port…][/db]#master} for
 * {@link dev.sluice.assembly.StoreAssembly}; found through {@link java.util.ServiceLoader}, not called directly.
 * The credentials of a cluster URI's first node that has some serve every node that has none. A sentinel URI names
 * the sentinels and the master's name; its password is the master's (and its replicas'), the sentinels take none.
 * The store asks the sentinels where the master is at each connection, so after a failover (the sentinels kill the
 * old master's connections) the next connection goes to the new master.
 *
 * <p>A {@code rediss://} URI may name TLS files in its query: {@code tlsCa} (the CA certificates Redis's certificate is
 * checked against, PEM, instead of the JVM's trust store), {@code tlsCert} and {@code tlsKey} (a client certificate and
 * its unencrypted PKCS#8 key, PEM, for a Redis that asks for one); Lettuce's {@code verifyPeer=CA} checks the chain but
 * not the host name. {@code rediss://redis:6380?tlsCa=/tls/ca.crt&tlsCert=/tls/tls.crt&tlsKey=/tls/tls.key}. The files
 * are read once, when the store is opened ({@link RedisTls}).
 */
public final class RedisStoreProvider implements StoreProvider {

    private static final String CLUSTER = "redis-cluster://";
    private static final String SENTINEL = "redis-sentinel://";

    /** For {@link java.util.ServiceLoader}. */
    public RedisStoreProvider() {}

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss", "redis-cluster", "redis-sentinel");
    }

    @Override
    public StoreConnection connect(String given) {
        RedisTls tls = RedisTls.of(given);
        String uri = tls.uri();
        if (uri.startsWith(SENTINEL)) {
            RedisURI u = redisUri(uri);
            if (u.getSentinelMasterId() == null || u.getSentinelMasterId().isEmpty()) {
                throw new IllegalArgumentException(
                        "expected redis-sentinel://[password@]host:port[,host:port…][/database]"
                                + "#master: the master's name after '#' is missing");
            }
            RedisClient client = RedisClient.create(u);
            return RedisStore.connection(client, client::shutdown);
        }
        if (!uri.startsWith(CLUSTER)) {
            RedisClient client = RedisClient.create(redisUri(uri));
            client.setOptions(tls.apply(ClientOptions.create()));
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
                    "expected redis://[[user]:password@]host[:port][/database], redis-cluster://host:port[,host:port…]"
                            + " or redis-sentinel://[password@]host:port[,host:port…][/database]#master ("
                            + e.getMessage() + ")",
                    e);
        }
    }
}
