package dev.sluice.spi;

import dev.sluice.SluiceException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Group commit for a store's consuming decisions: while one batch is in flight, the requests that arrive wait, and go
 * together in the next, as one call of the store (one script run, one function call). Each request carries its
 * deadline, and its caller waits no longer. Thread-safe.
 *
 * <p>How it is designed, and why. A decision is a few microseconds of work on the server and a round trip of tens of
 * microseconds or more for the client, its kernel and the server's: under load the round trips, not the work, bound
 * what a server and its clients decide per second. So one {@code GroupCommit} sends at most one batch at a time: a
 * request that finds it idle goes at once, alone, on its caller's thread, and adds no latency; requests that arrive
 * while a batch is in flight queue, and all of them (up to {@link Builder#maxRequests} requests and
 * {@link Builder#maxWeight} weight, the keys they touch) go in the next batch when it returns, sent by the
 * {@link Builder#followUps follow-up executor}. The batch size follows the load by itself: at 64 concurrent callers
 * about 64 requests share each call. The store decides the requests of a batch atomically each, one after the other
 * in the order they arrived, each exactly as its own call would, so batching changes no decision.
 *
 * <p>Deadlines. A caller is answered by its request's deadline ({@link System#nanoTime()}), by the store or by a
 * {@link SluiceException} whose cause is a {@link TimeoutException}, which the limiter hands to the failure policy;
 * no request waits past its deadline because of others. Such a request must never be applied afterwards, or a
 * refused request would consume. A request whose deadline passes while it waits is dropped, never sent. A request in
 * a batch that reaches the store late must be refused by the store: the {@link Sender} sends each request's deadline
 * by the store's clock ({@link ServerClock}), and the store refuses, touching nothing, a request past it. A batch in
 * flight none of whose requests still waits for it in time (each given up by its caller, or past its deadline while
 * a call that blocks outlasts it) no longer holds the queue: the next batch goes without waiting for it (a batch sent
 * on a connection whose loss the driver has not seen yet may never return).
 *
 * <p>Example: 64 callers on one key, a 2 ms round trip, a 15 ms deadline. The first request goes alone; the 63 that
 * arrive in the next 2 ms go together when it returns: 64 decisions in 2 round trips instead of 64. If the server
 * stalls for 1 s, the batch in flight and every request queued behind it are answered by the failure policy 15 ms
 * after they came; when the server wakes it refuses every request of the stalled batch as past its deadline, and the
 * queued ones were never sent: the counts are what they were before the stall.
 *
 * @param <Q> what a request carries to the store
 * @param <A> its answer
 */
public final class GroupCommit<Q, A> {

    /** Sends a batch to the store. */
    @FunctionalInterface
    public interface Sender<Q, A> {

        /**
         * Sends {@code batch}: at least one request, in the order they arrived. The returned stage completes once the
         * store has answered or failed; each request should have been given its answer ({@link Request#answer}) or
         * its failure ({@link Request#fail}) by then; any left without is failed with the stage's exception, or as
         * unanswered. A store whose calls block may run the call on the calling thread and return a completed stage;
         * the call must then end by the latest deadline of the batch. An exception thrown here fails every request of
         * the batch.
         */
        CompletionStage<?> send(List<Request<Q, A>> batch);
    }

    /** One request of a batch, and its answer. */
    public static final class Request<Q, A> {
        private final Q payload;
        private final int weight;
        private final long deadlineNanos;
        /** Done when answered, failed, or given up by its caller (cancelled). */
        private final CompletableFuture<A> answer = new CompletableFuture<>();

        private Request(Q payload, int weight, long deadlineNanos) {
            this.payload = payload;
            this.weight = weight;
            this.deadlineNanos = deadlineNanos;
        }

        /** What the request carries to the store. */
        public Q payload() {
            return payload;
        }

        /** The request's deadline, a {@link System#nanoTime()} value. */
        public long deadlineNanos() {
            return deadlineNanos;
        }

        /** Answers the request; nothing if it was answered, failed or given up already. */
        public void answer(A value) {
            answer.complete(value);
        }

        /**
         * Fails the request with {@code failure} (a {@link SluiceException}, or an {@link IllegalStateException} for
         * a closed store); nothing if it was answered, failed or given up already.
         */
        public void fail(Throwable failure) {
            answer.completeExceptionally(failure);
        }

        /** Whether the request was answered, failed, or given up by its caller. */
        public boolean isDone() {
            return answer.isDone();
        }
    }

    private final String store;
    private final int maxRequests;
    private final int maxWeight;
    private final Executor followUps;
    private final Function<Throwable, SluiceException> failure;
    private final Sender<Q, A> sender;

    private final ArrayDeque<Request<Q, A>> waiting = new ArrayDeque<>(); // guarded by this
    private boolean sending; // guarded by this: a batch is in flight
    private @Nullable CompletableFuture<?> inFlight; // guarded by this: the batch in flight, until it completes
    private List<Request<Q, A>> inFlightBatch = List.of(); // guarded by this: its requests

    private GroupCommit(Builder<Q, A> b) {
        this.store = b.store;
        this.maxRequests = b.maxRequests;
        this.maxWeight = b.maxWeight;
        this.followUps = b.followUps;
        this.failure = b.failure;
        this.sender = b.sender;
    }

    /**
     * A builder of a {@code GroupCommit} whose batches {@code sender} sends.
     *
     * @param store the store's name in failure messages, e.g. {@code "Redis"}
     */
    public static <Q, A> Builder<Q, A> builder(String store, Sender<Q, A> sender) {
        return new Builder<>(Objects.requireNonNull(store, "store"), Objects.requireNonNull(sender, "sender"));
    }

    /**
     * Decides one request in the next batch and waits for its answer until {@code deadlineNanos}.
     *
     * @param weight        what the request counts towards {@link Builder#maxWeight} (the keys it touches), &gt; 0
     * @param deadlineNanos a {@link System#nanoTime()} value
     * @throws SluiceException       if the store fails or does not answer by the deadline (then caused by a
     *                               {@link TimeoutException}); the request then took nothing, but for one the store
     *                               ran in time whose answer came too late
     * @throws IllegalStateException if the store is closed
     */
    public A decide(Q payload, int weight, long deadlineNanos) {
        if (weight <= 0) {
            throw new IllegalArgumentException("weight must be > 0, was " + weight);
        }
        Request<Q, A> r = new Request<>(payload, weight, deadlineNanos);
        submit(r);
        try {
            return r.answer.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            r.answer.cancel(false); // dropped unsent, or refused by the store as past its deadline
            givenUp();
            throw new SluiceException("no answer from " + store + " by the request's deadline", e);
        } catch (ExecutionException e) {
            throw failure(e.getCause() != null ? e.getCause() : e);
        } catch (InterruptedException e) {
            r.answer.cancel(false);
            givenUp();
            Thread.currentThread().interrupt();
            throw new SluiceException("interrupted while waiting for " + store, e);
        }
    }

    /**
     * Decides one request in the next batch without waiting for it: the returned future completes with the request's
     * answer, or with its failure, by {@code deadlineNanos} at the latest. A timer completes it at the deadline with a
     * {@link SluiceException} caused by a {@link TimeoutException} if the store has not answered by then; the request
     * is then never applied (dropped unsent, or refused by the store as past its deadline), but for one the store ran
     * in time whose answer came too late. The future completes on the thread that answers it: the store driver's, the
     * timer's, or this one's when the store answered at once; what depends on it should be short or handed to an
     * executor of its own.
     *
     * @param weight        what the request counts towards {@link Builder#maxWeight} (the keys it touches), &gt; 0
     * @param deadlineNanos a {@link System#nanoTime()} value
     * @return the answer; failed with a {@link SluiceException} if the store fails or does not answer by the
     *         deadline, or with an {@link IllegalStateException} if the store is closed
     */
    public CompletableFuture<A> submit(Q payload, int weight, long deadlineNanos) {
        if (weight <= 0) {
            throw new IllegalArgumentException("weight must be > 0, was " + weight);
        }
        Request<Q, A> r = new Request<>(payload, weight, deadlineNanos);
        // the timer first, so that a request is never queued without one
        var unusedTimer = r.answer.orTimeout(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        submit(r);
        CompletableFuture<A> out = new CompletableFuture<>();
        var unused = r.answer.whenComplete((a, e) -> {
            if (e == null) {
                out.complete(a);
                return;
            }
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof TimeoutException) { // the timer's: dropped unsent, or refused by the store
                givenUp();
                out.completeExceptionally(
                        new SluiceException("no answer from " + store + " by the request's deadline", cause));
            } else {
                out.completeExceptionally(failure(cause));
            }
        });
        return out;
    }

    /** How many requests wait for the next batch (given-up ones included until it is formed). */
    synchronized int queued() {
        return waiting.size();
    }

    private void submit(Request<Q, A> r) {
        synchronized (this) {
            if (sending) {
                waiting.add(r);
                return;
            }
            sending = true;
        }
        send(List.of(r));
    }

    /** The next batch from the requests waiting, dropping those given up or past their deadline; or none. */
    private void next() {
        List<Request<Q, A>> batch = new ArrayList<>();
        synchronized (this) {
            long now = System.nanoTime();
            int weight = 0;
            while (!waiting.isEmpty() && batch.size() < maxRequests && weight < maxWeight) {
                Request<Q, A> r = waiting.poll();
                if (r.answer.isDone()) {
                    continue;
                }
                if (now - r.deadlineNanos >= 0) {
                    r.fail(new SluiceException(
                            "no answer from " + store + " by the request's deadline: not sent",
                            new TimeoutException("the request's deadline passed while it waited")));
                    continue;
                }
                batch.add(r);
                weight += r.weight;
            }
            if (batch.isEmpty()) {
                sending = false;
                return;
            }
        }
        try {
            followUps.execute(() -> send(batch));
        } catch (RuntimeException e) { // the executor refused
            fail(batch, e);
            synchronized (this) {
                sending = false;
            }
        }
    }

    private void send(List<Request<Q, A>> batch) {
        CompletableFuture<Void> flight = new CompletableFuture<>();
        synchronized (this) {
            inFlight = flight;
            inFlightBatch = batch;
        }
        var unused = flight.whenComplete((r, e) -> {
            try {
                for (Request<Q, A> q : batch) {
                    if (!q.isDone()) { // the usual case is every request answered: no failure is made for those
                        q.fail(unanswered(e));
                    }
                }
            } finally { // whatever happened above, the queue goes on
                synchronized (this) {
                    if (inFlight == flight) {
                        inFlight = null;
                        inFlightBatch = List.of();
                    }
                }
                next();
            }
        });
        try {
            var unusedSent = sender.send(batch).whenComplete((r, e) -> {
                if (e != null) {
                    flight.completeExceptionally(e);
                } else {
                    flight.complete(null);
                }
            });
        } catch (RuntimeException e) { // not connected, or closed
            flight.completeExceptionally(e);
        } catch (Error e) { // a bug or the VM's: the batch fails now, not at its deadlines, and the queue goes on
            flight.completeExceptionally(e);
            throw e;
        }
    }

    /**
     * The failure of a request its batch left unanswered, the batch having ended with {@code e} (null: it returned).
     */
    private RuntimeException unanswered(@Nullable Throwable e) {
        if (e == null) {
            return new SluiceException(store + " did not answer this request of its batch");
        }
        if (e instanceof CancellationException) { // let go by givenUp(): the request is past its deadline
            return new SluiceException(
                    "no answer from " + store + " by the request's deadline",
                    new TimeoutException("the call outlasted the request's deadline"));
        }
        return failure(e);
    }

    /**
     * Lets the queue go on once no request of the batch in flight still waits for it in time: each has been answered,
     * given up by its caller, or is past its deadline (a lone request's caller is kept in a call that blocks, which may
     * outlast its deadline where the driver does not bound it). Without this, a batch that never returns would hold
     * the queue, and every later request would wait out its whole deadline behind it instead of being sent. A batch
     * let go this way is never applied late: the store refuses each of its requests as past its deadline; a request
     * of it not yet answered is answered as timed out.
     */
    private void givenUp() {
        CompletableFuture<?> flight;
        synchronized (this) {
            flight = inFlight;
            if (flight == null) {
                return;
            }
            long now = System.nanoTime();
            for (Request<Q, A> q : inFlightBatch) {
                if (!q.answer.isDone() && now - q.deadlineNanos < 0) {
                    return;
                }
            }
        }
        flight.cancel(false); // its completion sends what waits, or frees the queue
    }

    private void fail(List<Request<Q, A>> batch, Throwable e) {
        RuntimeException f = failure(e);
        for (Request<Q, A> r : batch) {
            r.fail(f);
        }
    }

    /**
     * {@code e} as the exception a caller gets: a closed store's and Sluice's own as they are, any other wrapped by the
     * store's {@link Builder#failure failure} function; by the default one, with what that function threw kept as
     * suppressed, when it throws (a bug of the store's must not leave a request unanswered, nor the queue held).
     */
    private RuntimeException failure(Throwable e) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        if (cause instanceof SluiceException || cause instanceof IllegalStateException) {
            return (RuntimeException) cause;
        }
        try {
            return failure.apply(cause);
        } catch (RuntimeException bug) {
            SluiceException f = defaultFailure(store, cause);
            f.addSuppressed(bug);
            return f;
        }
    }

    private static SluiceException defaultFailure(String store, Throwable e) {
        return new SluiceException(store + " failed a batch of decisions: " + e, e);
    }

    @Override
    public String toString() {
        return "GroupCommit[" + store + "]";
    }

    /**
     * Builds a {@link GroupCommit}. Not thread-safe; setters validate at once.
     *
     * @param <Q> what a request carries to the store
     * @param <A> its answer
     */
    public static final class Builder<Q, A> {
        private final String store;
        private final Sender<Q, A> sender;
        private int maxRequests = 256;
        private int maxWeight = 1024;
        private Executor followUps = Runnable::run;
        private Function<Throwable, SluiceException> failure;

        private Builder(String store, Sender<Q, A> sender) {
            this.store = store;
            this.sender = sender;
            this.failure = e -> defaultFailure(store, e);
        }

        /** The most requests in one batch; default 256. */
        public Builder<Q, A> maxRequests(int maxRequests) {
            if (maxRequests <= 0) {
                throw new IllegalArgumentException("maxRequests must be > 0, was " + maxRequests);
            }
            this.maxRequests = maxRequests;
            return this;
        }

        /** The weight (keys) beyond which a batch takes no more requests; default 1024. */
        public Builder<Q, A> maxWeight(int maxWeight) {
            if (maxWeight <= 0) {
                throw new IllegalArgumentException("maxWeight must be > 0, was " + maxWeight);
            }
            this.maxWeight = maxWeight;
            return this;
        }

        /**
         * Where a batch sent when the one before it returns is sent from. The default runs it on the thread that
         * completed the one before, which suits a driver whose calls return at once (Lettuce); a store whose calls
         * block gives an executor of its own, so that no caller's thread, its own answer in hand, sends the requests
         * of others.
         */
        public Builder<Q, A> followUps(Executor followUps) {
            this.followUps = Objects.requireNonNull(followUps, "followUps");
            return this;
        }

        /** The exception a caller gets for a driver's exception {@code e}; default "{store} failed a batch ...". */
        public Builder<Q, A> failure(Function<Throwable, SluiceException> failure) {
            this.failure = Objects.requireNonNull(failure, "failure");
            return this;
        }

        public GroupCommit<Q, A> build() {
            return new GroupCommit<>(this);
        }
    }
}
