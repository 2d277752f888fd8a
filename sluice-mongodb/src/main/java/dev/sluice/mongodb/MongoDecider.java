package dev.sluice.mongodb;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import dev.sluice.LimiterConfig;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.spi.AtomicDecider;
import dev.sluice.spi.GroupCommit;
import dev.sluice.spi.Listeners;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.spi.StoreDecision;
import dev.sluice.spi.WarmUp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import org.bson.Document;
import org.jspecify.annotations.Nullable;

/**
 * Decides the requests of one limiter on its keys' documents. Thread-safe; keeps no per-key state.
 */
final class MongoDecider implements AtomicDecider, History.Configs {

    /*
     * How is each decision one atomic operation, without an update pipeline and without compare-and-set?
     *
     * A key's document is the key's history: the state after its first `seq` requests (`base`, the numbers of a core
     * StateMachine) and the requests since (`ops`), in the order the server applied them. A request is decided by
     * appending itself, in one round trip:
     *
     *   findOneAndUpdate({_id}, {$push: {ops: {i: id, c: cost, l: limit, t: time}}, $setOnInsert: {seq: 0},
     *                             $max: {expire: ...}}, upsert, returnDocument: AFTER)
     *
     * The server applies the updates of one document one at a time, so the document it returns holds exactly the
     * requests applied before this one, in order, and none after. The caller replays them from `base` through the
     * core state machines and reads its own request's decision off the replay. Every instance replays the same
     * history the same way, so all agree on every decision although none is ever written: nothing is compared,
     * nothing retried, and the decisions are the in-memory store's, exactly. A request carries its own limit and
     * countRejected, so an instance configured otherwise (during a rolling change) replays it as it was decided.
     * With the store's clock, `$currentDate: {"at.<id>": true}` records the server's time of the request in the
     * same update.
     *
     * Example: a token bucket of 3 per 60 s (a token each 20 s) shared by instances A and B.
     *
     *   12:00:05  A appends a1 (cost 1)  ops [a1]          A replays: fresh bucket of 3, a1 takes 1: allowed, 2 left
     *   12:00:06  B appends b1 (cost 2)  ops [a1 b1]       B replays a1, then b1: 2.05 tokens, takes 2: allowed, 0 left
     *   12:00:06  A appends a2 (cost 1)  ops [a1 b1 a2]    A replays a1, b1, then a2: 0.05 tokens: denied, retry
     *                                                      after 19 s
     *
     * Every `compactAfter` requests (32 by default) the caller whose request completes the batch folds it into the
     * state, conditionally on `seq`, so a late or repeated fold changes nothing and requests appended meanwhile stay:
     *
     *   updateOne({_id, seq: s}, {$set: {seq: s + n, base: state after the batch}, $pull: {ops: {i: {$in: batch}}}})
     *
     * A fold that fails is left to the next batch. A document thus holds one batch of requests and those in flight.
     *
     * Concurrent requests on one document append together (MongoBatches): one findOneAndUpdate with
     * {$push: {ops: {$each: [q1, q2, ...]}}} appends them in the order they arrived, and one replay of the document it
     * returns decides each exactly as its own call would have (the same history, cut at each). Each request carries
     * its deadline by the server's clock (`d`, epoch milliseconds) and the update records the server's time of
     * applying it (`$currentDate` into `at.<id>`): a request applied at or past its deadline takes nothing in any
     * replay, so one whose caller was answered by the failure policy (a stalled server, a frozen network) is never
     * counted afterwards, by any instance.
     *
     * Why not the alternatives? An update pipeline computing the algorithm on the server is not exact: pipeline
     * arithmetic on Int64 overflows into doubles, $divide always yields a double, and nanosecond times exceed 2^53,
     * while the buckets' exact rationals need 128-bit products; nor does mongo-java-server, the in-JVM server the
     * tests start, implement update pipelines at all. Compare-and-set (read, compute, write if the version is
     * unchanged) costs two round trips and retries that collapse on a hot key (Bucket4j's issues #407 and #603).
     *
     * Expiry: each request raises `expire` ($max) to the latest time the state after it can still differ from a
     * fresh one (a request at t: t + W for the buckets and the log, the end of the window after next for the tail),
     * plus a minute for clocks that disagree. From then on the document decides as a new one would, so the TTL
     * index may delete it, or not yet, unseen.
     */

