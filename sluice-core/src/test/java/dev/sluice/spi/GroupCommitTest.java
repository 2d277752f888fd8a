package dev.sluice.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.sluice.SluiceException;
import dev.sluice.TestAwait;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link GroupCommit} over a store whose batches the test completes by hand: what arrives while a batch is in flight
 * goes in the next one, a request whose deadline passes while it waits is never sent, and a batch every caller gave
 * up holds nothing back.
 */
class GroupCommitTest {

    private static final long PATIENT = TimeUnit.SECONDS.toNanos(30);
    private static final long SHORT = TimeUnit.MILLISECONDS.toNanos(50);

    /** The batches sent, each as its payloads, and the call each waits on. */
    private final List<List<String>> sent = new CopyOnWriteArrayList<>();

    private final List<CompletableFuture<Void>> calls = new CopyOnWriteArrayList<>();
    private final List<List<GroupCommit.Request<String, String>>> batches = new CopyOnWriteArrayList<>();
    private final ExecutorService callers = Executors.newCachedThreadPool();

    private final GroupCommit<String, String> commit =
            GroupCommit.<String, String>builder("Store", this::record).build();

    @AfterEach
    void stopCallers() {
        callers.shutdownNow();
    }

    /** Sends {@code batch} as a call the test completes by hand ({@link #answer}), recording it. */
    private CompletableFuture<Void> record(List<GroupCommit.Request<String, String>> batch) {
        CompletableFuture<Void> call = new CompletableFuture<>();
        batches.add(batch);
        calls.add(call);
        sent.add(batch.stream().map(GroupCommit.Request::payload).toList()); // last: awaitSent sees the rest
        return call;
    }

    /** A request decided now on {@code c} is sent, as the batch after the {@code before} sent so far, and answered. */
    private void assertTheNextIsSentAndAnswered(GroupCommit<String, String> c, int before) throws Exception {
        Future<String> next = callers.submit(() -> c.decide("next", 1, System.nanoTime() + PATIENT));
        awaitSent(before + 1);
        answer(before);
        assertEquals("NEXT", next.get(30, TimeUnit.SECONDS));
    }

    /** Answers every request of batch {@code i} with its payload, upper-cased, and completes the call. */
    private void answer(int i) {
        batches.get(i).forEach(r -> r.answer(r.payload().toUpperCase(Locale.ROOT)));
        calls.get(i).complete(null);
    }

    private Future<String> decide(String payload, long timeoutNanos) {
        return callers.submit(() -> commit.decide(payload, 1, System.nanoTime() + timeoutNanos));
    }

    private void awaitSent(int n) {
        TestAwait.until(n + " batches sent", () -> sent.size() >= n);
        assertEquals(n, sent.size(), "batches sent: " + sent);
    }

    private static void awaitDone(Future<?> f) {
        TestAwait.until("the request answered", f::isDone);
    }

    /** Sends {@code a}, then {@code b} and {@code c} while its batch is in flight: they wait for the next batch. */
    private List<Future<String>> aThenBAndCQueued() {
        Future<String> a = decide("a", PATIENT);
        awaitSent(1);
        Future<String> b = decide("b", PATIENT);
        Future<String> c = decide("c", PATIENT);
        TestAwait.until("b and c queued", () -> commit.queued() >= 2);
        assertEquals(2, commit.queued(), "b and c wait for the next batch");
        return List.of(a, b, c);
    }

    @Test
    void requestsArrivingWhileABatchIsInFlightGoTogetherInTheNext() throws Exception {
        List<Future<String>> abc = aThenBAndCQueued();
        answer(0);
        awaitSent(2);
        answer(1);
        assertEquals("A", abc.get(0).get(30, TimeUnit.SECONDS));
        assertEquals("B", abc.get(1).get(30, TimeUnit.SECONDS));
        assertEquals("C", abc.get(2).get(30, TimeUnit.SECONDS));
        assertEquals(List.of(List.of("a"), List.of("b", "c")), sortedBatches());
    }

    /**
     * A batch whose call returns with a request it did not answer: that request fails with a {@link SluiceException}
     * that says so, and the ones it answered keep their answers.
     */
    @Test
    void aRequestItsBatchLeftUnansweredFailsAndTheOthersKeepTheirAnswers() throws Exception {
        List<Future<String>> abc = aThenBAndCQueued();
        Future<String> a = abc.get(0);
        Future<String> b = abc.get(1);
        Future<String> c = abc.get(2);
        answer(0);
        awaitSent(2);
        GroupCommit.Request<String, String> first = batches.get(1).get(0);
        first.answer(first.payload().toUpperCase(Locale.ROOT)); // only the first of the batch
        calls.get(1).complete(null);
        String answered = first.payload();
        Future<String> left = answered.equals("b") ? c : b;
        assertEquals(answered.toUpperCase(Locale.ROOT), (answered.equals("b") ? b : c).get(30, TimeUnit.SECONDS));
        SluiceException e = assertInstanceOf(
                SluiceException.class,
                assertThrows(ExecutionException.class, () -> left.get(30, TimeUnit.SECONDS))
                        .getCause());
        assertEquals("Store did not answer this request of its batch", e.getMessage());
        assertEquals("A", a.get(30, TimeUnit.SECONDS));
    }

