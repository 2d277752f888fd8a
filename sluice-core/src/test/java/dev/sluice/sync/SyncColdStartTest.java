package dev.sluice.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.SluiceException;
import dev.sluice.TestAwait;
import dev.sluice.TestClock;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Taking up a key: an instance that does not hold a key yet reads its record before the key's first decision, so an
 * instance that joins a key the others have counted on decides on their counts, not on zero. Instance A counts
 * {@code L - 2} and flushes; instance B, a second synchronized store on the same counter store, then admits exactly
 * the 2 left, alone, in a joint request, and from 64 threads at once (which share one read). A read that fails is
 * reported, and the decision is made on what is known. Time is moved by hand; no sleeps.
 */
class SyncColdStartTest {

    private static final int L = 10;

    private final TestClock clock = new TestClock("2026-01-01T12:00:10Z");
    private final InMemoryCounterStore shared = InMemoryCounterStore.create();

    private static SynchronizedStore instance(CounterStore store) {
        return SynchronizedStore.builder(store).manualRounds().build();
    }

    private static SynchronizedStore instance(CounterStore store, RateLimitListener listener) {
        return SynchronizedStore.builder(store)
                .manualRounds()
                .listener(listener)
                .build();
    }

    private RateLimiter limiter(SynchronizedStore store, Algorithm algorithm, long limit, Duration window) {
        return limiter(store, algorithm, limit, window, b -> b);
    }

