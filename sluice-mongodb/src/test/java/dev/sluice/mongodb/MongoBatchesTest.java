package dev.sluice.mongodb;

import com.mongodb.client.MongoClient;
import dev.sluice.FailurePolicy;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.StoreBatchingContract;
import dev.sluice.testkit.server.MongoServerProcess;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * The batching contract against MongoDB ({@link MongoBatches}): requests on one key's document appended together by
 * one {@code findOneAndUpdate}. The stall's server is mongo-java-server in a JVM of its own, stopped as a process.
 */
class MongoBatchesTest extends StoreBatchingContract {

    @Override
    protected RateLimitStore store() {
        return Mongo.sharedClockStore();
    }

    @Override
    protected OwnServer startOwnServer() {
        MongoServerProcess server = MongoServerProcess.start();
        MongoClient own = Mongo.client(server.connectionString());
        return new OwnServer() {
            @Override
            public RateLimitStore store(Duration timeout, Consumer<? super SluiceException> failures) {
                return MongoStore.builder(own, Mongo.DATABASE)
                        .timeSource(TimeSource.CLOCK)
                        .failurePolicy(FailurePolicy.FAIL_CLOSED)
                        .timeout(timeout)
                        .failureListener(failures)
                        .createIndex(false)
                        .build();
            }

            @Override
            public List<Long> pids() {
                return server.pids();
            }

            @Override
            public void close() {
                own.close();
                server.close();
            }
        };
    }
}