    @Test
    void aRequestWhoseDeadlinePassesWhileItWaitsIsNeverSent() throws Exception {
        Future<String> a = decide("a", PATIENT);
        awaitSent(1);
        Future<String> late = decide("late", SHORT);
        awaitDone(late);
        SluiceException e = assertInstanceOf(
                SluiceException.class,
                assertThrows(ExecutionException.class, late::get).getCause());
        assertInstanceOf(TimeoutException.class, e.getCause(), "ended by its deadline: " + e);
        answer(0);
        assertEquals("A", a.get(30, TimeUnit.SECONDS));
        Future<String> after = decide("after", PATIENT);
        awaitSent(2);
        answer(1);
        assertEquals("AFTER", after.get(30, TimeUnit.SECONDS));
        assertEquals(List.of(List.of("a"), List.of("after")), sent, "the late request was never sent");
    }

    @Test
    void aBatchEveryCallerGaveUpHoldsNothingBack() throws Exception {
        Future<String> stuck = decide("stuck", SHORT); // its call never returns
        awaitSent(1);
        awaitDone(stuck);
        assertThrows(ExecutionException.class, stuck::get);
        Future<String> next = decide("next", PATIENT);
        awaitSent(2);
        answer(1);
        assertEquals("NEXT", next.get(30, TimeUnit.SECONDS));
        assertEquals(List.of(List.of("stuck"), List.of("next")), sent);
    }