    private RateLimiter limiter(
            SynchronizedStore store,
            Algorithm algorithm,
            long limit,
            Duration window,
            UnaryOperator<RateLimiterBuilder> options) {
        RateLimiterBuilder b =
                RateLimiter.builder(algorithm).limit(limit, window).clock(clock);
        if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
            b = b.buckets(6);
        }
        return options.apply(b).store(store).build();
    }

    private static int admitted(RateLimiter limiter, String key, int requests) {
        int n = 0;
        for (int j = 0; j < requests; j++) {
            if (limiter.tryAcquire(key).allowed()) {
                n++;
            }
        }
        return n;
    }

    private CounterSnapshot record(RateLimiter limiter, String key) {
        return shared.read(new CounterKey(((SynchronizedLimiter) limiter).shape(), key));
    }

    // ---- joining a key with 2 left ---------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_TAIL", "SLIDING_WINDOW_COUNTER"})
    void anInstanceJoiningAKeyWithTwoLeftAdmitsExactlyTwo(Algorithm algorithm) {
        SynchronizedStore a = instance(shared);
        RateLimiter atA = limiter(a, algorithm, L, Duration.ofMinutes(1));
        assertEquals(L - 2, admitted(atA, "k", L - 2));
        assertTrue(a.flush());

        LoadCounting toB = new LoadCounting(shared);
        SynchronizedStore b = instance(toB);
        RateLimiter atB = limiter(b, algorithm, L, Duration.ofMinutes(1));
        assertEquals(2, atB.peek("k", 1).remaining(), "a peek takes the key up too, and sees A's counts");
        Decision first = atB.tryAcquire("k");
        assertTrue(first.allowed());
        assertEquals(1, first.remaining());
        assertEquals(1, admitted(atB, "k", L));
        assertEquals(Map.of("k", 1), toB.loads(), "one read of the record, at the first decision");
        assertEquals(0, b.stats().storeFailures());

        assertTrue(b.flush());
        assertEquals(0, b.stats().conflicts(), "B wrote at the version it read when it took the key up");
        assertEquals(L, record(atA, "k").total());
        assertTrue(a.refresh());
        assertFalse(atA.tryAcquire("k").allowed());
    }

    @Test
    void aJointRequestOverKeysNotHeldReadsEveryOneFirst() {
        SynchronizedStore a = instance(shared);
        RateLimiter minuteA = limiter(a, Algorithm.FIXED_WINDOW, L, Duration.ofMinutes(1));
        RateLimiter hourA = limiter(a, Algorithm.SLIDING_WINDOW_COUNTER, 100, Duration.ofHours(1));
        for (int j = 0; j < L - 2; j++) { // on "k" the minute binds: 2 left
            assertTrue(RateLimiter.tryAcquireAll(Acquisition.of(minuteA, "k"), Acquisition.of(hourA, "k"))
                    .allowed());
        }
        assertTrue(hourA.tryAcquire("k2", 99).allowed()); // on "k2" the hour binds: 1 left
        assertTrue(a.flush());

        LoadCounting toB = new LoadCounting(shared);
        SynchronizedStore b = instance(toB);
        RateLimiter minuteB = limiter(b, Algorithm.FIXED_WINDOW, L, Duration.ofMinutes(1));
        RateLimiter hourB = limiter(b, Algorithm.SLIDING_WINDOW_COUNTER, 100, Duration.ofHours(1));
        assertEquals(2, jointAdmitted(minuteB, hourB, "k", L));
        assertEquals(1, jointAdmitted(minuteB, hourB, "k2", L));
        assertEquals(Map.of("k", 2, "k2", 2), toB.loads(), "each limiter's key read once, before the first decision");
        assertEquals(0, minuteB.peek("k", 1).remaining());
        assertEquals(100 - (L - 2) - 2, hourB.peek("k", 1).remaining());
        assertEquals(L - 1, minuteB.peek("k2", 1).remaining(), "k2: the refused requests counted in neither limit");
        assertEquals(0, hourB.peek("k2", 1).remaining());
    }

    private static int jointAdmitted(RateLimiter first, RateLimiter second, String key, int requests) {
        int n = 0;
        for (int j = 0; j < requests; j++) {
            if (RateLimiter.tryAcquireAll(Acquisition.of(first, key), Acquisition.of(second, key))
                    .allowed()) {
                n++;
            }
        }
        return n;
    }

    // ---- concurrent first decisions share one read ------------------------------------------------------------------

    /**
     * A has counted 70 of 100; 64 threads of B decide on the key at once, before B holds it. The read of the record is
     * held back until the 63 threads that did not start it all wait for it: one read in all, and exactly the 30 left
     * are admitted. While that read hangs, a decision on another key, a flush and a refresh of B all go through.
     */
    @Test
    void concurrentFirstDecisionsOnOneKeyShareOneReadAndAdmitExactlyWhatIsLeft() throws Exception {
        SynchronizedStore a = instance(shared);
        RateLimiter atA = limiter(a, Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1));
        assertEquals(70, admitted(atA, "hot", 70));
        assertTrue(a.flush());

        Gated toB = new Gated(shared, "hot");
        SynchronizedStore b = instance(toB);
        RateLimiter atB = limiter(b, Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1));
        int threads = 64;
        AtomicInteger allowed = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> {
                awaitQuietly(start);
                if (atB.tryAcquire("hot").allowed()) {
                    allowed.incrementAndGet();
                }
            });
            w.start();
            workers.add(w);
        }
        start.countDown();
        TestAwait.until("one thread reading the record", () -> toB.reader.get() != null);
        Thread reader = toB.reader.get();
        TestAwait.until(
                "the other 63 threads waiting for that read",
                () -> workers.stream().filter(w -> w != reader).allMatch(SyncColdStartTest::waitsForTheRead));

        assertTrue(atB.tryAcquire("elsewhere").allowed(), "another key does not wait");
        assertTrue(b.flush(), "a flush does not wait");
        assertTrue(b.refresh(), "a refresh does not wait (and leaves the key being read alone)");
        assertEquals(1, record(atB, "elsewhere").total());

        toB.release.countDown();
        for (Thread w : workers) {
            w.join();
        }
        assertEquals(30, allowed.get());
        assertEquals(Map.of("hot", 1, "elsewhere", 1 + 1), toB.loads(), "one take-up read per key, and the refresh");
        assertTrue(b.flush());
        assertEquals(100, record(atB, "hot").total());
        assertEquals(0, b.stats().conflicts());
    }

    private static boolean waitsForTheRead(Thread t) {
        return t.getState() == Thread.State.WAITING
                && Arrays.stream(t.getStackTrace())
                        .anyMatch(f -> f.getMethodName().equals("awaitLoaded"));
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- a read that fails ------------------------------------------------------------------------------------------

    @Test
    void aFailedReadIsReportedAndTheDecisionMadeOnWhatIsKnown() {
        SynchronizedStore a = instance(shared);
        RateLimiter atA = limiter(a, Algorithm.SLIDING_TAIL, L, Duration.ofMinutes(1));
        assertEquals(L - 2, admitted(atA, "k", L - 2));
        assertTrue(a.flush());

        Failing toB = new Failing(shared);
        Heard heardByStore = new Heard();
        Heard heardByLimiter = new Heard();
        SynchronizedStore b = instance(toB, heardByStore);
        RateLimiter atB = limiter(b, Algorithm.SLIDING_TAIL, L, Duration.ofMinutes(1), o -> o.listener(heardByLimiter));
        toB.down = true;
        Decision d = atB.tryAcquire("k");
        assertTrue(d.allowed(), "answered, on what B knows: nothing yet");
        assertFalse(d.failed(), "not a failure policy's answer: synchronized mode decides in memory");
        assertEquals(L - 1, d.remaining());
        for (Heard heard : List.of(heardByStore, heardByLimiter)) {
            assertEquals(1, heard.failures.size(), heard.failures.toString());
            assertSame(atB, heard.failures.get(0).limiter(), "a read on behalf of the limiter's request");
            assertTrue(
                    heard.failures.get(0).failure().getMessage().contains("the store is down"),
                    heard.failures.get(0).failure().getMessage());
            assertEquals(List.of(atB), heard.calls);
        }
        assertEquals(1, b.stats().storeFailures());
        assertEquals(1, b.stats().storeCalls());
        assertEquals(L - 1, admitted(atB, "k", L), "no second read: the key is held now, on zero");
        assertEquals(1, b.stats().storeCalls());
        assertEquals(
                L - 1,
                atB.tryAcquire("other").remaining(),
                "while the last call failed, a new key is not read: no request waits for a store that is down");
        assertEquals(1, b.stats().storeCalls());

        toB.down = false;
        assertTrue(b.refresh()); // the next refresh reads the record: A's 8 under B's 10
        assertEquals(0, atB.peek("k", 1).remaining());
        long calls = b.stats().storeCalls();
        atB.tryAcquire("third");
        assertEquals(calls + 1, b.stats().storeCalls(), "once a call succeeded, a new key is read again");
        assertTrue(b.flush());
        assertEquals(L - 2 + L, record(atB, "k").total(), "nothing lost, and the overshoot on record");
    }

    // ---- a closed store reads no new key ---------------------------------------------------------------------------

    @Test
    void aClosedStoreTakesUpNewKeysWithoutReadingThem() {
        SynchronizedStore a = instance(shared);
        RateLimiter atA = limiter(a, Algorithm.FIXED_WINDOW, L, Duration.ofMinutes(1));
        assertEquals(L - 2, admitted(atA, "k", L - 2));
        assertTrue(a.flush());

        LoadCounting toB = new LoadCounting(shared);
        SynchronizedStore b = instance(toB);
        RateLimiter atB = limiter(b, Algorithm.FIXED_WINDOW, L, Duration.ofMinutes(1));
        b.close();
        assertEquals(L - 1, atB.tryAcquire("k").remaining(), "decided on what is known: nothing");
        assertEquals(Map.of(), toB.loads());
    }

    // ---- counter stores for these tests ----------------------------------------------------------------------------

    /** Counts the reads of each key. */
    private static class LoadCounting implements CounterStore {
        private final CounterStore delegate;
        private final Map<String, Integer> loads = new ConcurrentHashMap<>();

        LoadCounting(CounterStore delegate) {
            this.delegate = delegate;
        }

        Map<String, Integer> loads() {
            return Map.copyOf(loads);
        }

        @Override
        public List<CounterSnapshot> load(List<CounterKey> keys) {
            for (CounterKey k : keys) {
                loads.merge(k.key(), 1, Integer::sum);
            }
            return delegate.load(keys);
        }

        @Override
        public boolean[] compareAndSet(List<CounterWrite> writes) {
            return delegate.compareAndSet(writes);
        }
    }

    /** Holds back every read of one key until {@link #release}, and remembers the thread that made it. */
    private static final class Gated extends LoadCounting {
        private final String gatedKey;
        final AtomicReference<@Nullable Thread> reader = new AtomicReference<>();
        final CountDownLatch release = new CountDownLatch(1);

        Gated(CounterStore delegate, String gatedKey) {
            super(delegate);
            this.gatedKey = gatedKey;
        }

        @Override
        public List<CounterSnapshot> load(List<CounterKey> keys) {
            if (keys.stream().anyMatch(k -> k.key().equals(gatedKey))) {
                reader.set(Thread.currentThread());
                awaitQuietly(release);
            }
            return super.load(keys);
        }
    }

    /** Fails every read while {@link #down}. */
    private static final class Failing extends LoadCounting {
        volatile boolean down;

        Failing(CounterStore delegate) {
            super(delegate);
        }

        @Override
        public List<CounterSnapshot> load(List<CounterKey> keys) {
            if (down) {
                throw new SluiceException("the store is down");
            }
            return super.load(keys);
        }
    }

    /** What a listener heard: failures and calls, with their limiter. */
    private static final class Heard implements RateLimitListener {
        record Failure(@Nullable RateLimiter limiter, SluiceException failure) {}

        final List<Failure> failures = new CopyOnWriteArrayList<>();
        final List<@Nullable RateLimiter> calls = new CopyOnWriteArrayList<>();

        @Override
        public void onStoreFailure(@Nullable RateLimiter limiter, SluiceException failure) {
            failures.add(new Failure(limiter, failure));
        }

        @Override
        public void onStoreCall(@Nullable RateLimiter limiter, long nanos) {
            calls.add(limiter);
        }
    }
}
