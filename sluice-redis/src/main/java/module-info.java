/**
 * Sluice on Redis and Redis Cluster (Lettuce): limits shared by every service instance that reaches the same server,
 * each decision one Lua script (exact mode), or counts shared in bulk through the counter store of synchronized mode.
 * Entry point: {@link dev.sluice.redis.RedisStore}.
 */
@SuppressWarnings({"requires-transitive-automatic", "requires-automatic"})
module dev.sluice.redis {
    requires static transitive org.jspecify;
    requires transitive dev.sluice;
    requires transitive lettuce.core;

    exports dev.sluice.redis;

    provides dev.sluice.spi.StoreProvider with
            dev.sluice.redis.RedisStoreProvider;
}
