/**
 * Sluice on MongoDB (sync driver): limits shared by every service instance that reaches the same database, each
 * decision one {@code findOneAndUpdate} (exact mode), or counts shared in bulk through the counter store of
 * synchronized mode. Entry point: {@link dev.sluice.mongodb.MongoStore}.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"
}) // the MongoDB driver's jars are automatic modules
module dev.sluice.mongodb {
    requires static transitive org.jspecify;
    requires transitive dev.sluice;
    requires transitive org.mongodb.driver.sync.client;
    requires org.mongodb.driver.core;
    requires transitive org.mongodb.bson;

    exports dev.sluice.mongodb;

    provides dev.sluice.spi.StoreProvider with
            dev.sluice.mongodb.MongoStoreProvider;
}