    static final int DEFAULT_COMPACT_AFTER = 32;
    static final String EXPIRE = "expire";
    static final String KEY = "key";

    /**
     * Added to every {@code expire}: the server deletes by its own clock, which may run ahead of the clock that timed
     * the requests (the limiter's, with {@link TimeSource#CLOCK}), and with the store's clock the request's time is
     * not known when {@code expire} is sent: it is estimated from the limiter's clock, corrected by the server's
     * times seen so far. A request whose estimate fell short is followed by a correction.
     */
    static final long EXPIRY_MARGIN_NANOS = 60_000_000_000L;

    private static final long NANOS_PER_MILLI = 1_000_000;
    private static final Document PROJECTION = new Document("_id", 0).append(KEY, 0);
    private static final FindOneAndUpdateOptions APPEND = new FindOneAndUpdateOptions()
            .upsert(true)
            .returnDocument(ReturnDocument.AFTER)
            .projection(PROJECTION);
    private static final FindOneAndUpdateOptions READ_WITH_TIME =
            new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER).projection(PROJECTION);

    private final LimiterConfig config;
    private final SharedStoreOptions options;
    private final String namespace; // the options', or the warm-up's
    private final MongoCollection<Document> collection;
    private final OpIds ids;
    private final int compactAfter;
    private final LongConsumer afterSuccess;
    private final MongoBatches batches;
    private final long timeoutNanos;
    private final String shape;
    private final ConcurrentHashMap<List<Object>, LimiterConfig> others = new ConcurrentHashMap<>();
    private volatile long serverOffsetNanos; // server time minus the limiter's clock, as last seen

    /** A decider whose documents are under {@code namespace}: the options', or {@link WarmUp#namespace}'s. */
    MongoDecider(
            LimiterConfig config,
            String namespace,
            SharedStoreOptions options,
            MongoCollection<Document> collection,
            OpIds ids,
            int compactAfter,
            LongConsumer afterSuccess,
            MongoBatches batches) {
        this.config = config;
        this.namespace = namespace;
        this.options = options;
        this.collection = collection;
        this.ids = ids;
        this.compactAfter = compactAfter;
        this.afterSuccess = afterSuccess;
        this.batches = batches;
        this.timeoutNanos = options.timeout().toNanos();
        this.shape = SharedStoreOptions.shape(config);
    }

    /**
     * {@inheritDoc}
     *
     * <p>A consuming decision goes in the next batch of its key's document ({@link MongoBatches}); a {@code peek} is
     * one call. The whole call, including a fold or a correction of {@code expire} that follows the decision, takes at
     * most about the store's timeout: what follows the decision runs only in the time left, and is skipped without it.
     */
    @Override
    public StoreDecision decide(String key, long cost, boolean consume, long nowNanos) {
        long deadline = System.nanoTime() + timeoutNanos;
        Document id = MongoKeys.id(namespace, shape, key);
        if (consume) {
            try {
                return batches.decide(new MongoBatches.Request(this, id, key, cost, nowNanos), deadline);
            } catch (SluiceException e) {
                Throwable cause = e.getCause();
                if (cause instanceof TimeoutException) {
                    cause = MongoBatches.timeout((TimeoutException) cause);
                }
                String why = cause instanceof MongoException ? cause.toString() : e.getMessage();
                throw new SluiceException(
                        "MongoDB failed deciding key '" + key + "' in " + collection.getNamespace() + ": " + why,
                        cause != null ? cause : e);
            }
        }
        try {
            StoreDecision d = peek(id, cost, nowNanos);
            afterSuccess.accept(deadline);
            return d;
        } catch (MongoException e) {
            throw failure("deciding", key, e);
        } catch (MongoStore.ClientClosedException e) {
            throw e;
        } catch (IllegalStateException | IllegalArgumentException | ArithmeticException | ClassCastException e) {
            throw malformed(key, e);
        }
    }

    /**
     * Decides {@code requests}, all on one key's document and in the order they arrived, with one
     * {@code findOneAndUpdate} that appends them all by {@code deadline}, and gives each its answer: its decision,
     * its refusal as late, or the failure of the call. Then folds or corrects {@code expire} in the time left.
     *
     * @throws IllegalStateException if the client has been closed
     */
    void decideTogether(
            List<GroupCommit.Request<MongoBatches.Request, StoreDecision>> requests, long deadline, MongoBatches b) {
        MongoBatches.Request first = requests.get(0).payload();
        String key = first.key();
        int n = requests.size();
        List<Document> ops = new ArrayList<>(n);
        long[] targets = new long[n];
        long estimate = Long.MIN_VALUE;
        boolean timedByServer = false;
        for (int i = 0; i < n; i++) {
            var r = requests.get(i);
            MongoBatches.Request q = r.payload();
            Document op = q.decider()
                    .request(q.cost(), q.nowNanos())
                    .append(History.DEADLINE, b.serverDeadlineMillis(r.deadlineNanos()));
            ops.add(op);
            targets[i] = History.id(op);
            timedByServer = q.nowNanos() == STORE_TIME;
            estimate = Math.max(estimate, timedByServer ? config.clockNanos() + serverOffsetNanos : q.nowNanos());
        }
        Document filter = new Document("_id", first.id());
        History history;
        History.Outcome[] outcomes;
        Document doc;
        try {
            doc = push(filter, key, ops, timedByServer, estimate, deadline);
            long arrived = System.nanoTime();
            history = History.of(doc);
            outcomes = history.replay(targets, this);
            b.learn(history.atMillis(ops.get(0)), arrived);
        } catch (MongoException e) {
            SluiceException f = failure("deciding", key, e);
            requests.forEach(r -> r.fail(f));
            return;
        } catch (MongoStore.ClientClosedException e) {
            throw e;
        } catch (IllegalStateException | IllegalArgumentException | ArithmeticException | ClassCastException e) {
            SluiceException f = malformed(key, e);
            requests.forEach(r -> r.fail(f));
            return;
        }
        long latest = Long.MIN_VALUE;
        for (int i = 0; i < n; i++) {
            History.Outcome o = outcomes[i];
            latest = Math.max(latest, o.time());
            if (o.late()) {
                requests.get(i)
                        .fail(new SluiceException(
                                "MongoDB applied the request past its deadline: refused, nothing taken",
                                MongoBatches.timeout(
                                        "MongoDB applied the request past its deadline (by the server's clock):"
                                                + " it takes nothing",
                                        null)));
            } else {
                requests.get(i)
                        .answer(Objects.requireNonNull(o.decision(), "a request is decided; only a give-back is not"));
            }
        }
        try {
            if (timedByServer) {
                correctExpiry(filter, doc, latest, deadline);
            }
            long firstDone = history.seq + outcomes[0].position();
            long lastDone = history.seq + outcomes[n - 1].position() + 1;
            if (Math.floorDiv(lastDone, compactAfter) > Math.floorDiv(firstDone, compactAfter)) {
                compact(filter, history, outcomes[n - 1], deadline);
            }
            afterSuccess.accept(deadline);
        } catch (MongoException e) {
            Listeners.failure(
                    options.listener(),
                    null,
                    new SluiceException(
                            "MongoDB failed correcting the expiry of key '" + key + "' in " + collection.getNamespace()
                                    + ": " + e,
                            e));
        }
    }

    @Override
    public boolean giveBack(String key, long cost, long place, long nowNanos) {
        long deadline = System.nanoTime() + timeoutNanos;
        try {
            Document id = MongoKeys.id(namespace, shape, key);
            Document op = request(cost, nowNanos).append(History.GIVE_BACK, place);
            boolean given = append(id, key, op, nowNanos, deadline).givenBack();
            afterSuccess.accept(deadline);
            return given;
        } catch (MongoException e) {
            throw failure("giving back " + cost + " for", key, e);
        } catch (MongoStore.ClientClosedException e) {
            throw e;
        } catch (IllegalStateException | IllegalArgumentException | ArithmeticException | ClassCastException e) {
            throw malformed(key, e);
        }
    }

    private SluiceException failure(String what, String key, MongoException e) {
        return new SluiceException(
                "MongoDB failed " + what + " key '" + key + "' in " + collection.getNamespace() + ": " + e, e);
    }

    private SluiceException malformed(String key, RuntimeException e) {
        return new SluiceException(
                "the document of key '" + key + "' in " + collection.getNamespace() + " is not a Sluice " + shape
                        + " history: " + e.getMessage(),
                e);
    }

    private Document request(long cost, long nowNanos) {
        Document op = new Document(History.OP_ID, ids.next())
                .append(History.COST, cost)
                .append(History.LIMIT, config.limit());
        if (config.countRejected()) {
            op.append(History.COUNT_REJECTED, true);
        }
        if (nowNanos != STORE_TIME) {
            op.append(History.TIME, nowNanos);
        }
        return op;
    }

    /** Appends request {@code op} to the key's history and replays it: the one round trip of a give-back. */
    private History.Outcome append(Document id, String key, Document op, long nowNanos, long deadline) {
        long opId = History.id(op);
        boolean timedByServer = nowNanos == STORE_TIME;
        long estimate = timedByServer ? config.clockNanos() + serverOffsetNanos : nowNanos;
        Document filter = new Document("_id", id);
        Document doc = push(filter, key, List.of(op), timedByServer, estimate, deadline);
        History history = History.of(doc);
        History.Outcome outcome = history.replay(opId, this);
        if (timedByServer) {
            correctExpiry(filter, doc, outcome.time(), deadline);
        }
        if ((history.seq + outcome.position() + 1) % compactAfter == 0) {
            compact(filter, history, outcome, deadline);
        }
        return outcome;
    }

    /**
     * Appends {@code ops} to the history of the key's document, in one {@code findOneAndUpdate} by
     * {@code deadline}, recording the server's time of each that is timed by the server or carries a deadline; the
     * document after it.
     */
    private Document push(
            Document filter, String key, List<Document> ops, boolean timedByServer, long estimate, long deadline) {
        Document onInsert = new Document(History.SEQ, 0L);
        if (MongoKeys.hashed(key)) {
            onInsert.append(KEY, key);
        }
        Document update = new Document(
                        "$push", new Document(History.OPS, ops.size() == 1 ? ops.get(0) : new Document("$each", ops)))
                .append("$setOnInsert", onInsert)
                .append("$max", new Document(EXPIRE, expireDate(estimate)));
        Document times = new Document();
        for (Document op : ops) {
            if (timedByServer || op.get(History.DEADLINE) != null) {
                times.append(History.AT + "." + OpIds.field(History.id(op)), true);
            }
        }
        if (!times.isEmpty()) {
            update.append("$currentDate", times);
        }
        MongoCollection<Document> first = within(deadline);
        if (first == null) {
            throw MongoBatches.timeout(null);
        }
        Document doc;
        try {
            doc = driver(() -> first.findOneAndUpdate(filter, update, APPEND));
        } catch (MongoCommandException | MongoWriteException e) {
            if (!isDuplicateKey(e)) {
                throw e;
            }
            // Two first requests for a new key raced to insert its document and this one lost (MongoDB before 4.2
            // does not retry such an upsert itself); the document exists now, so this attempt updates it. Once.
            MongoCollection<Document> rest = within(deadline);
            if (rest == null) {
                throw e;
            }
            doc = driver(() -> rest.findOneAndUpdate(filter, update, APPEND));
        }
        if (doc == null) {
            throw new IllegalArgumentException("findOneAndUpdate with upsert returned no document");
        }
        return doc;
    }

    private static boolean isDuplicateKey(MongoException e) {
        return ErrorCategory.fromErrorCode(e.getCode()) == ErrorCategory.DUPLICATE_KEY;
    }

    /**
     * With the store's clock: learns the server's offset, and raises {@code expire} if the estimate fell short (in the
     * time left; else the next request, whose estimate will be right, raises it).
     */
    private void correctExpiry(Document filter, Document doc, long serverNanos, long deadline) {
        serverOffsetNanos = serverNanos - config.clockNanos();
        Date expire = doc.getDate(EXPIRE);
        if (expire == null || expire.toInstant().toEpochMilli() < ceilMillis(expiryBound(serverNanos))) {
            MongoCollection<Document> rest = within(deadline);
            if (rest != null) {
                driver(() ->
                        rest.updateOne(filter, new Document("$max", new Document(EXPIRE, expireDate(serverNanos)))));
            }
        }
    }

    /**
     * Folds the requests up to and including {@code outcome}'s into the state, in the time left; failures are only
     * reported, and the fold is left to the next batch.
     */
    private void compact(Document filter, History history, History.Outcome outcome, long deadline) {
        MongoCollection<Document> rest = within(deadline);
        if (rest == null) {
            return;
        }
        int n = outcome.position() + 1;
        List<Long> folded = new ArrayList<>(n);
        Document unset = new Document();
        for (Document op : history.ops.subList(0, n)) {
            long opId = History.id(op);
            folded.add(opId);
            if (history.hasAt(op)) {
                unset.append(History.AT + "." + OpIds.field(opId), "");
            }
        }
        Document update = new Document(
                        "$set",
                        new Document(History.SEQ, history.seq + n)
                                .append(
                                        History.BASE,
                                        History.encode(outcome.state().snapshot())))
                .append("$pull", new Document(History.OPS, new Document(History.OP_ID, new Document("$in", folded))));
        if (!unset.isEmpty()) {
            update.append("$unset", unset);
        }
        try {
            driver(() -> rest.updateOne(new Document(filter).append(History.SEQ, history.seq), update));
        } catch (MongoException e) {
            Listeners.failure(
                    options.listener(),
                    null,
                    new SluiceException(
                            "MongoDB failed folding " + n
                                    + " requests into their key's state in " + collection.getNamespace()
                                    + " (left to the next batch): " + e,
                            e));
        }
    }

    /**
     * The driver's answer to {@code call}; its {@link IllegalStateException} (a closed client) as the store's, so
     * that it is not taken for a malformed document's.
     */
    private <T extends @Nullable Object> T driver(Supplier<T> call) {
        try {
            return call.get();
        } catch (IllegalStateException e) {
            throw MongoStore.closed(collection.getNamespace(), e);
        }
    }

    /** The collection with the time left until {@code deadline} as its timeout; null if less than a millisecond. */
    private @Nullable MongoCollection<Document> within(long deadline) {
        return MongoStore.within(collection, deadline);
    }

    /** A read that changes nothing; with the store's clock it also reads the server's time, in the same operation. */
    private StoreDecision peek(Document id, long cost, long nowNanos) {
        Document filter = new Document("_id", id);
        Document doc;
        long now = nowNanos;
        if (nowNanos == STORE_TIME) {
            doc = driver(() -> collection.findOneAndUpdate(
                    filter, new Document("$currentDate", new Document(History.NOW, true)), READ_WITH_TIME));
            // A key without a document is fresh, and a fresh state's answer to a peek does not depend on the time.
            now = doc == null ? config.clockNanos() : History.nowOf(doc);
        } else {
            doc = driver(() -> collection.find(filter).projection(PROJECTION).first());
        }
        return History.of(doc).peek(now, cost, this);
    }

    /**
     * The latest time from which the state after a request at {@code t} (the newest the state has seen) decides as a
     * fresh one, if nothing else happens: the bound of {@code StateMachine.expiresAt}.
     */
    long expiryBound(long t) {
        long w = config.windowNanos();
        try {
            switch (config.algorithm()) {
                case FIXED_WINDOW:
                    return Math.multiplyExact(Math.floorDiv(t, w) + 1, w);
                case SLIDING_TAIL:
                    return Math.multiplyExact(Math.floorDiv(t, w) + 2, w);
                case SLIDING_WINDOW_COUNTER:
                    long s = config.subWindowNanos();
                    long start = Math.floorDiv(t, s) * s;
                    return Math.addExact(Math.addExact(start, w), config.strict() ? s : 0);
                case LEAKY_BUCKET:
                    return Math.addExact(Math.addExact(t, w), 1);
                default: // SLIDING_LOG, TOKEN_BUCKET
                    return Math.addExact(t, w);
            }
        } catch (ArithmeticException overflow) {
            return Long.MAX_VALUE;
        }
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }

    private static long ceilMillis(long nanos) {
        return -Math.floorDiv(-nanos, NANOS_PER_MILLI);
    }

    /** The {@code expire} a request at {@code t} sets: its {@link #expiryBound}, plus the margin, in milliseconds. */
    private Date expireDate(long t) {
        return Date.from(Instant.ofEpochMilli(ceilMillis(saturatedAdd(expiryBound(t), EXPIRY_MARGIN_NANOS))));
    }

    @Override
    public LimiterConfig own() {
        return config;
    }

    @Override
    public LimiterConfig of(long limit, boolean countRejected) {
        if (limit == config.limit() && countRejected == config.countRejected()) {
            return config;
        }
        return others.computeIfAbsent(
                List.of(limit, countRejected),
                k -> new LimiterConfig(
                        config.algorithm(),
                        limit,
                        config.window(),
                        config.clock(),
                        countRejected,
                        config.buckets(),
                        config.strict()));
    }

    @Override
    public String toString() {
        return "MongoDecider[" + collection.getNamespace() + ", " + namespace + "/" + shape + "]";
    }
}