    /**
     * A lone request goes on its caller's thread, which a store whose calls block keeps in the call; a call that
     * outlasts its request's deadline (a driver that does not bound it) holds the queue no longer than the deadline
     * of the first request that waits behind it: that one is answered by its own deadline, the batch in flight is let
     * go, and the requests after it are sent. The blocked caller is answered as timed out once its call returns.
     */
    @Test
    void aCallThatOutlastsItsDeadlineOnItsCallersThreadHoldsNothingBackPastTheNextDeadline() throws Exception {
        CountDownLatch underWay = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        GroupCommit<String, String> blocking = GroupCommit.<String, String>builder("Store", batch -> {
                    if (batch.get(0).payload().equals("blocked")) {
                        underWay.countDown();
                        try {
                            release.await(); // the call the driver does not bound, on the caller's thread
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        return CompletableFuture.completedFuture(null);
                    }
                    return record(batch);
                })
                .build();
        Future<String> blocked = callers.submit(() -> blocking.decide("blocked", 1, System.nanoTime() + SHORT));
        TestAwait.until("the blocked call under way", () -> underWay.getCount() == 0);
        // its deadline is after the blocked one's: when it gives up, no request of the batch in flight waits in time
        Future<String> behind = callers.submit(() -> blocking.decide("behind", 1, System.nanoTime() + SHORT));
        awaitDone(behind);
        SluiceException late = assertInstanceOf(
                SluiceException.class,
                assertThrows(ExecutionException.class, behind::get).getCause());
        assertInstanceOf(TimeoutException.class, late.getCause(), "answered by its own deadline: " + late);
        Future<String> next = callers.submit(() -> blocking.decide("next", 1, System.nanoTime() + PATIENT));
        awaitSent(1);
        answer(0);
        assertEquals("NEXT", next.get(30, TimeUnit.SECONDS));
        assertEquals(List.of(List.of("next")), sent, "sent while the blocked call still ran");
        assertEquals(false, blocked.isDone(), "the blocked call still runs");
        release.countDown();
        SluiceException timedOut = assertInstanceOf(
                SluiceException.class,
                assertThrows(ExecutionException.class, () -> blocked.get(30, TimeUnit.SECONDS))
                        .getCause());
        assertInstanceOf(TimeoutException.class, timedOut.getCause(), "answered as timed out: " + timedOut);
    }

    /**
     * A store call that ends in an {@link Error} (a bug of the driver's, a stack overflow) rather than an exception
     * fails its batch at once and frees the queue: the Error reaches the caller whose thread made the call, a request
     * of a batch sent for it on another thread is answered with a failure at once, not at its deadline, and the next
     * request is sent.
     */
    @Test
    void aCallEndingInAnErrorFailsItsBatchAtOnceAndFreesTheQueue() throws Exception {
        GroupCommit<String, String> erring = GroupCommit.<String, String>builder("Store", batch -> {
                    if (batch.get(0).payload().startsWith("error")) {
                        throw new AssertionError("the driver's bug");
                    }
                    return record(batch);
                })
                .build();
        AssertionError onItsThread = assertThrows(
                AssertionError.class, () -> erring.decide("error, sent by its caller", 1, System.nanoTime() + PATIENT));
        assertEquals("the driver's bug", onItsThread.getMessage());

        Future<String> a = callers.submit(() -> erring.decide("a", 1, System.nanoTime() + PATIENT));
        awaitSent(1);
        Future<String> queued = callers.submit(() -> erring.decide("error, queued", 1, System.nanoTime() + PATIENT));
        TestAwait.until("the request queued", () -> erring.queued() >= 1);
        answer(0); // the queued request goes next, on the follow-up thread, and its call ends in the Error
        assertEquals("A", a.get(30, TimeUnit.SECONDS));
        SluiceException failed = assertInstanceOf(
                SluiceException.class,
                assertThrows(ExecutionException.class, () -> queued.get(30, TimeUnit.SECONDS))
                        .getCause());
        assertInstanceOf(AssertionError.class, failed.getCause(), "failed by the Error: " + failed);
        assertTheNextIsSentAndAnswered(erring, 1);
    }

    /**
     * A store's failure function that itself throws (a bug: a null read where it looked for a known error code) while
     * its batch fails: the batch's request is still answered with a failure, at once, that names the store's error and
     * carries the bug as suppressed, and the next request is sent. The queue went on only through that function, so
     * a bug there held every later request until its deadline, each one answered "no answer by the request's
     * deadline", for as long as the store ran.
     */
    @Test
    void aFailureFunctionThatThrowsStillFailsTheBatchAndFreesTheQueue() throws Exception {
        GroupCommit<String, String> buggy = GroupCommit.<String, String>builder("Store", batch -> {
                    if (batch.get(0).payload().equals("failing")) {
                        return CompletableFuture.failedFuture(new IOException("connection refused"));
                    }
                    return record(batch);
                })
                .failure(e -> {
                    throw new NullPointerException("the failure function's bug");
                })
                .build();
        SluiceException failed =
                assertThrows(SluiceException.class, () -> buggy.decide("failing", 1, System.nanoTime() + PATIENT));
        assertInstanceOf(IOException.class, failed.getCause(), "the store's own error: " + failed);
        assertEquals(1, failed.getSuppressed().length, "the bug, kept: " + failed);
        assertTheNextIsSentAndAnswered(buggy, 0);
    }

    /**
     * Submitted requests hold no thread: the test's own thread submits them all. A request that waits past its deadline
     * is answered by its timer and never sent; the others go in the next batch and are answered when it returns.
     */
    @Test
    void submittedRequestsWaitWithoutAThreadAndTheirDeadlineIsKeptByATimer() throws Exception {
        CompletableFuture<String> a = commit.submit("a", 1, System.nanoTime() + PATIENT);
        awaitSent(1);
        CompletableFuture<String> b = commit.submit("b", 1, System.nanoTime() + PATIENT);
        CompletableFuture<String> late = commit.submit("late", 1, System.nanoTime() + SHORT);
        awaitDone(late);
        SluiceException e = assertInstanceOf(
                SluiceException.class,
                assertThrows(ExecutionException.class, late::get).getCause());
        assertInstanceOf(TimeoutException.class, e.getCause(), "ended by its deadline: " + e);
        answer(0);
        assertEquals("A", a.get(30, TimeUnit.SECONDS));
        awaitSent(2);
        answer(1);
        assertEquals("B", b.get(30, TimeUnit.SECONDS));
        assertEquals(List.of(List.of("a"), List.of("b")), sent, "the late request was never sent");
    }

    /** A submitted request's batch that never returns, given up at its deadline, holds nothing back. */
    @Test
    void aSubmittedBatchThatNeverReturnsHoldsNothingBack() throws Exception {
        CompletableFuture<String> stuck = commit.submit("stuck", 1, System.nanoTime() + SHORT);
        awaitSent(1);
        awaitDone(stuck);
        assertThrows(ExecutionException.class, stuck::get);
        CompletableFuture<String> next = commit.submit("next", 1, System.nanoTime() + PATIENT);
        awaitSent(2);
        answer(1);
        assertEquals("NEXT", next.get(30, TimeUnit.SECONDS));
        assertEquals(List.of(List.of("stuck"), List.of("next")), sent);
    }

    /** The batches sent, each one's payloads sorted (requests that queue together arrive in any order). */
    private List<List<String>> sortedBatches() {
        return sent.stream().map(b -> b.stream().sorted().toList()).toList();
    }
}
