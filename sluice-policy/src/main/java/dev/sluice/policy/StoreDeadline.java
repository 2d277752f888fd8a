package dev.sluice.policy;

import dev.sluice.Acquisition;
import dev.sluice.JointDecision;
import dev.sluice.RateLimiter;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The deadline of one check ({@link PolicyLimiter.Builder#deadline}): every stage of the check is decided by it, one
 * deadline for the whole request whatever its descriptors and costs.
 *
 * <p>A stage is decided on the checking thread when its limiters can keep the deadline there
 * ({@link RateLimiter#tryAcquireAllBy}): from memory (a leased slice that covers it), or by a store call the store
 * bounds by the deadline and never applies past it (exact mode on Redis), or after waiting there, until the deadline at
 * most, for another request's call (a leased claim on the same key). Only a stage that needs a call the thread
 * cannot bound (a leased claim, a store without deadlines) is handed to the executor and waited for until the
 * deadline; a task that starts past the deadline does nothing, so a call that waited in the queue too long is never
 * sent. What such a call takes from the store once it has started stays taken, even when its answer comes too late.
 */
final class StoreDeadline {

    private final long atNanos;
    private final ExecutorService executor;
    /** Where the check holds its engine ({@link Engine#stripe}), for the work handed to the executor. */
    private final int stripe;

    StoreDeadline(long atNanos, ExecutorService executor, int stripe) {
        this.atNanos = atNanos;
        this.executor = executor;
        this.stripe = stripe;
    }

    /** Whether the deadline has passed. */
    boolean passed() {
        return System.nanoTime() - atNanos >= 0;
    }

    /**
     * Decides {@code parts} by the deadline; null when no answer came by then (or the executor took no more work),
     * taking nothing but what a call already under way takes. A decision that needs no store call is taken even when
     * the deadline has passed (a thread descheduled past it still decides from memory what it would have decided in
     * time); one the checking thread can bound is the store's to refuse past the deadline.
     *
     * @param engine the engine deciding, held by the caller at this deadline's stripe; a task handed to the executor
     *               holds it too, so that its limiters are not closed under a call that runs on after the answer was
     *               given
     * @throws dev.sluice.SluiceException if the store failed and its failure policy throws
     */
    @Nullable
    JointDecision decide(List<Acquisition> parts, Engine engine) {
        JointDecision here = RateLimiter.tryAcquireAllBy(parts, atNanos);
        if (here != null) {
            return here; // from memory whatever the time, or by a store call that kept the deadline itself
        }
        if (passed()) {
            return null; // past it already, or it waited on this thread for another's call (a leased claim) until then
        }
        CompletableFuture<JointDecision> answer = onExecutor(parts, engine);
        try {
            return answer.get(Math.max(0, atNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException late) {
            answer.complete(null); // not started: does nothing when it runs; started: its answer is dropped
            return null;
        } catch (InterruptedException interrupted) {
            answer.complete(null);
            Thread.currentThread().interrupt();
            return null;
        } catch (ExecutionException failed) {
            if (failed.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(failed.getCause());
        }
    }

    /**
     * {@link #decide} without waiting: the future completes with the decision, or with null when no answer came by
     * the deadline (a timer completes it then), or fails as {@link #decide} throws. A decision that needs no store
     * call, or whose store call the store bounds by the deadline ({@link RateLimiter#tryAcquireAllAsync}), holds no
     * thread; one the store cannot bound runs on the executor, and its answer is dropped if it comes past the deadline.
     *
     * @param engine the engine deciding, held by the caller at this deadline's stripe; a task handed to the executor
     *               holds it too, until it ends
     */
    CompletableFuture<JointDecision> decideAsync(List<Acquisition> parts, Engine engine) {
        CompletionStage<JointDecision> here = RateLimiter.tryAcquireAllAsync(parts, atNanos);
        if (here != null) {
            return here.toCompletableFuture();
        }
        return onExecutor(parts, engine)
                .completeOnTimeout(null, Math.max(0, atNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /**
     * {@code parts} decided on the executor: the future completes with the decision, or with null if the task starts
     * past the deadline (it then does nothing) or the executor takes no more work; completed with null by the caller
     * when it gives up, the task then does nothing or its answer is dropped.
     */
    private CompletableFuture<JointDecision> onExecutor(List<Acquisition> parts, Engine engine) {
        CompletableFuture<JointDecision> answer = new CompletableFuture<>();
        if (passed()) {
            answer.complete(null);
            return answer;
        }
        engine.holdMore(stripe);
        try {
            executor.execute(() -> {
                try {
                    if (!answer.isDone() && !passed()) {
                        answer.complete(RateLimiter.tryAcquireAll(parts));
                    }
                } catch (RuntimeException e) {
                    answer.completeExceptionally(e);
                } finally {
                    engine.release(stripe);
                }
            });
        } catch (RejectedExecutionException full) { // every thread waits on the store, and the queue is full
            engine.release(stripe);
            answer.complete(null);
            return answer;
        }
        return answer;
    }
}
