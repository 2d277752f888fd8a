package dev.sluice.mongodb;

import com.mongodb.MongoException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.sluice.SluiceException;
import dev.sluice.spi.GroupCommit;
import dev.sluice.spi.ServerClock;
import dev.sluice.spi.StoreDecision;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * The consuming decisions of a {@link MongoStore} sent together where MongoDB can take them in one operation: while
 * one call on a key's document is in flight, the requests for that document that arrive wait, and go together in the
 * next, as one {@code findOneAndUpdate} that appends them all (group commit, {@link GroupCommit}: its class comment
 * tells how and why, deadlines included). Thread-safe.
 *
 * <p>How far MongoDB allows it. A decision appends the request to its key's document and replays the history the
 * server returns ({@link MongoDecider}'s class comment). One {@code findOneAndUpdate} can append many requests to one
 * document ({@code $push} with {@code $each}, in the order they arrived) and returns the document with all of them,
 * applied by the server as one atomic update of one document: each caller reads its own decision off one replay, and
 * every decision is the one its own call would have got. No operation of MongoDB does that for several documents and
 * returns them: {@code bulkWrite} returns no documents (and a read after it may find the requests already folded away
 * by another instance), a transaction takes a round trip per document, and neither an update pipeline nor a
 * transaction exists on every server the store runs on. So requests are grouped by document: on a hot key 64
 * decisions cost one round trip; requests on different keys go as they went, one call each, side by side on the
 * client's connections.
 *
 * <p>The requests are spread over {@value #LANES} lanes by their document, one batch in flight per lane: requests for
 * one document share a lane, and two documents share one seldom, in which case their batch makes one call for each.
 *
 * <p>Deadlines by the server's clock. Each request carries its deadline by the server's clock ({@link ServerClock},
 * learned from the {@code localTime} of {@code isMaster} and from the server's time recorded with each request), and
 * the update records the server's time of applying it ({@code $currentDate}). Replaying, every instance treats a
 * request applied at or past its deadline as taking nothing: a request whose caller has been answered by the failure
 * policy (a stalled server, a frozen network) is never counted afterwards, however late the server applies it.
 */
final class MongoBatches {

    /** The lanes requests are spread over by their document; a power of two. */
    static final int LANES = 1024;

    /** The most requests in one batch. */
    static final int MAX_REQUESTS = 256;

    /** The most times warming reads the server's clock. */
    private static final int CLOCK_SAMPLES = 10;

    /** A read of the server's clock whose round trip took no longer than this ends the warming: its bound is tight. */
    private static final long TIGHT_NANOS = 2_000_000;

    /** Sends the batches that follow one in flight: daemon threads, made as needed, ended after a minute idle. */
    private static final Executor FOLLOW_UPS =
            new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
                Thread t = new Thread(r, "sluice-mongodb-batches");
                t.setDaemon(true);
                return t;
            });

    /** A consuming request of {@code decider} for {@code key}, whose document is {@code id}. */
    record Request(MongoDecider decider, Document id, String key, long cost, long nowNanos) {}

    private final MongoDatabase database;
    private final MongoCollection<Document> collection;
    private final ServerClock clock = new ServerClock();
    private final List<GroupCommit<Request, StoreDecision>> lanes;

    MongoBatches(MongoDatabase database, MongoCollection<Document> collection) {
        this.database = database;
        this.collection = collection;
        List<GroupCommit<Request, StoreDecision>> l = new ArrayList<>(LANES);
        for (int i = 0; i < LANES; i++) {
            l.add(GroupCommit.<Request, StoreDecision>builder("MongoDB", this::send)
                    .maxRequests(MAX_REQUESTS)
                    .maxWeight(MAX_REQUESTS)
                    .followUps(FOLLOW_UPS)
                    .failure(e -> new SluiceException("MongoDB failed a batch of decisions: " + e, e))
                    .build());
        }
        this.lanes = List.copyOf(l);
    }

    /**
     * Decides {@code request} in the next batch of its document's lane and waits for it until {@code deadlineNanos}.
     *
     * @throws SluiceException       if MongoDB fails, refuses the request as late or does not answer by the deadline;
     *                               the request then took nothing (but for one MongoDB ran in time whose answer came
     *                               too late)
     * @throws IllegalStateException if the client has been closed
     */
    StoreDecision decide(Request request, long deadlineNanos) {
        int h = request.id().hashCode();
        h ^= h >>> 16;
        return lanes.get(h & (LANES - 1)).decide(request, 1, deadlineNanos);
    }

    /** The server's time of a request's deadline, a {@link System#nanoTime()} value, in epoch milliseconds. */
    long serverDeadlineMillis(long deadlineNanos) {
        return Math.floorDiv(clock.serverTime(deadlineNanos), 1_000_000);
    }

    /** Learns the server's clock from the time it recorded for a request whose answer arrived at {@code arrived}. */
    void learn(long serverEpochMillis, long arrived) {
        clock.learn(Math.multiplyExact(serverEpochMillis, 1_000_000L), arrived);
    }

    /**
     * Reads the server's clock ({@code localTime} of {@code isMaster}) up to {@code samples} times, by
     * {@code deadline}, and no more once a read's round trip took at most 2 ms; so that the first batches' deadlines
     * are not sent early by a loose first bound (each bound is as loose as its read's round trip, which in a new
     * process on a busy machine can take a hundred milliseconds).
     *
     * @throws MongoException if the server does not answer in time
     */
    void learnClock(int samples, long deadline) {
        for (int i = 0; i < samples; i++) {
            long sent = System.nanoTime();
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - sent);
            if (left < 1) {
                throw timeout(null);
            }
            Document hello = database.withTimeout(left, TimeUnit.MILLISECONDS).runCommand(new Document("isMaster", 1));
            long arrived = System.nanoTime();
            Date local = hello.getDate("localTime");
            if (local == null) {
                throw new MongoException("isMaster answered no localTime: " + hello.toJson());
            }
            learn(local.toInstant().toEpochMilli(), arrived);
            if (arrived - sent <= TIGHT_NANOS) {
                return; // this bound is within a round trip of 2 ms: enough
            }
        }
    }

    /** Warms the store's clock by {@code deadline}; a failure is left to the first batch, which reads it again. */
    void warm(long deadline) {
        try {
            learnClock(CLOCK_SAMPLES, deadline);
        } catch (MongoException e) {
            // the first batch learns the clock
        }
    }

    /** Runs {@code batch} on the calling thread, by its latest deadline; the stage is complete when it returns. */
    private CompletionStage<?> send(List<GroupCommit.Request<Request, StoreDecision>> batch) {
        long deadline = batch.get(0).deadlineNanos();
        for (var r : batch) {
            deadline = deadline - r.deadlineNanos() < 0 ? r.deadlineNanos() : deadline;
        }
        try {
            if (!clock.known()) {
                learnClock(1, deadline);
            }
            Map<Document, List<GroupCommit.Request<Request, StoreDecision>>> byDocument = new LinkedHashMap<>();
            for (var r : batch) {
                byDocument
                        .computeIfAbsent(r.payload().id(), id -> new ArrayList<>())
                        .add(r);
            }
            for (var requests : byDocument.values()) {
                requests.get(0).payload().decider().decideTogether(requests, deadline, this);
            }
            return CompletableFuture.completedFuture(null);
        } catch (IllegalStateException e) {
            return CompletableFuture.failedFuture(MongoStore.closed(collection.getNamespace(), e));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * The driver's exception for a call that has no time left: a caller with {@link dev.sluice.FailurePolicy#THROW}
     * gets a store failure caused by the driver's exception, whether the driver or the deadline ended the wait.
     */
    static MongoTimeoutException timeout(@Nullable TimeoutException cause) {
        return timeout("no answer from MongoDB by the request's deadline (the store's timeout)", cause);
    }

    /** {@link #timeout(TimeoutException)} saying {@code message}. */
    static MongoTimeoutException timeout(String message, @Nullable TimeoutException cause) {
        MongoTimeoutException e = new MongoTimeoutException(message);
        if (cause != null) {
            e.initCause(cause);
        }
        return e;
    }

    @Override
    public String toString() {
        return "MongoBatches[" + collection.getNamespace() + "]";
    }
}
