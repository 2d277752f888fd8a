package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.FailurePolicy;
import dev.sluice.RateLimitListener;
import dev.sluice.SluiceException;
import dev.sluice.TimeSource;
import dev.sluice.spi.AtomicDecider;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.SharedRateLimiter;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.spi.StoreDecision;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The domain's {@code on_store_failure} answers a store that fails, inside the check: whatever the store's own
 * {@link FailurePolicy}, {@link Verdict#allowed()} is the domain's answer, with no counts invented.
 */
class StoreFailureAnswerTest {

    static final String LIMITS =
            """
            descriptors:
              - key: k
                rate_limit: {unit: minute, requests_per_unit: 5}
              - key: trial
                mode: dry_run
                rate_limit: {unit: minute, requests_per_unit: 5}
            """;

    /** A shared store whose every call fails, as one whose server is gone, answering by {@code policy}. */
    static RateLimitStore down(FailurePolicy policy) {
        AtomicDecider failing = new AtomicDecider() {
            @Override
            public StoreDecision decide(String key, long cost, boolean consume, long nowNanos) {
                throw new UncheckedIOException(new ConnectException("connection refused"));
            }

            @Override
            public boolean giveBack(String key, long cost, long place, long nowNanos) {
                throw new UncheckedIOException(new ConnectException("connection refused"));
            }
        };
        return store(failing, policy);
    }

    /**
     * A store whose own timeout ends each call, before the check's deadline: a timeout, as a slow store's driver
     * reports it, counted as one (not as a failure) whether or not the check has a deadline of its own.
     */
    @ParameterizedTest
    @ValueSource(strings = {"allow", "deny"})
    void aStoresOwnTimeoutIsATimeout(String answer) {
        AtomicDecider slow = new AtomicDecider() {
            @Override
            public StoreDecision decide(String key, long cost, boolean consume, long nowNanos) {
                throw new SluiceException("no answer within the store's timeout", new TimeoutException("15 ms"));
            }

            @Override
            public boolean giveBack(String key, long cost, long place, long nowNanos) {
                return false;
            }
        };
        ExecutorService executor = Executors.newFixedThreadPool(2);
        try (PolicyLimiter plain = PolicyLimiter.builder(policies(answer))
                        .store(store(slow, FailurePolicy.FAIL_OPEN))
                        .build();
                PolicyLimiter withDeadline = PolicyLimiter.builder(policies(answer))
                        .store(store(slow, FailurePolicy.FAIL_CLOSED))
                        .deadline(Duration.ofSeconds(30), executor)
                        .build();
                PolicyLimiter broken = PolicyLimiter.builder(policies(answer))
                        .store(down(FailurePolicy.FAIL_OPEN))
                        .build()) {
            for (PolicyLimiter l : List.of(plain, withDeadline)) {
                Verdict v = l.check("d", List.of(Descriptor.of("k", "a")), 1);
                assertTrue(v.storeFailed(), v.toString());
                assertTrue(v.storeTimedOut(), v.toString());
                assertEquals(answer.equals("allow"), v.allowed(), v.toString());
            }
            Verdict refused = broken.check("d", List.of(Descriptor.of("k", "a")), 1);
            assertTrue(refused.storeFailed());
            assertFalse(refused.storeTimedOut(), "a refused connection is a failure, not a timeout");
        } finally {
            executor.shutdown();
        }
    }

    static RateLimitStore store(AtomicDecider decider, FailurePolicy policy) {
        SharedStoreOptions options = new SharedStoreOptions(
                TimeSource.CLOCK,
                policy,
                Duration.ofSeconds(30),
                Duration.ofSeconds(1),
                "test",
                RateLimitListener.NONE);
        return config -> SharedRateLimiter.create(config, decider, options);
    }

    static Policies policies(String answer) {
        return Policies.parse("d.yaml", "domain: d\non_store_failure: " + answer + "\n" + LIMITS);
    }

    @ParameterizedTest
    @EnumSource(FailurePolicy.class)
    void allowAnswersWhateverTheStoresPolicy(FailurePolicy storePolicy) {
        try (PolicyLimiter l = PolicyLimiter.builder(policies("allow"))
                .store(down(storePolicy))
                .build()) {
            Verdict v = l.check("d", List.of(Descriptor.of("k", "a"), Descriptor.of("k", "b")), 1);
            assertTrue(v.allowed(), v.toString());
            assertEquals(OnStoreFailure.ALLOW, v.storeFailure().orElseThrow());
            assertTrue(v.storeFailed());
            assertFalse(v.storeTimedOut());
            for (DescriptorVerdict d : v.descriptors()) {
                LimitVerdict lv = d.limits().get(0);
                assertEquals(Outcome.ALLOWED, lv.outcome());
                assertTrue(lv.failed());
                assertEquals(-1, lv.remaining(), "no count invented: the store gave none");
                assertEquals(0, lv.resetAfterNanos());
                assertEquals(0, lv.retryAfterNanos());
            }
            assertEquals(Long.MAX_VALUE, v.remaining(), "no limit's count is known");
        }
    }

    @ParameterizedTest
    @EnumSource(FailurePolicy.class)
    void denyAnswersWhateverTheStoresPolicy(FailurePolicy storePolicy) {
        try (PolicyLimiter l =
                PolicyLimiter.builder(policies("deny")).store(down(storePolicy)).build()) {
            Verdict v = l.check("d", List.of(Descriptor.of("k", "a")), 1);
            assertFalse(v.allowed(), v.toString());
            assertEquals(OnStoreFailure.DENY, v.storeFailure().orElseThrow());
            LimitVerdict lv = v.descriptor(0).limits().get(0);
            assertEquals(Outcome.DENIED, lv.outcome());
            assertTrue(lv.failed());
            assertEquals(-1, lv.remaining());
            assertEquals(Duration.ZERO, v.retryAfter(), "no wait invented either");
        }
    }

    /** A dry-run limit never refuses the caller, even answered by {@code deny}: it counts a "would deny". */
    @ParameterizedTest
    @ValueSource(strings = {"allow", "deny"})
    void aDryRunLimitAnsweredByTheDomainStillNeverRefuses(String answer) {
        try (PolicyLimiter l = PolicyLimiter.builder(policies(answer))
                .store(down(FailurePolicy.FAIL_OPEN))
                .build()) {
            Verdict v = l.check("d", List.of(Descriptor.of("trial", "t")), 1);
            assertTrue(v.allowed());
            assertEquals(
                    answer.equals("deny") ? Outcome.WOULD_DENY : Outcome.ALLOWED,
                    v.descriptor(0).outcome());
            assertTrue(v.storeFailed());
        }
    }

    /**
     * The configuration that decided answers: a check held by a store that does not answer, cut short by the
     * limiter's deadline, is answered by its own configuration's {@code on_store_failure} even when a reload put the
     * other answer in force meanwhile.
     */
    @ParameterizedTest
    @ValueSource(strings = {"allow", "deny"})
    void aCheckPastItsDeadlineIsAnsweredByTheConfigurationItWasCheckedUnder(String answer) throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicDecider hanging = new AtomicDecider() {
            @Override
            public StoreDecision decide(String key, long cost, boolean consume, long nowNanos) {
                entered.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new UncheckedIOException(new ConnectException("gone"));
            }

            @Override
            public boolean giveBack(String key, long cost, long place, long nowNanos) {
                return false;
            }
        };
        ExecutorService executor = Executors.newFixedThreadPool(2);
        ExecutorService caller = Executors.newSingleThreadExecutor();
        try (PolicyLimiter l = PolicyLimiter.builder(policies(answer))
                .store(store(hanging, FailurePolicy.FAIL_OPEN))
                .deadline(Duration.ofMillis(300), executor)
                .build()) {
            var pending = caller.submit(() -> l.check("d", List.of(Descriptor.of("k", "a")), 1));
            assertTrue(entered.await(30, TimeUnit.SECONDS), "the check reaches the store");
            l.update(policies(answer.equals("allow") ? "deny" : "allow"));
            Verdict v = pending.get(30, TimeUnit.SECONDS);
            assertTrue(v.storeTimedOut());
            assertEquals(answer.equals("allow"), v.allowed(), v.toString());
            assertEquals(
                    OnStoreFailure.valueOf(answer.toUpperCase(java.util.Locale.ROOT)),
                    v.storeFailure().orElseThrow());
            assertTrue(v.descriptor(0).limits().get(0).failed());
        } finally {
            release.countDown();
            caller.shutdown();
            executor.shutdown();
            assertTrue(executor.awaitTermination(30, TimeUnit.SECONDS));
        }
    }

    /**
     * An executor that refuses the check's store call (every thread waits on the store, the queue is full) is a
     * timeout too. The store is one whose calls the checking thread cannot bound (no batches with deadlines), so its
     * calls go to the executor.
     */
    @ParameterizedTest
    @ValueSource(strings = {"allow", "deny"})
    void aCheckTheExecutorRefusesIsAnsweredByTheDomain(String answer) {
        ExecutorService gone = Executors.newSingleThreadExecutor();
        gone.shutdown();
        try (PolicyLimiter l = PolicyLimiter.builder(policies(answer))
                .store(store(ALWAYS_ALLOWS, FailurePolicy.FAIL_OPEN))
                .deadline(Duration.ofMillis(20), gone)
                .build()) {
            Verdict v = l.check("d", List.of(Descriptor.of("k", "a")), 1);
            assertTrue(v.storeTimedOut());
            assertEquals(answer.equals("allow"), v.allowed());
            Verdict none = l.check("d", List.of(Descriptor.of("other", "x")), 1);
            assertTrue(none.allowed(), "no limit asked: nothing to answer for");
            assertFalse(none.storeFailed());
        }
    }

    /**
     * A check that needs no store call is decided on the caller's thread: in memory, even an executor that takes no
     * work and a deadline passed before the check reaches its limiter (a nanosecond: a thread descheduled for longer
     * than the deadline) leave it decided by the store, not by {@code on_store_failure}, exactly as without a deadline.
     */
    @ParameterizedTest
    @ValueSource(strings = {"allow", "deny"})
    void aCheckInMemoryIsDecidedOnTheCallersThread(String answer) {
        ExecutorService gone = Executors.newSingleThreadExecutor();
        gone.shutdown();
        try (PolicyLimiter l = PolicyLimiter.builder(policies(answer))
                .deadline(Duration.ofNanos(1), gone)
                .build()) {
            for (int i = 0; i < 5; i++) {
                Verdict v = l.check("d", List.of(Descriptor.of("k", "a")), 1);
                assertTrue(v.allowed(), "request " + i + ": " + v);
                assertFalse(v.storeFailed(), "request " + i + ": " + v);
                assertEquals(4 - i, v.descriptor(0).limits().get(0).remaining());
            }
            Verdict sixth = l.check("d", List.of(Descriptor.of("k", "a")), 1);
            assertFalse(sixth.allowed(), "the sixth of 5 a minute: " + sixth);
            assertFalse(sixth.storeFailed());
        }
    }

    /** A shared store's decider that admits everything, with a full limit left. */
    private static final AtomicDecider ALWAYS_ALLOWS = new AtomicDecider() {
        @Override
        public StoreDecision decide(String key, long cost, boolean consume, long nowNanos) {
            return new StoreDecision(true, 5, 0, 0, 0);
        }

        @Override
        public boolean giveBack(String key, long cost, long place, long nowNanos) {
            return false;
        }
    };
}
