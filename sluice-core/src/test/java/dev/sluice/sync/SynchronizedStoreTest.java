package dev.sluice.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.Reservation;
import dev.sluice.SluiceException;
import dev.sluice.TestClock;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

class SynchronizedStoreTest {

    private static final long S = 1_000_000_000L;

    private final TestClock clock = new TestClock("2026-01-01T12:00:00Z");
    private final InMemoryCounterStore shared = InMemoryCounterStore.create();

    private SynchronizedStore instance(CounterStore store) {
        return SynchronizedStore.builder(store).manualRounds().build();
    }

    private SynchronizedStore instance() {
        return instance(shared);
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
        return options.apply(RateLimiter.builder(algorithm).limit(limit, window).clock(clock))
                .store(store)
                .build();
    }

    private static SynchronizedLimiter.Held held(RateLimiter limiter, String key) {
        return ((SynchronizedLimiter) limiter).inspect(key);
    }

    private CounterSnapshot record(RateLimiter limiter, String key) {
        return shared.read(new CounterKey(((SynchronizedLimiter) limiter).shape(), key));
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

    // ---- the conflict path, frame by frame -----------------------------------------------------------------------

    @Test
    void aConflictReReadsAndMergesFrameByFrame() {
        SynchronizedStore a = instance();
        SynchronizedStore b = instance();
        // 4 sub-windows of 15 s: frames start at :00, :15, :30, :45
        RateLimiter atA = limiter(a, Algorithm.SLIDING_WINDOW_COUNTER, 100, Duration.ofMinutes(1), o -> o.buckets(4));
        RateLimiter atB = limiter(b, Algorithm.SLIDING_WINDOW_COUNTER, 100, Duration.ofMinutes(1), o -> o.buckets(4));
        long noon = clock.nanos();
        clock.at("12:00:05");
        assertEquals(2, admitted(atA, "k", 2));
        assertEquals(1, admitted(atB, "k", 1));
        clock.at("12:00:20");
        assertEquals(3, admitted(atB, "k", 3));
        clock.at("12:00:31");
        assertEquals(5, admitted(atA, "k", 5));

        assertTrue(b.flush());
        assertEquals(Map.of(noon, 1L, noon + 15 * S, 3L), record(atB, "k").counters());
        assertTrue(a.flush()); // conflict on the record B created: re-read, merge, write
        assertEquals(
                Map.of(noon, 3L, noon + 15 * S, 3L, noon + 30 * S, 5L),
                record(atA, "k").counters());
        assertEquals(1, a.stats().conflicts());
        assertEquals(1, a.stats().writes());
        assertEquals(1 + 3, a.stats().storeCalls()); // the first decision's load; cas, load, cas
        // A now holds the merged record in g; its decisions see B's counts too
        assertEquals(
                Map.of(noon, 3L, noon + 15 * S, 3L, noon + 30 * S, 5L),
                held(atA, "k").global());
        assertEquals(Map.of(), held(atA, "k").local());
        assertEquals(100 - 11, atA.peek("k", 1).remaining());
        // B sees A's counts only once it refreshes
        assertEquals(100 - 4, atB.peek("k", 1).remaining());
        assertTrue(b.refresh());
        assertEquals(100 - 11, atB.peek("k", 1).remaining());
    }

    @Test
    void aConflictOnEveryRoundGivesUpAfterAFewRoundsAndKeepsTheCounts() {
        SynchronizedStore b = instance();
        RateLimiter atB = limiter(b, Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
        ScriptedCounterStore scripted = new ScriptedCounterStore(shared);
        SynchronizedStore a = instance(scripted);
        RateLimiter atA = limiter(a, Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
        atA.tryAcquire("k");
        // B writes right after every read of A's: A never wins
        scripted.afterCall(c -> {
            if (c.op().equals("load")) {
                atB.tryAcquire("k");
                b.flush();
            }
        });
        atB.tryAcquire("k");
        b.flush();
        assertFalse(a.flush());
        assertEquals(SynchronizedStore.CONFLICT_ROUNDS, a.stats().conflicts());
        assertEquals(1, held(atA, "k").i());
        scripted.afterCall(c -> {});
        assertTrue(a.flush());
        // B's first count, one more after each of A's re-reads but the last, and A's
        assertEquals(
                1 + (SynchronizedStore.CONFLICT_ROUNDS - 1) + 1,
                record(atA, "k").total());
    }

    // ---- round trips -----------------------------------------------------------------------------------------------

    @Test
    void aFlushCostsOneCallPerBatchOfDirtyKeysWhateverTheRequestRate() {
        for (int perKey : new int[] {1, 10, 100}) {
            ScriptedCounterStore scripted = new ScriptedCounterStore(InMemoryCounterStore.create());
            SynchronizedStore s = SynchronizedStore.builder(scripted)
                    .manualRounds()
                    .batchSize(7)
                    .build();
            RateLimiter limiter = limiter(s, Algorithm.SLIDING_TAIL, 1_000, Duration.ofMinutes(1));
            for (int k = 0; k < 50; k++) {
                for (int r = 0; r < perKey; r++) {
                    assertTrue(limiter.tryAcquire("key" + k).allowed());
                }
            }
            assertEquals(50, scripted.calls().size(), "one load as each key was taken up: " + scripted.calls());
            scripted.clearCalls();
            assertTrue(s.flush());
            assertEquals(8, scripted.calls().size(), perKey + " per key: " + scripted.calls()); // ceil(50 / 7)
            assertEquals(7, scripted.calls().get(0).size());
            assertEquals(1, scripted.calls().get(7).size());
            assertEquals(50, s.stats().writes());
            scripted.clearCalls();
            assertTrue(s.flush()); // nothing pending: no call at all
            assertEquals(List.of(), scripted.calls());
            assertTrue(s.refresh());
            assertEquals(8, scripted.calls().size(), scripted.calls().toString());
        }
    }

    @Test
    void everyCallConcernsOneLimiterSoOneSpaceAndNoKeyTwice() {
        List<List<CounterKey>> calls = new ArrayList<>();
        CounterStore spy = new CounterStore() {
            @Override
            public List<CounterSnapshot> load(List<CounterKey> keys) {
                calls.add(keys);
                return shared.load(keys);
            }

            @Override
            public boolean[] compareAndSet(List<CounterWrite> writes) {
                calls.add(writes.stream().map(CounterWrite::key).toList());
                return shared.compareAndSet(writes);
            }
        };
        SynchronizedStore s =
                SynchronizedStore.builder(spy).manualRounds().batchSize(4).build();
        RateLimiter first = limiter(s, Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
        RateLimiter same = limiter(s, Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1)); // the same shape
        RateLimiter other = limiter(s, Algorithm.SLIDING_TAIL, 100, Duration.ofMinutes(1));
        for (int k = 0; k < 6; k++) {
            first.tryAcquire("k" + k);
            same.tryAcquire("k" + k);
            other.tryAcquire("k" + k);
        }
        assertEquals(3 * 6, calls.size(), "each limiter read each key as it took it up: " + calls);
        calls.clear();
        assertTrue(s.flush());
        // 2 writes per limiter (4 + 2 keys); the second limiter's met the first's records: 2 reads, 2 writes again
        assertEquals(10, calls.size(), calls.toString());
        for (List<CounterKey> call : calls) {
            assertEquals(1, call.stream().map(CounterKey::shape).distinct().count(), call.toString());
            assertEquals(call.size(), call.stream().distinct().count(), call.toString());
        }
        assertEquals(2, record(first, "k0").total()); // two limiters of one shape share the record
        assertEquals(1, record(other, "k0").total());
        assertEquals(6, s.stats().conflicts());
    }

    // ---- outage ----------------------------------------------------------------------------------------------------

    @Test
    void duringAnOutageDecisionsGoOnAndEveryCountArrivesAfterwards() {
        ScriptedCounterStore toA = new ScriptedCounterStore(shared);
        ScriptedCounterStore toB = new ScriptedCounterStore(shared);
        List<SluiceException> failures = new ArrayList<>();
        SynchronizedStore a = SynchronizedStore.builder(toA)
                .manualRounds()
                .failureListener(failures::add)
                .build();
        SynchronizedStore b = instance(toB);
        RateLimiter atA = limiter(a, Algorithm.SLIDING_TAIL, 20, Duration.ofMinutes(1));
        RateLimiter atB = limiter(b, Algorithm.SLIDING_TAIL, 20, Duration.ofMinutes(1));
        assertEquals(3, admitted(atA, "k", 3));
        assertTrue(a.flush());
        assertTrue(b.refresh()); // B holds nothing yet: reads nothing
        assertEquals(2, admitted(atB, "k", 2));
        assertTrue(b.flush()); // B took the key up with A's 3: writes 5 at A's version, no conflict
        assertEquals(0, b.stats().conflicts());

        toA.mode(ScriptedCounterStore.Mode.DOWN);
        toB.mode(ScriptedCounterStore.Mode.DOWN);
        // each instance goes on within the limit on what it has seen: A saw 3, so it admits 17 more
        assertEquals(17, admitted(atA, "k", 30));
        assertFalse(a.flush());
        assertFalse(a.refresh());
        assertEquals(10, admitted(atB, "k", 10));
        assertFalse(b.flush());
        assertFalse(b.flush());
        assertEquals(2, failures.size()); // a flush and a refresh of A
        assertTrue(
                failures.get(0).getMessage().contains("scripted outage"),
                failures.get(0).getMessage());
        assertEquals(5, record(atA, "k").total());
        assertEquals(17, held(atA, "k").i());
        assertTrue(held(atA, "k").doubt());

        toA.mode(ScriptedCounterStore.Mode.UP);
        toB.mode(ScriptedCounterStore.Mode.UP);
        assertTrue(a.flush());
        assertTrue(b.flush());
        assertEquals(3 + 2 + 17 + 10, record(atA, "k").total());
        // Neither failed write can be settled by its version: the record had moved on since each instance's last read
        // (B's merge, then A's write). Both were written again, which was right: neither call had reached the store.
        assertEquals(1, a.stats().doubtfulWrites());
        assertEquals(1, b.stats().doubtfulWrites());
        assertTrue(a.refresh() && b.refresh());
        assertEquals(0, atA.peek("k", 1).remaining());
        assertFalse(atB.tryAcquire("k").allowed());
    }

    @Test
    void aWriteWhoseAnswerWasLostIsRecognizedByItsVersionAndNotCountedTwice() {
        ScriptedCounterStore scripted = new ScriptedCounterStore(shared);
        SynchronizedStore a = instance(scripted);
        RateLimiter atA = limiter(a, Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
        assertEquals(4, admitted(atA, "k", 4));
        scripted.mode(ScriptedCounterStore.Mode.LOSE_ANSWERS);
        assertFalse(a.flush());
        assertEquals(4, record(atA, "k").total()); // applied, but A was not told
        assertEquals(4, held(atA, "k").i());
        assertTrue(held(atA, "k").doubt());
        assertEquals(96, atA.peek("k", 1).remaining()); // counted once meanwhile
        assertEquals(1, admitted(atA, "k", 1));

        scripted.mode(ScriptedCounterStore.Mode.UP);
        scripted.clearCalls();
        assertTrue(a.flush());
        assertEquals("[load(1), cas(1)[true]]", scripted.calls().toString()); // settle by a read, write the 1 after
        assertEquals(5, record(atA, "k").total());
        assertEquals(5, held(atA, "k").g());
        assertEquals(0, held(atA, "k").i());
        assertEquals(0, a.stats().doubtfulWrites());
    }

    @Test
    void aLostAnswerFollowedByAnotherWriterIsWrittenAgainNeverLost() {
        ScriptedCounterStore scripted = new ScriptedCounterStore(shared);
        SynchronizedStore a = instance(scripted);
        SynchronizedStore b = instance();
        RateLimiter atA = limiter(a, Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
        RateLimiter atB = limiter(b, Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
        assertEquals(4, admitted(atA, "k", 4));
        scripted.mode(ScriptedCounterStore.Mode.LOSE_ANSWERS);
        assertFalse(a.flush()); // applied: 4
        assertEquals(2, admitted(atB, "k", 2));
        assertTrue(b.flush()); // B took the key up with A's 4: writes 6
        scripted.mode(ScriptedCounterStore.Mode.UP);
        assertTrue(a.flush()); // cannot tell: writes its 4 again
        assertEquals(1, a.stats().doubtfulWrites());
        assertEquals(4 + 2 + 4, record(atA, "k").total()); // over-counted by the doubtful 4, never under
    }

    // ---- eviction --------------------------------------------------------------------------------------------------

    @Test
    void keysAreEvictedOnlyWhenIdleWithNothingToWriteAndNothingThatStillCounts() {
        SynchronizedStore a = SynchronizedStore.builder(shared)
                .manualRounds()
                .idleTimeout(Duration.ofSeconds(30))
                .build();
        SynchronizedStore b = instance();
        // the sliding tail counts a window's requests until the end of the next window
        RateLimiter atA = limiter(a, Algorithm.SLIDING_TAIL, 10, Duration.ofMinutes(1));
        RateLimiter atB = limiter(b, Algorithm.SLIDING_TAIL, 10, Duration.ofMinutes(1));
        atA.tryAcquire("done");
        assertTrue(a.flush());
        atA.tryAcquire("unwritten");
        clock.at("12:01:30");
        assertTrue(a.refresh());
        assertEquals(2, ((SynchronizedLimiter) atA).keyCount()); // "done": idle for 90 s, but its count still counts
        clock.at("12:01:45");
        atA.peek("recent", 1);

        clock.at("12:02:00");
        assertTrue(a.refresh());
        assertNull(held(atA, "done"));
        // its count no longer counts, so there is nothing left to write; but no flush has seen that yet
        assertEquals(0, held(atA, "unwritten").i());
        assertEquals(0, held(atA, "recent").i()); // nothing to write, nothing counts, but idle for 15 s only
        assertEquals(2, ((SynchronizedLimiter) atA).keyCount());
        assertEquals(1, a.stats().evictions());
        assertTrue(a.flush()); // drops the count that no longer counts
        assertEquals(1, a.stats().writes());
        clock.at("12:02:15");
        assertTrue(a.refresh());
        // "unwritten" is idle since 12:01:30, when a round last saw it used; "recent" since 12:02:00, the first round
        // to see the peek of 12:01:45 (a decision writes nothing a round reads but a mark on the key)
        assertNull(held(atA, "unwritten"));
        assertEquals(1, ((SynchronizedLimiter) atA).keyCount());
        clock.at("12:02:30");
        assertTrue(a.refresh());
        assertEquals(0, ((SynchronizedLimiter) atA).keyCount());
        assertEquals(3, a.stats().evictions());

        // the evicted key comes back: taken up like a new key, its record read before the decision
        assertEquals(5, admitted(atB, "done", 5));
        assertTrue(b.flush());
        assertEquals(10 - 5 - 1, atA.tryAcquire("done").remaining());
        assertTrue(a.refresh());
        assertEquals(5, held(atA, "done").g());
        assertEquals(1, held(atA, "done").i());
        assertEquals(10 - 5 - 1 - 1, atA.tryAcquire("done").remaining());
        assertTrue(a.flush());
        assertEquals(5 + 1 + 1, record(atA, "done").total());
    }

    // ---- the local part is exact under concurrency ---------------------------------------------------------------

    @Test
    void threadsOnOneInstanceAdmitExactlyTheLimitLessWhatWasSeenWhileFlushesRun() throws Exception {
        SynchronizedStore other = instance();
        RateLimiter atOther = limiter(other, Algorithm.FIXED_WINDOW, 1_000, Duration.ofHours(1));
        assertEquals(300, admitted(atOther, "hot", 300));
        assertTrue(other.flush());

        SynchronizedStore a = instance();
        RateLimiter atA = limiter(a, Algorithm.FIXED_WINDOW, 1_000, Duration.ofHours(1));
        atA.peek("hot", 1);
        assertTrue(a.refresh());
        assertEquals(700, atA.peek("hot", 1).remaining());

        int threads = 8;
        int perThread = 200;
        AtomicLong admitted = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            workers.add(requester(start, atA, perThread, admitted));
        }
        Thread syncer = syncer(start, a, done);
        for (Thread w : workers) {
            w.join();
        }
        done.set(true);
        syncer.join();
        assertEquals(700, admitted.get());
        assertTrue(a.flush());
        assertEquals(1_000, record(atA, "hot").total());
        assertEquals(0, held(atA, "hot").i());
        assertEquals(0, a.stats().conflicts()); // nobody else wrote
    }

    @Test
    void twoInstancesDecidingFlushingAndRefreshingTogetherNeitherLoseNorDoubleACount() throws Exception {
        // every refresh that finds the other's write rebuilds the key's state in place, under the decisions' lock
        for (Algorithm algorithm :
                List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_TAIL, Algorithm.SLIDING_WINDOW_COUNTER)) {
            InMemoryCounterStore store = InMemoryCounterStore.create();
            SynchronizedStore[] instances = {instance(store), instance(store)};
            RateLimiter[] limiters = new RateLimiter[2];
            for (int i = 0; i < 2; i++) {
                limiters[i] = limiter(instances[i], algorithm, 1_000, Duration.ofHours(1));
            }
            int threads = 3;
            int perThread = 600;
            AtomicLong[] admitted = {new AtomicLong(), new AtomicLong()};
            AtomicBoolean done = new AtomicBoolean();
            CyclicBarrier start = new CyclicBarrier(2 * threads + 2);
            List<Thread> workers = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                for (int t = 0; t < threads; t++) {
                    workers.add(requester(start, limiters[i], perThread, admitted[i]));
                }
            }
            List<Thread> syncers = new ArrayList<>();
            for (SynchronizedStore instance : instances) {
                syncers.add(syncer(start, instance, done));
            }
            for (Thread w : workers) {
                w.join();
            }
            done.set(true);
            for (Thread syncer : syncers) {
                syncer.join();
            }
            for (SynchronizedStore instance : instances) {
                assertTrue(instance.flush(), algorithm.toString());
            }
            long total = admitted[0].get() + admitted[1].get();
            CounterSnapshot record = store.read(new CounterKey(((SynchronizedLimiter) limiters[0]).shape(), "hot"));
            assertEquals(total, record.total(), algorithm + ": every admitted request counted once");
            for (int i = 0; i < 2; i++) {
                assertTrue(admitted[i].get() <= 1_000, algorithm + ": an instance admits within the limit it sees");
                assertEquals(0, held(limiters[i], "hot").i(), algorithm.toString());
            }
            assertTrue(total >= 1_000, algorithm + ": the limit was reached, " + total);
        }
    }

    /** A started thread that waits at {@code start}, then asks for key "hot" {@code requests} times. */
    private static Thread requester(CyclicBarrier start, RateLimiter limiter, int requests, AtomicLong admitted) {
        Thread t = new Thread(() -> {
            await(start);
            for (int j = 0; j < requests; j++) {
                if (limiter.tryAcquire("hot").allowed()) {
                    admitted.incrementAndGet();
                }
            }
        });
        t.start();
        return t;
    }

    /** A started thread that waits at {@code start}, then flushes and refreshes {@code store} until {@code done}. */
    private static Thread syncer(CyclicBarrier start, SynchronizedStore store, AtomicBoolean done) {
        Thread t = new Thread(() -> {
            await(start);
            while (!done.get()) {
                store.flush();
                store.refresh();
            }
        });
        t.start();
        return t;
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    // ---- reservations, peek, countRejected, cost -------------------------------------------------------------------

    @Test
    void aCancelGivesBackFlushedPermitsThroughTheNextFlush() {
        SynchronizedStore a = instance();
        RateLimiter atA = limiter(a, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        Reservation r = atA.reserve("login", 3);
        assertTrue(r.decision().allowed());
        assertEquals(7, r.decision().remaining());
        Reservation local = atA.reserve("login", 2);
        assertTrue(local.decision().allowed());
        assertTrue(a.flush());
        assertEquals(5, record(atA, "login").total());
        Reservation unflushed = atA.reserve("login", 1);

        assertTrue(r.cancel());
        assertFalse(r.cancel());
        assertEquals(-3 + 1, held(atA, "login").i());
        assertEquals(10 - 2 - 1, atA.peek("login", 1).remaining());
        assertTrue(unflushed.cancel());
        assertTrue(a.flush());
        assertEquals(2, record(atA, "login").total());

        Reservation denied = atA.reserve("login", 9);
        assertFalse(denied.decision().allowed());
        assertFalse(denied.cancel());
        clock.advance(Duration.ofMinutes(1)); // the frame of "local" has stopped counting
        assertFalse(local.cancel());
    }

    @Test
    void cancelsOfAnotherInstanceReduceTheSharedCount() {
        SynchronizedStore a = instance();
        SynchronizedStore b = instance();
        RateLimiter atA = limiter(a, Algorithm.SLIDING_TAIL, 10, Duration.ofMinutes(1));
        RateLimiter atB = limiter(b, Algorithm.SLIDING_TAIL, 10, Duration.ofMinutes(1));
        Reservation r = atA.reserve("k", 4);
        assertTrue(a.flush());
        assertEquals(6, admitted(atB, "k", 6));
        assertTrue(b.flush());
        assertTrue(r.cancel());
        assertTrue(a.flush());
        assertEquals(6, record(atA, "k").total());
        assertTrue(b.refresh());
        assertEquals(4, atB.peek("k", 1).remaining());
    }

    @Test
    void peekConsumesNothingAndCountRejectedSharesRejections() {
        SynchronizedStore a = instance();
        RateLimiter counted = limiter(a, Algorithm.FIXED_WINDOW, 3, Duration.ofMinutes(1), o -> o.countRejected(true));
        RateLimiter plain = limiter(a, Algorithm.SLIDING_TAIL, 3, Duration.ofMinutes(1));
        for (int j = 0; j < 3; j++) {
            assertEquals(3, counted.peek("k", 3).remaining());
        }
        assertEquals(3, admitted(counted, "k", 5));
        assertEquals(3, admitted(plain, "k", 5));
        assertTrue(a.flush());
        assertEquals(5, record(counted, "k").total());
        assertEquals(3, record(plain, "k").total());
        assertNotEquals(((SynchronizedLimiter) counted).shape(), ((SynchronizedLimiter) plain).shape());
    }

    @Test
    void aCostCountsWholeAndDecisionsComeFromGPlusI() {
        SynchronizedStore a = instance();
        SynchronizedStore b = instance();
        RateLimiter atA = limiter(a, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        RateLimiter atB = limiter(b, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        clock.at("12:00:40");
        assertTrue(atB.tryAcquire("k", 6).allowed());
        assertTrue(b.flush());
        atA.peek("k", 1);
        assertTrue(a.refresh());
        Decision d = atA.tryAcquire("k", 3);
        assertTrue(d.allowed());
        assertEquals(1, d.remaining());
        assertEquals(Duration.ofSeconds(20), d.resetAfter());
        Decision no = atA.tryAcquire("k", 2);
        assertFalse(no.allowed());
        assertEquals(Duration.ofSeconds(20), no.retryAfter());
    }

    // ---- records expire; a version is never reused ----------------------------------------------------------------

    @Test
    void anInstanceHoldingAVersionOfAnExpiredRecordNeverOverwritesItsSuccessor() {
        InMemoryCounterStore expiring = InMemoryCounterStore.expiringWith(clock);
        SynchronizedStore a = instance(expiring);
        SynchronizedStore b = instance(expiring);
        RateLimiter atA = limiter(a, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        RateLimiter atB = limiter(b, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        CounterKey id = new CounterKey(((SynchronizedLimiter) atA).shape(), "k");
        assertEquals(5, admitted(atA, "k", 5));
        assertTrue(a.flush());
        long old = expiring.read(id).version();
        clock.at("12:01:00"); // the window is over: the record expires
        assertEquals(CounterSnapshot.absent(), expiring.read(id));
        assertEquals(3, admitted(atB, "k", 3));
        assertTrue(b.flush()); // a new record
        assertNotEquals(old, expiring.read(id).version());
        assertEquals(1, admitted(atA, "k", 1));
        assertTrue(a.flush()); // expects its old version: a conflict, not an overwrite
        assertEquals(1, a.stats().conflicts());
        assertEquals(4, expiring.read(id).total());
    }

    @Test
    void countsOfAFrameThatStoppedCountingBeforeTheFlushAreDropped() {
        SynchronizedStore a = instance();
        RateLimiter atA = limiter(a, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
        clock.at("12:00:59");
        assertEquals(2, admitted(atA, "k", 2));
        clock.at("12:01:00");
        assertEquals(1, a.stats().storeCalls()); // the first decision read the key
        assertTrue(a.flush());
        assertEquals(0, a.stats().writes());
        assertEquals(1, a.stats().storeCalls()); // the flush made no call
        assertEquals(0, held(atA, "k").i());
        assertEquals(CounterSnapshot.absent(), record(atA, "k"));
    }

    @Test
    void theRecordExpiresWhenItsLastFrameStopsCounting() {
        List<CounterWrite> seen = new ArrayList<>();
        CounterStore spy = new CounterStore() {
            @Override
            public List<CounterSnapshot> load(List<CounterKey> keys) {
                return shared.load(keys);
            }

            @Override
            public boolean[] compareAndSet(List<CounterWrite> writes) {
                seen.addAll(writes);
                return shared.compareAndSet(writes);
            }
        };
        SynchronizedStore a = instance(spy);
        clock.at("12:00:10");
        limiter(a, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1)).tryAcquire("k");
        limiter(a, Algorithm.SLIDING_TAIL, 10, Duration.ofMinutes(1)).tryAcquire("k");
        limiter(a, Algorithm.SLIDING_WINDOW_COUNTER, 10, Duration.ofMinutes(1), o -> o.buckets(6)
                        .strict(true))
                .tryAcquire("k");
        assertTrue(a.flush());
        assertEquals(3, seen.size());
        assertEquals("2026-01-01T12:01:00Z", seen.get(0).expireAt().toString()); // the window's end
        assertEquals("2026-01-01T12:02:00Z", seen.get(1).expireAt().toString()); // the next window's end
        assertEquals("2026-01-01T12:01:20Z", seen.get(2).expireAt().toString()); // [12:00:10, :20) + 60 s
        for (CounterWrite w : seen) {
            assertTrue(w.creates(), w.toString());
        }
    }

    // ---- configuration ---------------------------------------------------------------------------------------------

    @Test
    @SuppressWarnings("deprecation") // flushInterval, the old name of interval, still names itself
    void bucketsAndTheLogAreRefusedAndBadOptionsNamed() {
        SynchronizedStore a = instance();
        for (Algorithm algorithm :
                new Algorithm[] {Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET, Algorithm.SLIDING_LOG}) {
            IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class, () -> limiter(a, algorithm, 10, Duration.ofMinutes(1)));
            assertTrue(e.getMessage().contains(algorithm.toString()), e.getMessage());
        }
        SynchronizedStore.Builder b = SynchronizedStore.builder(shared);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.batchSize(0))
                .getMessage()
                .contains("was 0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.flushInterval(Duration.ZERO))
                .getMessage()
                .contains("flushInterval"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.refreshInterval(Duration.ofMillis(-1)))
                .getMessage()
                .contains("-1ms"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> b.idleTimeout(Duration.ofSeconds(Long.MAX_VALUE)))
                .getMessage()
                .contains("idleTimeout"));
        assertThrows(NullPointerException.class, () -> SynchronizedStore.builder(null));
    }

    // ---- the background thread -------------------------------------------------------------------------------------

    @Test
    void theBackgroundThreadFlushesAndRefreshesAndCloseFlushesTheRest() throws Exception {
        CountDownLatch written = new CountDownLatch(1);
        CounterStore watched = new CounterStore() {
            @Override
            public List<CounterSnapshot> load(List<CounterKey> keys) {
                return shared.load(keys);
            }

            @Override
            public boolean[] compareAndSet(List<CounterWrite> writes) {
                boolean[] out = shared.compareAndSet(writes);
                written.countDown();
                return out;
            }
        };
        SynchronizedStore other = instance();
        RateLimiter atOther = limiter(other, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));

        SynchronizedStore s = SynchronizedStore.builder(watched)
                .interval(Duration.ofMillis(5))
                .build();
        try {
            RateLimiter limiter = limiter(s, Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
            assertEquals(10, limiter.peek("seen", 1).remaining()); // taken up before the other instance counts
            assertEquals(4, admitted(atOther, "seen", 4));
            assertTrue(other.flush()); // only a refresh shows these 4 here
            limiter.tryAcquire("k");
            assertTrue(written.await(30, TimeUnit.SECONDS), "no flush within 30 s");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (limiter.peek("seen", 1).remaining() != 6 && System.nanoTime() < deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10)); // leaves the CPU to the background thread
            }
            assertEquals(6, limiter.peek("seen", 1).remaining(), "the other instance's 4 seen (refreshed) within 30 s");
            assertEquals(1, record(limiter, "k").total());
            limiter.tryAcquire("late");
            s.close();
            assertEquals(1, record(limiter, "late").total());
            assertEquals(0, s.stats().storeFailures());
        } finally {
            s.close();
        }
    }
}
