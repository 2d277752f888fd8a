package dev.sluice.internal;

import dev.sluice.SluiceException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The daemon thread that runs the background rounds of synchronized and leased mode: each task an interval after its
 * last run started, so that a round's own duration does not make the next one late (leased mode claims ahead the
 * frames that start before the next round is due), but at least half an interval after its last run ended, so that
 * rounds longer than half an interval are each followed by half an interval with the thread idle rather than run back
 * to back. A task that throws (an exception, or an {@link Error}, handed over as a {@link SluiceException} caused by
 * it) is handed to the failure handler and runs again at its next turn, as it does when the handler throws.
 *
 * <p>Thread-safe.
 */
public final class BackgroundRounds {

    private final ScheduledExecutorService scheduler;
    private final Consumer<? super RuntimeException> onFailure;

    /** Starts a daemon thread named {@code threadName}, with nothing to run yet. */
    public BackgroundRounds(String threadName, Consumer<? super RuntimeException> onFailure) {
        Objects.requireNonNull(threadName, "threadName must not be null");
        this.onFailure = Objects.requireNonNull(onFailure, "onFailure must not be null");
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /** Runs {@code task} every {@code interval} (see the class comment), the first time one interval from now. */
    public void every(Duration interval, Runnable task) {
        long nanos = interval.toNanos();
        runIn(nanos, task, nanos);
    }

    /** Runs {@code task} once {@code delay} has passed, then again at its next turn. */
    private void runIn(long delay, Runnable task, long interval) {
        try {
            // The future is never read: run() hands every failure to the handler, and the next turn is scheduled
            // whatever happens, so no round ends in an exception to miss and none stops the rounds.
            var unused = scheduler.schedule(
                    () -> {
                        long started = System.nanoTime();
                        try {
                            run(task);
                        } finally {
                            long took = System.nanoTime() - started;
                            runIn(Math.max(interval - took, interval / 2), task, interval);
                        }
                    },
                    delay,
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // stopped: the thread runs no more rounds
        }
    }

    /**
     * Stops the thread, interrupting a task under way, and waits up to {@code wait} for it to end. An interrupt of the
     * waiting thread ends the wait and stays set.
     */
    public void stop(Duration wait) {
        scheduler.shutdownNow();
        try {
            scheduler.awaitTermination(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException e) {
            onFailure.accept(e);
        } catch (Error e) { // a bug's or the VM's: handed over as a failure; the round runs again at its next turn
            onFailure.accept(new SluiceException("a background round ended in " + e, e));
        }
    }
}
