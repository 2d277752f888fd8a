package dev.sluice.testkit;

import dev.sluice.Decision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * A {@link RateLimitListener} that counts what it hears and then throws from every method: a store must answer
 * exactly as it does with no listener. Thread-safe.
 */
public final class ThrowingListener implements RateLimitListener {

    private final AtomicInteger decisions = new AtomicInteger();
    private final AtomicInteger calls = new AtomicInteger();
    private final List<SluiceException> failures = new CopyOnWriteArrayList<>();
    private final AtomicInteger failuresOfStoreWork = new AtomicInteger();

    /** A listener that has heard nothing yet. */
    public ThrowingListener() {}

    @Override
    public void onDecision(RateLimiter limiter, String key, long cost, Decision decision) {
        decisions.incrementAndGet();
        throw new IllegalStateException("onDecision throws, as a test");
    }

    @Override
    public void onStoreFailure(@Nullable RateLimiter limiter, SluiceException failure) {
        failures.add(failure);
        if (limiter == null) {
            failuresOfStoreWork.incrementAndGet();
        }
        throw new IllegalStateException("onStoreFailure throws, as a test");
    }

    @Override
    public void onStoreCall(@Nullable RateLimiter limiter, long nanos) {
        calls.incrementAndGet();
        throw new IllegalStateException("onStoreCall throws, as a test");
    }

    /** Decisions heard. */
    public int decisions() {
        return decisions.get();
    }

    /** Store calls heard. */
    public int calls() {
        return calls.get();
    }

    /** Store failures heard with no limiter: of the store's own work (a flush, an index, a schema). */
    public int failuresOfStoreWork() {
        return failuresOfStoreWork.get();
    }

    /** Store failures heard, in order. */
    public List<SluiceException> failures() {
        return List.copyOf(failures);
    }

    @Override
    public String toString() {
        return "ThrowingListener[" + decisions() + " decisions, " + failures.size() + " failures, " + calls()
                + " calls]";
    }
}
