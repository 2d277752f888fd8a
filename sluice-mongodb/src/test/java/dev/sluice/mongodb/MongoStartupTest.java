package dev.sluice.mongodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.server.EmbeddedMongoServer;
import dev.sluice.testkit.server.MongoServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Building a store waits for the server (its startup timeout), builds all the same when the server does not answer,
 * and a closed client is the application's mistake: an {@link IllegalStateException} to the caller, never a failure
 * policy's answer.
 */
class MongoStartupTest {

    private static final Duration WINDOW = Duration.ofHours(1);
    private static final Duration FAIL_CLOSED_RETRY_AFTER = Duration.ofSeconds(7);

    private final String run = UUID.randomUUID().toString();

    @Test
    void buildWaitsForTheServerAndCreatesTheIndexBeforeItReturns() throws Exception {
        try (EmbeddedMongoServer server = MongoServers.start()) {
            server.stop();
            try (MongoClient client = Mongo.client(server.connectionString())) {
                CompletableFuture<MongoStore> built =
                        CompletableFuture.supplyAsync(() -> MongoStore.builder(client, Mongo.DATABASE)
                                .collection("startup_" + run.substring(0, 8))
                                .startupTimeout(Await.GENEROUS)
                                .build());
                server.start();
                MongoStore store = built.get(2 * Await.GENEROUS.toSeconds(), TimeUnit.SECONDS);
                List<String> indexes = new ArrayList<>();
                for (Document index : client.getDatabase(Mongo.DATABASE)
                        .getCollection(store.collectionName())
                        .listIndexes()) {
                    indexes.add(index.getString("name"));
                }
                assertTrue(
                        indexes.contains(MongoStore.EXPIRE_INDEX),
                        "build() waited for the server and created the TTL index before returning: " + indexes);
                RateLimiter limiter = limiter(store, 5);
                SharedRateLimiter shared = (SharedRateLimiter) limiter;
                Decision d = limiter.tryAcquire("first");
                assertTrue(d.allowed() && d.remaining() == 4, "the first decision is the server's: " + d);
                assertEquals(0, shared.storeFailures(), "no decision went to the failure policy");
            }
        }
    }

    @Test
    void aServerThatDoesNotAnswerInTimeGivesAStoreAllTheSameThatDecidesOnceItDoes() {
        try (EmbeddedMongoServer server = MongoServers.start()) {
            server.stop();
            try (MongoClient client = Mongo.client(server.connectionString())) {
                MongoStore store = MongoStore.builder(client, Mongo.DATABASE)
                        .startupTimeout(Duration.ofMillis(500))
                        .timeout(Duration.ofMillis(250))
                        .failurePolicy(FailurePolicy.FAIL_CLOSED)
                        .failClosedRetryAfter(FAIL_CLOSED_RETRY_AFTER)
                        .build();
                CounterStore counters = MongoStore.counterStoreBuilder(client, Mongo.DATABASE)
                        .startupTimeout(Duration.ofMillis(500))
                        .build();
                RateLimiter limiter = limiter(store, 5);
                Decision d = limiter.tryAcquire("down:" + run);
                assertFalse(d.allowed(), "the failure policy answers while the server is down: " + d);
                assertEquals(FAIL_CLOSED_RETRY_AFTER, d.retryAfter(), "fail-closed: " + d);

                server.start();
                Decision back = Await.succeeds("a decision by the server", Await.GENEROUS, () -> {
                    Decision a = limiter.tryAcquire("up:" + run + ":" + System.nanoTime());
                    if (!a.allowed()) {
                        throw new IllegalStateException("not yet: " + a);
                    }
                    return a;
                });
                assertEquals(4, back.remaining(), "a new key, decided by the server: " + back);
                assertEquals(
                        1,
                        counters.load(List.of(new CounterKey("fixed:3600000000000", "k:" + run)))
                                .size());
            }
        }
    }

    @Test
    void aClosedClientThrowsIllegalStateExceptionToTheCaller() {
        MongoClient client = Mongo.client();
        MongoStore store = MongoStore.builder(client, Mongo.DATABASE)
                .collection("startup_closed_" + run.substring(0, 8)) // its TTL index stays out of other tests' way
                .failurePolicy(FailurePolicy.FAIL_OPEN)
                .timeout(Mongo.TIMEOUT)
                .build();
        CounterStore counters = MongoStore.counterStoreBuilder(client, Mongo.DATABASE)
                .namespace("closed" + run.substring(0, 8))
                .timeout(Mongo.TIMEOUT)
                .build();
        RateLimiter limiter = limiter(store, 5);
        SharedRateLimiter shared = (SharedRateLimiter) limiter;
        String key = "closed:" + run;
        assertEquals(4, limiter.tryAcquire(key).remaining(), "before the client is closed");
        CounterKey counterKey = new CounterKey("fixed:3600000000000", key);
        assertEquals(1, counters.load(List.of(counterKey)).size(), "before the client is closed");

        client.close();

        for (var call : List.<Runnable>of(
                () -> limiter.tryAcquire(key), () -> limiter.peek(key, 1), () -> counters.load(List.of(counterKey)))) {
            IllegalStateException e = assertThrows(IllegalStateException.class, call::run);
            assertTrue(
                    e.getMessage().contains("MongoClient") && e.getMessage().contains("has been closed"),
                    "names the problem: " + e.getMessage());
            assertTrue(e.getMessage().contains("state should be: open"), "quotes the driver: " + e.getMessage());
        }
        assertEquals(0, shared.storeFailures(), "a closed client is not a store failure");
        IllegalStateException build =
                assertThrows(IllegalStateException.class, () -> MongoStore.builder(client, Mongo.DATABASE)
                        .build());
        assertTrue(build.getMessage().contains("has been closed"), build.getMessage());
    }

    private static RateLimiter limiter(MongoStore store, long limit) {
        return RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(limit, WINDOW)
                .store(store)
                .build();
    }
}
