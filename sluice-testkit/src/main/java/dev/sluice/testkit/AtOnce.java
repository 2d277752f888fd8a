package dev.sluice.testkit;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** Requests made at once, as a burst reaches a service: each on a thread of its own, all released together. */
public final class AtOnce {

    private AtOnce() {}

    /**
     * The decisions of {@code n} requests for {@code key} on {@code limiter}, made by {@code n} threads released
     * together once all are ready; in the order of the threads.
     *
     * @throws InterruptedException if interrupted while waiting for them
     * @throws ExecutionException   if a request threw
     */
    public static List<Decision> tryAcquire(RateLimiter limiter, String key, int n)
            throws InterruptedException, ExecutionException {
        ExecutorService threads = Executors.newFixedThreadPool(n);
        try {
            CountDownLatch ready = new CountDownLatch(n);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Decision>> calls = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                calls.add(threads.submit(() -> {
                    ready.countDown();
                    go.await();
                    return limiter.tryAcquire(key);
                }));
            }
            ready.await();
            go.countDown();
            List<Decision> decisions = new ArrayList<>();
            for (Future<Decision> call : calls) {
                decisions.add(call.get());
            }
            return decisions;
        } finally {
            threads.shutdown();
        }
    }
}
