package dev.sluice.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import dev.sluice.SluiceException;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.sync.SyncStats;
import dev.sluice.sync.SynchronizedStore;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The counter store contract: what every {@link CounterStore} must do for synchronized mode
 * ({@link SynchronizedStore}). A store's test extends this class, implements the three hooks and passes unchanged.
 *
 * <ul>
 *   <li>the storage primitives: a record is created once, replaced only at the version read, read back exactly, in
 *       the order asked;</li>
 *   <li>the worked example of docs/sync-mode.md, two instances and one conflict, with the store's count after each
 *       step;</li>
 *   <li>no lost update: ten instances, several threads each, random keys, costs, reservations and cancels, flushes
 *       running while requests do, over many rounds with real conflicts; the store's counts equal the admitted counts
 *       exactly, frame by frame;</li>
 *   <li>an outage: the store stopped, instances keep deciding (each within the limit on what it has seen), the store
 *       started again, and every count arrives;</li>
 *   <li>joint requests: a refused request counts in no limit (but a refusing one that counts rejections), in memory
 *       and in what a flush writes; eight threads under a per-second and a per-minute limit admit exactly what
 *       both allow;</li>
 *   <li>closing a limiter: its counts reach the store (at once, or with the next flush if the store failed), the
 *       synchronized store lets go of it, and requests throw;</li>
 *   <li>a listener that throws from every method changes no decision and no count.</li>
 * </ul>
 *
 * <p>Time comes from {@link #clock}, moved by hand. It starts at the next whole hour of the real time, so that the
 * expiry of every record written lies in the real future: a store that deletes expired records by its own clock
 * (a TTL index, {@code PEXPIREAT}) keeps them for the length of the test. Every test uses keys of its own, so a
 * server that keeps records between runs needs no cleanup.
 */
public abstract class CounterStoreContract {

    /** The only clock of every limiter this suite builds; starts at the next whole hour. */
    protected final ManualClock clock =
            new ManualClock(Instant.now().truncatedTo(ChronoUnit.HOURS).plus(1, ChronoUnit.HOURS));

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicLong keys = new AtomicLong();
    private final List<SynchronizedStore> built = new ArrayList<>();

    /** For a store's test class to extend. */
    protected CounterStoreContract() {}

    /**
     * The counter store under test. Called once per simulated instance: a store may return a new instance (a new
     * client) each time, as long as all share the same records.
     */
    protected abstract CounterStore counterStore();

    /**
     * Makes the store unreachable, as an outage would: for instance stop the server. Calls to the counter stores
     * already handed out must fail (within their timeout) until {@link #startStore()}.
     */
    protected abstract void stopStore();

    /**
     * Ends the outage: the server is back with the records it held when it stopped (as a real server with
     * persistence comes back). Clients handed out before may need a few calls to reconnect.
     */
    protected abstract void startStore();

    /** The batch size of the synchronized stores this suite builds: small, so a flush takes several calls. */
    protected int batchSize() {
        return 16;
    }

    /** A new instance: a synchronized store on a new {@link #counterStore()}, flushed and refreshed by hand. */
    protected final SynchronizedStore instance() {
        SynchronizedStore s = SynchronizedStore.builder(counterStore())
                .manualRounds()
                .batchSize(batchSize())
                .build();
        built.add(s);
        return s;
    }

    /** A new instance whose synchronized store has {@code listener}, on {@code counters}. */
    private SynchronizedStore instance(CounterStore counters, RateLimitListener listener) {
        SynchronizedStore s = SynchronizedStore.builder(counters)
                .manualRounds()
                .batchSize(batchSize())
                .listener(listener)
                .build();
        built.add(s);
        return s;
    }

    /** A key no other test (or earlier run against the same server) has used. */
    protected final String key(String name) {
        return "contract:" + run + ":" + keys.incrementAndGet() + ":" + name;
    }

    /**
     * The record of {@code key} for {@code limiter}, read straight from a new counter store. A new store may still be
     * connecting when first called (a Redis Cluster client just after the cluster came back from an outage answers
     * "not connected yet"), so the read is retried until it answers.
     */
    protected final CounterSnapshot record(RateLimiter limiter, String key) {
        CounterStore store = counterStore();
        CounterKey id = id(limiter.config(), key);
        return Await.succeeds(
                "a read of " + key + " from a new counter store", Await.GENEROUS, () -> store.load(List.of(id))
                        .get(0));
    }

    private static CounterKey id(LimiterConfig config, String key) {
        return new CounterKey(SharedStoreOptions.shape(config), key);
    }

    private long nanos(Instant i) {
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
    }

    // ---- the storage primitives ------------------------------------------------------------------------------------

    @Test
    void aRecordIsCreatedOnceReplacedOnlyAtTheVersionReadAndReadBackExactly() {
        CounterStore store = counterStore();
        String shape = "contract:" + run;
        CounterKey a = new CounterKey(shape, key("a"));
        CounterKey b = new CounterKey(shape, key("b"));
        CounterKey c = new CounterKey(shape, key("c"));
        long f1 = nanos(clock.instant());
        long f2 = f1 + 500_000_000; // frames need not start on a whole second
        long f3 = f1 + 60_000_000_000L;
        long expire = f1 + 3_600_000_000_000L;
        long big = 1L << 40;
        long v1 = 0x7FFF_FFFF_FFFF_FFF0L; // versions are any long but 0
        long v2 = -5;

        assertEquals(List.of(CounterSnapshot.absent(), CounterSnapshot.absent()), store.load(List.of(a, b)));
        assertArrayEquals(
                new boolean[] {true, true},
                store.compareAndSet(List.of(
                        new CounterWrite(a, CounterSnapshot.ABSENT, v1, Map.of(f1, 3L, f2, 4L), expire),
                        new CounterWrite(b, CounterSnapshot.ABSENT, 21, Map.of(f1, 1L), expire))));
        assertArrayEquals(
                new boolean[] {false},
                store.compareAndSet(List.of(new CounterWrite(a, CounterSnapshot.ABSENT, 12, Map.of(f1, 9L), expire))),
                "created twice");
        assertEquals(
                List.of(
                        new CounterSnapshot(21, Map.of(f1, 1L)),
                        CounterSnapshot.absent(),
                        new CounterSnapshot(v1, Map.of(f1, 3L, f2, 4L))),
                store.load(List.of(b, c, a)),
                "in the order asked");

        assertArrayEquals(
                new boolean[] {true, false, true},
                store.compareAndSet(List.of(
                        new CounterWrite(a, v1, v2, Map.of(f2, 5L, f3, big), expire),
                        new CounterWrite(b, 99, 22, Map.of(f1, 100L), expire),
                        new CounterWrite(c, CounterSnapshot.ABSENT, 31, Map.of(f3, 1L), expire))));
        assertEquals(
                List.of(
                        new CounterSnapshot(v2, Map.of(f2, 5L, f3, big)),
                        new CounterSnapshot(21, Map.of(f1, 1L)),
                        new CounterSnapshot(31, Map.of(f3, 1L))),
                store.load(List.of(a, b, c)),
                "a replaced whole, b kept");
        assertArrayEquals(
                new boolean[] {false},
                store.compareAndSet(List.of(new CounterWrite(a, v1, 14, Map.of(f1, 1L), expire))),
                "a stale version");
        assertArrayEquals(
                new boolean[] {true},
                store.compareAndSet(List.of(new CounterWrite(c, 31, 32, Map.of(), expire))),
                "a record with no counts");
        assertEquals(new CounterSnapshot(32, Map.of()), store.load(List.of(c)).get(0));

        assertEquals(List.of(), store.load(List.of()));
        assertEquals(0, store.compareAndSet(List.of()).length);
    }

    // ---- the worked example --------------------------------------------------------------------------------------

    /** Steps 1 to 10 of docs/sync-mode.md; {@code g + i} shows as the limit less {@code remaining}. */
    @Test
    void workedExample() {
        SynchronizedStore a = instance();
        SynchronizedStore b = instance();
        RateLimiter atA = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(10, Duration.ofMinutes(1))
                .clock(clock)
                .store(a)
                .build();
        RateLimiter atB = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(10, Duration.ofMinutes(1))
                .clock(clock)
                .store(b)
                .build();
        String k = key("worked");
        clock.advance(Duration.ofSeconds(10));

        assertEquals(10, atA.peek(k, 1).remaining()); // 1. A 0/0, B 0/0, store 0
        assertEquals(10, atB.peek(k, 1).remaining());
        assertFalse(record(atA, k).exists());
        assertEquals(9, atA.tryAcquire(k).remaining()); // 2. A 0/1
        assertFalse(record(atA, k).exists());
        assertTrue(a.flush()); // 3. A 1/0, store 1
        CounterSnapshot afterA = record(atA, k);
        assertEquals(1, afterA.total());
        assertTrue(b.refresh()); // 4. B 1/0
        assertEquals(9, atB.peek(k, 1).remaining());
        assertEquals(8, atA.tryAcquire(k).remaining()); // 5. A 1/1, B 1/3
        assertEquals(8, atB.tryAcquire(k).remaining());
        assertEquals(7, atB.tryAcquire(k).remaining());
        assertEquals(6, atB.tryAcquire(k).remaining());
        assertTrue(b.flush()); // 6. B 4/0, store 4
        CounterSnapshot afterB = record(atA, k);
        assertEquals(4, afterB.total());
        assertNotEquals(afterA.version(), afterB.version());
        assertTrue(a.flush()); // 7. conflict; 8. re-read 4/1, write 5
        assertEquals(5, record(atA, k).total());
        // the first peek's load (step 1); cas; cas, load, cas
        assertEquals(new SyncStats(2, 0, 1 + 1 + 3, 2, 1, 0, 0, 0), a.stats());
        assertEquals(5, atA.peek(k, 1).remaining()); //    A 5/0
        assertEquals(6, atB.peek(k, 1).remaining()); // 9. B still 4/0
        assertTrue(b.refresh()); // 10. B 5/0: store 5 = all requests
        assertEquals(5, atB.peek(k, 1).remaining());
        assertEquals(5, record(atB, k).total());
    }

    // ---- no lost update --------------------------------------------------------------------------------------------

    /**
     * Ten instances, three threads each, on 24 keys (a few of them hot), with costs of 1 to 3, reservations and
     * cancels; every instance flushes while its threads decide, then all flush at once (real conflicts), some
     * refresh, and the clock moves on by 20 s (a new frame every third round). At the end, the store's count of every
     * key and frame equals what was admitted less what was cancelled, exactly.
     */
    @Test
    void noUpdateIsLostAcrossInstancesThreadsAndConflicts() throws Exception {
        int instances = 10;
        int threads = 3;
        int rounds = 24;
        int requests = 40;
        int keyCount = 24;
        List<SynchronizedStore> stores = new ArrayList<>();
        List<RateLimiter> limiters = new ArrayList<>();
        for (int j = 0; j < instances; j++) {
            SynchronizedStore s = instance();
            stores.add(s);
            limiters.add(RateLimiter.builder(Algorithm.SLIDING_WINDOW_COUNTER)
                    .limit(1_000_000, Duration.ofHours(1))
                    .buckets(60)
                    .clock(clock)
                    .store(s)
                    .build());
        }
        String[] names = new String[keyCount];
        for (int j = 0; j < keyCount; j++) {
            names[j] = key("k" + j);
        }
        long subWindow = Duration.ofMinutes(1).toNanos();
        Map<String, LongAdder> admitted = new ConcurrentHashMap<>(); // "key@frame" -> permits held
        ExecutorService pool = Executors.newFixedThreadPool(instances * threads + instances);
        try {
            Random seeds = new Random(7);
            for (int round = 0; round < rounds; round++) {
                long frame = Math.floorDiv(nanos(clock.instant()), subWindow) * subWindow;
                List<Callable<Void>> tasks = new ArrayList<>();
                for (int j = 0; j < instances; j++) {
                    RateLimiter limiter = limiters.get(j);
                    for (int t = 0; t < threads; t++) {
                        long seed = seeds.nextLong();
                        tasks.add(() -> {
                            traffic(limiter, names, requests, new Random(seed), frame, admitted);
                            return null;
                        });
                    }
                    SynchronizedStore s = stores.get(j);
                    tasks.add(() -> {
                        s.flush();
                        return null;
                    });
                }
                runAll(pool, tasks);
                List<Callable<Void>> flushes = new ArrayList<>();
                for (SynchronizedStore s : stores) {
                    flushes.add(() -> {
                        s.flush();
                        return null;
                    });
                }
                runAll(pool, flushes);
                for (int j = round % 2; j < instances; j += 2) {
                    assertTrue(stores.get(j).refresh(), "refresh of instance " + j);
                }
                clock.advance(Duration.ofSeconds(20));
            }
        } finally {
            pool.shutdownNow();
        }
        flushAll(stores);

        long conflicts = 0;
        for (SynchronizedStore s : stores) {
            conflicts += s.stats().conflicts();
            assertEquals(0, s.stats().storeFailures(), "store failures at " + s);
        }
        assertTrue(conflicts > 0, "the test must provoke conflicts");
        Map<String, Long> expected = new TreeMap<>();
        admitted.forEach((k, v) -> {
            if (v.sum() != 0) {
                expected.put(k, v.sum());
            }
        });
        Map<String, Long> stored = new TreeMap<>();
        List<CounterKey> ids = new ArrayList<>();
        for (String name : names) {
            ids.add(id(limiters.get(0).config(), name));
        }
        List<CounterSnapshot> snapshots = counterStore().load(ids);
        for (int j = 0; j < names.length; j++) {
            for (Map.Entry<Long, Long> e : snapshots.get(j).counters().entrySet()) {
                stored.put(names[j] + "@" + e.getKey(), e.getValue());
            }
        }
        List<String> differences = new ArrayList<>();
        for (String k : union(expected.keySet(), stored.keySet())) {
            if (!Objects.equals(expected.get(k), stored.get(k))) {
                differences.add(k + ": admitted " + expected.get(k) + ", stored " + stored.get(k));
            }
        }
        assertEquals(
                List.of(),
                differences.subList(0, Math.min(10, differences.size())),
                differences.size() + " of " + expected.size() + " key frames differ (" + conflicts
                        + " conflicts); the first 10");
        assertTrue(expected.size() >= keyCount * 3, "several frames per key: " + expected.size());
    }

    private static SortedSet<String> union(Set<String> a, Set<String> b) {
        SortedSet<String> u = new TreeSet<>(a);
        u.addAll(b);
        return u;
    }

    private record Held(Reservation reservation, String key, long cost) {}

    private static void traffic(
            RateLimiter limiter,
            String[] names,
            int requests,
            Random random,
            long frame,
            Map<String, LongAdder> admitted) {
        List<Held> held = new ArrayList<>();
        for (int r = 0; r < requests; r++) {
            String k = random.nextInt(2) == 0 ? names[random.nextInt(4)] : names[random.nextInt(names.length)];
            long cost = 1L + random.nextInt(3);
            int op = random.nextInt(10);
            if (op < 7) {
                if (limiter.tryAcquire(k, cost).allowed()) {
                    admitted.computeIfAbsent(k + "@" + frame, x -> new LongAdder())
                            .add(cost);
                }
            } else if (op < 9 || held.isEmpty()) {
                Reservation res = limiter.reserve(k, cost);
                if (res.decision().allowed()) {
                    admitted.computeIfAbsent(k + "@" + frame, x -> new LongAdder())
                            .add(cost);
                    held.add(new Held(res, k, cost));
                }
            } else {
                Held h = held.remove(random.nextInt(held.size()));
                if (h.reservation().cancel()) {
                    Objects.requireNonNull(admitted.get(h.key() + "@" + frame), "counted when it was reserved")
                            .add(-h.cost());
                }
            }
        }
    }

    private static void runAll(ExecutorService pool, List<Callable<Void>> tasks) throws Exception {
        for (Future<Void> f : pool.invokeAll(tasks, 5, TimeUnit.MINUTES)) {
            f.get();
        }
    }

    /** Flushes every instance until its flush goes through: a restarted server may take a while to be reached. */
    private static void flushAll(List<SynchronizedStore> stores) {
        for (int j = 0; j < stores.size(); j++) {
            Await.until("a flush of instance " + j + " to go through", Await.GENEROUS, stores.get(j)::flush);
        }
    }

    // ---- outage ----------------------------------------------------------------------------------------------------

    /**
     * Three instances share a limit of 40 per hour and have seen 15 admitted; the store stops. Each goes on deciding
     * within the limit on what it has seen (25 more each), flushes and refreshes fail, nothing is lost: once the store
     * is back every count arrives, 90 in all, and a key first used during the outage too.
     */
    @Test
    void duringAnOutageDecisionsGoOnAndEveryCountArrivesAfterwards() {
        List<SynchronizedStore> stores = new ArrayList<>();
        List<RateLimiter> limiters = new ArrayList<>();
        for (int j = 0; j < 3; j++) {
            SynchronizedStore s = instance();
            stores.add(s);
            limiters.add(RateLimiter.builder(Algorithm.SLIDING_TAIL)
                    .limit(40, Duration.ofHours(1))
                    .clock(clock)
                    .store(s)
                    .build());
        }
        String k = key("outage");
        String fresh = key("fresh");
        for (RateLimiter limiter : limiters) {
            assertEquals(5, admitted(limiter, k, 5));
        }
        flushAll(stores);
        for (SynchronizedStore s : stores) {
            assertTrue(s.refresh());
        }
        assertEquals(15, record(limiters.get(0), k).total());

        stopStore();
        try {
            clock.advance(Duration.ofMinutes(5));
            for (int j = 0; j < 3; j++) {
                assertEquals(25, admitted(limiters.get(j), k, 30), "instance " + j + " during the outage");
                assertFalse(stores.get(j).flush(), "flush of instance " + j + " during the outage");
            }
            assertEquals(7, admitted(limiters.get(0), fresh, 7));
            assertFalse(stores.get(0).refresh());
            assertFalse(stores.get(1).flush());
            Decision d = limiters.get(2).tryAcquire(k);
            assertFalse(d.allowed());
        } finally {
            startStore();
        }
        flushAll(stores);
        assertEquals(15 + 3 * 25, record(limiters.get(0), k).total());
        assertEquals(7, record(limiters.get(0), fresh).total());
        for (int j = 0; j < 3; j++) {
            assertTrue(stores.get(j).refresh(), "refresh of instance " + j);
            assertEquals(0, limiters.get(j).peek(k, 1).remaining());
        }
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

    // ---- joint requests ----------------------------------------------------------------------------------------

    /**
     * Per minute, {@code few} allows 2, {@code many} 10, {@code strict} 1 and counts rejections. A joint request
     * refused by {@code few} counts in neither; one refused by {@code strict} counts in {@code strict} only. What
     * the peeks show as {@code g + i} is what the flush writes.
     */
    @Test
    void aRefusedJointRequestCountsInNoLimitButARefusingOneThatCountsRejections() {
        SynchronizedStore s = instance();
        RateLimiter few = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(2, Duration.ofMinutes(1))
                .clock(clock)
                .store(s)
                .build();
        RateLimiter many = RateLimiter.builder(Algorithm.SLIDING_TAIL)
                .limit(10, Duration.ofMinutes(1))
                .clock(clock)
                .store(s)
                .build();
        RateLimiter strict = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(1, Duration.ofMinutes(1))
                .countRejected(true)
                .clock(clock)
                .store(s)
                .build();
        String k = key("joint");
        String other = key("joint-other");

        assertTrue(RateLimiter.tryAcquireAll(Acquisition.of(few, k), Acquisition.of(many, k, 3))
                .allowed());
        assertTrue(RateLimiter.tryAcquireAll(Acquisition.of(few, k), Acquisition.of(many, k, 3))
                .allowed());
        JointDecision refused = RateLimiter.tryAcquireAll(Acquisition.of(few, k), Acquisition.of(many, k, 3));
        assertFalse(refused.allowed(), "a third request over a limit of 2: " + refused);
        assertFalse(refused.decision(0).allowed(), "few refuses: " + refused);
        assertTrue(refused.decision(1).allowed(), "many alone would allow: " + refused);
        assertEquals(0, few.peek(k, 1).remaining(), "few: g + i = 2");
        assertEquals(4, many.peek(k, 1).remaining(), "many: g + i = 6, the refused 3 not counted");

        assertTrue(RateLimiter.tryAcquireAll(Acquisition.of(strict, other), Acquisition.of(many, other))
                .allowed());
        JointDecision counted = RateLimiter.tryAcquireAll(Acquisition.of(many, other), Acquisition.of(strict, other));
        assertFalse(counted.allowed(), "strict allows 1: " + counted);
        assertEquals(9, many.peek(other, 1).remaining(), "many: g + i = 1, the refused request not counted");

        assertTrue(s.flush());
        assertEquals(2, record(few, k).total(), "few's record of " + k);
        assertEquals(6, record(many, k).total(), "many's record of " + k);
        assertEquals(1, record(many, other).total(), "many's record of " + other);
        assertEquals(2, record(strict, other).total(), "strict's record of " + other + " counts the rejection");
        assertEquals(0, few.peek(k, 1).remaining());
        assertEquals(4, many.peek(k, 1).remaining());
    }

    /**
     * Eight threads on one key under 10 per second and 100 per minute, with the flusher running: exactly 10 pass in
     * each of the first ten seconds, then none for the rest of the minute, 100 in all; the store holds 100.
     */
    @Test
    void eightThreadsUnderTwoLimitsAdmitExactlyWhatBothAllow() throws Exception {
        SynchronizedStore s = instance();
        RateLimiter perSecond = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(10, Duration.ofSeconds(1))
                .clock(clock)
                .store(s)
                .build();
        RateLimiter perMinute = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(100, Duration.ofMinutes(1))
                .clock(clock)
                .store(s)
                .build();
        String k = key("two-limits");
        int threads = 8;
        int attempts = 4; // 32 tries a second against 10 allowed
        ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
        List<Long> perSecondAdmitted = new ArrayList<>();
        try {
            for (int second = 0; second < 60; second++) {
                LongAdder admitted = new LongAdder();
                CyclicBarrier start = new CyclicBarrier(threads + 1);
                List<Callable<Void>> tasks = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    tasks.add(() -> {
                        start.await(1, TimeUnit.MINUTES);
                        for (int j = 0; j < attempts; j++) {
                            if (RateLimiter.tryAcquireAll(Acquisition.of(perSecond, k), Acquisition.of(perMinute, k))
                                    .allowed()) {
                                admitted.increment();
                            }
                        }
                        return null;
                    });
                }
                tasks.add(() -> {
                    start.await(1, TimeUnit.MINUTES);
                    s.flush();
                    return null;
                });
                runAll(pool, tasks);
                perSecondAdmitted.add(admitted.sum());
                if (second < 59) {
                    clock.advance(Duration.ofSeconds(1));
                }
            }
        } finally {
            pool.shutdownNow();
        }
        List<Long> expected = new ArrayList<>();
        for (int second = 0; second < 60; second++) {
            expected.add(second < 10 ? 10L : 0L);
        }
        assertEquals(expected, perSecondAdmitted, "admitted in each second of the minute");
        assertTrue(s.flush());
        assertEquals(100, record(perMinute, k).total(), "the per-minute record");
        assertEquals(0, perMinute.peek(k, 1).remaining());
    }

    // ---- closing a limiter ---------------------------------------------------------------------------------------

    /** A counter store that fails every call while {@link #down} is set, as an outage would. */
    private final class Switchable implements CounterStore {
        private final CounterStore store = counterStore();
        volatile boolean down;

        @Override
        public List<CounterSnapshot> load(List<CounterKey> ids) {
            check();
            return store.load(ids);
        }

        @Override
        public boolean[] compareAndSet(List<CounterWrite> writes) {
            check();
            return store.compareAndSet(writes);
        }

        private void check() {
            if (down) {
                throw new SluiceException("the counter store is switched off by the test");
            }
        }
    }

    /**
     * A limiter closed with counts not yet written writes them as it closes; requests throw afterwards; closing
     * again does nothing; and the synchronized store keeps no reference to the limiter (it is collected).
     */
    @Test
    void closingALimiterWritesItsCountsAndLetsItGo() {
        SynchronizedStore s = instance();
        String k = key("close");
        String j = key("close-joint");
        WeakReference<RateLimiter> closed = closeAfterRequests(s, k, j, null);
        assertEquals(3, record(reader(), k).total(), "written by close()");
        assertEquals(1, record(reader(), j).total(), "the joint request's part, written by close()");
        awaitCollected(closed);
    }

    /** The counter store fails as the limiter closes: its counts go with the store's next flush, then it is let go. */
    @Test
    void countsOfALimiterClosedDuringAnOutageGoWithTheNextFlush() {
        Switchable counters = new Switchable();
        SynchronizedStore s = instance(counters, RateLimitListener.NONE);
        String k = key("close-outage");
        String j = key("close-outage-joint");
        WeakReference<RateLimiter> closed = closeAfterRequests(s, k, j, counters);
        assertFalse(record(reader(), k).exists(), "nothing written during the outage");
        assertEquals(1, s.stats().storeFailures(), "the write at close failed: " + s.stats());
        counters.down = false;
        assertTrue(s.flush(), "the flush after the outage");
        assertEquals(3, record(reader(), k).total(), "written by the next flush");
        assertEquals(1, record(reader(), j).total());
        assertTrue(s.flush());
        assertEquals(3, record(reader(), k).total(), "written once");
        awaitCollected(closed);
    }

    /** A limiter of the shape {@link #closeAfterRequests} uses, to read its records. */
    private RateLimiter reader() {
        return RateLimiter.builder(Algorithm.SLIDING_TAIL)
                .limit(5, Duration.ofMinutes(1))
                .clock(clock)
                .store(instance())
                .build();
    }

    /**
     * Builds a limiter on {@code s}, takes 3 permits of {@code k} and one of {@code j} in a joint request with a
     * second limiter, closes it (with {@code failing} switched off if given), checks that requests throw, and hands
     * back only a weak reference to it.
     */
    private WeakReference<RateLimiter> closeAfterRequests(
            SynchronizedStore s, String k, String j, @Nullable Switchable failing) {
        RateLimiter limiter = RateLimiter.builder(Algorithm.SLIDING_TAIL)
                .limit(5, Duration.ofMinutes(1))
                .clock(clock)
                .store(s)
                .build();
        RateLimiter other = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(5, Duration.ofMinutes(1))
                .clock(clock)
                .store(s)
                .build();
        assertEquals(3, admitted(limiter, k, 3));
        assertTrue(RateLimiter.tryAcquireAll(Acquisition.of(limiter, j), Acquisition.of(other, j))
                .allowed());
        Reservation kept = limiter.reserve(k, 1);
        assertTrue(kept.decision().allowed());
        assertTrue(kept.cancel(), "cancelled before close: 3 remain");
        if (failing != null) {
            failing.down = true;
        }
        limiter.close();
        assertThrows(IllegalStateException.class, () -> limiter.tryAcquire(k), "tryAcquire after close");
        assertThrows(IllegalStateException.class, () -> limiter.peek(k, 1), "peek after close");
        assertThrows(IllegalStateException.class, () -> limiter.reserve(k, 1), "reserve after close");
        assertThrows(
                IllegalStateException.class,
                () -> RateLimiter.tryAcquireAll(Acquisition.of(other, k), Acquisition.of(limiter, k)),
                "a joint request after close");
        limiter.close();
        assertEquals(4, other.peek(j, 1).remaining(), "the other limiter goes on");
        return new WeakReference<>(limiter);
    }

    /** Polls the garbage collector until {@code ref} is cleared: nothing strong refers to it any more. */
    private static void awaitCollected(WeakReference<?> ref) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (ref.get() != null) {
            assertTrue(System.nanoTime() < deadline, "the closed limiter is still referred to after 30 s of GC");
            System.gc();
            byte[][] garbage = new byte[64][];
            for (int g = 0; g < garbage.length; g++) {
                garbage[g] = new byte[16 * 1024];
            }
        }
        assertNull(ref.get());
    }

    // ---- listeners -----------------------------------------------------------------------------------------------

    /**
     * Two instances run the same requests on keys of their own: one with a listener that throws from every method
     * on its synchronized store and on each limiter, the other with none. Single requests, reservations, joint
     * requests, a flush that fails and one that succeeds: every decision is the same, and so is every count.
     */
    @Test
    void aThrowingListenerChangesNoDecisionAndNoCount() {
        ThrowingListener throwing = new ThrowingListener();
        Switchable quietCounters = new Switchable();
        Switchable loudCounters = new Switchable();
        SynchronizedStore quiet = instance(quietCounters, RateLimitListener.NONE);
        SynchronizedStore loud = instance(loudCounters, throwing);
        String k = key("listened");
        String q = key("quiet");
        List<Decision> quietDecisions = listenedTraffic(quiet, quietCounters, RateLimitListener.NONE, q);
        List<Decision> loudDecisions = listenedTraffic(loud, loudCounters, throwing, k);
        assertEquals(quietDecisions, loudDecisions, "decisions with and without a throwing listener");
        assertTrue(
                throwing.decisions() > 0 && throwing.failures().size() > 0 && throwing.calls() > 0,
                "the listener was called: " + throwing);
        RateLimiter reader = RateLimiter.builder(Algorithm.SLIDING_TAIL)
                .limit(6, Duration.ofMinutes(1))
                .clock(clock)
                .store(instance())
                .build();
        assertEquals(record(reader, q).total(), record(reader, k).total(), "the stored count");
        assertEquals(6, record(reader, k).total(), "the stored count");
        assertEquals(quiet.stats(), loud.stats(), "what the two stores did");
    }

    private List<Decision> listenedTraffic(
            SynchronizedStore s, Switchable counters, RateLimitListener listener, String k) {
        RateLimiter a = RateLimiter.builder(Algorithm.SLIDING_TAIL)
                .limit(6, Duration.ofMinutes(1))
                .clock(clock)
                .listener(listener)
                .store(s)
                .build();
        RateLimiter b = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(4, Duration.ofMinutes(1))
                .clock(clock)
                .listener(listener)
                .countRejected(true)
                .store(s)
                .build();
        List<Decision> out = new ArrayList<>();
        for (int n = 0; n < 3; n++) {
            out.add(a.tryAcquire(k));
        }
        Reservation r = a.reserve(k, 2);
        out.add(r.decision());
        out.add(a.peek(k, 1));
        for (int n = 0; n < 3; n++) {
            out.addAll(RateLimiter.tryAcquireAll(Acquisition.of(a, k), Acquisition.of(b, k, 2))
                    .decisions());
        }
        counters.down = true;
        assertFalse(s.flush(), "the flush while the counter store is down");
        counters.down = false;
        assertTrue(s.flush());
        assertTrue(s.refresh());
        out.add(a.peek(k, 1));
        out.add(b.peek(k, 1));
        return out;
    }
}
