package dev.sluice.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.Reservation;
import dev.sluice.lease.LeaseStats;
import dev.sluice.lease.LeasedStore;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.SharedStoreOptions;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The leased mode contract: what leased mode ({@link LeasedStore}) does on every {@link CounterStore}. A store's test
 * extends this class, implements {@link #counterStore()} and passes unchanged.
 *
 * <ul>
 *   <li>ten instances, each with a counter store (a client) of its own and three threads, random keys, costs,
 *       reservations and cancels, rounds running while requests do, over many rounds: after every round the store's
 *       count of every key is within the limit, and it equals what was admitted plus what the instances hold unused;
 *       once they close, exactly what was admitted;</li>
 *   <li>a key new to all ten instances flooded by all their threads at once: exactly the limit admitted;</li>
 *   <li>an instance that dies holding a slice: the others are refused what it holds until its frame stops counting,
 *       and then admit the whole limit;</li>
 *   <li>a round claims the next frame's slice ahead: the store keeps it as a later frame, and requests in that frame
 *       make no claim of their own;</li>
 *   <li>joint requests over two limits from ten instances: every key within its limit, and the store holds exactly
 *       what was admitted once the instances close.</li>
 * </ul>
 *
 * <p>Time comes from {@link #clock}, moved by hand, starting at the next whole hour of the real time so that every
 * record's expiry lies in the real future. Every test uses keys of its own.
 */
public abstract class LeasedContract {

    private static final int INSTANCES = 10;

    /** The only clock of every limiter this suite builds; starts at the next whole hour. */
    protected final ManualClock clock =
            new ManualClock(Instant.now().truncatedTo(ChronoUnit.HOURS).plus(1, ChronoUnit.HOURS));

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicLong keys = new AtomicLong();
    private final List<LeasedStore> built = new ArrayList<>();

    /** For a store's test class to extend. */
    protected LeasedContract() {}

    /**
     * The counter store under test. Called once per simulated instance: a store may return a new instance (a new
     * client) each time, as long as all share the same records.
     */
    protected abstract CounterStore counterStore();

    @AfterEach
    void closeInstances() {
        built.forEach(LeasedStore::close);
        built.clear();
    }

    /** A new instance: a leased store on a new {@link #counterStore()}, its rounds run by hand. */
    protected final LeasedStore instance() {
        LeasedStore s =
                LeasedStore.builder(counterStore()).manualRounds().batchSize(8).build();
        built.add(s);
        return s;
    }

    private String key(String name) {
        return "leased:" + run + ":" + keys.incrementAndGet() + ":" + name;
    }

    private RateLimiter limiter(LeasedStore store, Algorithm algorithm, long limit, Duration window) {
        RateLimiterBuilder b =
                RateLimiter.builder(algorithm).limit(limit, window).clock(clock);
        if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
            b.buckets(60);
        }
        return b.store(store).build();
    }

    private long stored(CounterStore reader, RateLimiter limiter, String key) {
        CounterSnapshot s = reader.load(List.of(new CounterKey(SharedStoreOptions.shape(limiter.config()), key)))
                .get(0);
        return s.total();
    }

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void theStoreNeverCountsOverTheLimitAndHoldsWhatWasAdmittedPlusWhatIsHeld(Algorithm algorithm) throws Exception {
        int threads = 3;
        int rounds = 16;
        int requests = 30;
        int keyCount = 12;
        long limit = 60;
        List<LeasedStore> stores = new ArrayList<>();
        List<RateLimiter> limiters = new ArrayList<>();
        for (int j = 0; j < INSTANCES; j++) {
            LeasedStore s = instance();
            stores.add(s);
            limiters.add(limiter(s, algorithm, limit, Duration.ofHours(1)));
        }
        String[] names = new String[keyCount];
        for (int j = 0; j < keyCount; j++) {
            names[j] = key("k" + j);
        }
        AtomicLongArray admitted = new AtomicLongArray(keyCount);
        CounterStore reader = counterStore();
        rounds(
                stores,
                rounds,
                threads,
                new Random(11),
                (j, random) -> traffic(limiters.get(j), names, requests, random, admitted),
                (round, unused) -> {
                    long total = 0;
                    long sumAdmitted = 0;
                    StringBuilder perKey = new StringBuilder();
                    for (int k = 0; k < keyCount; k++) {
                        long stored = stored(reader, limiters.get(0), names[k]);
                        assertTrue(stored <= limit, "key " + k + " counts " + stored + " after round " + round);
                        total += stored;
                        sumAdmitted += admitted.get(k);
                        perKey.append(k == 0 ? "" : ", ")
                                .append(stored)
                                .append('/')
                                .append(admitted.get(k));
                    }
                    assertEquals(
                            total,
                            sumAdmitted + unused,
                            "store = admitted + unused after round " + round + " (" + unused
                                    + " unused; stored/admitted" + " per key: " + perKey + "; " + calls(stores) + ")");
                });
        long conflicts = stores.stream().mapToLong(s -> s.stats().conflicts()).sum();
        assertTrue(conflicts > 0, "the test must provoke conflicts");
        for (int k = 0; k < keyCount; k++) {
            assertEquals(admitted.get(k), stored(reader, limiters.get(0), names[k]), "key " + k + " once all closed");
        }
        assertEquals(limit, admitted.get(0), "a hot key, asked for far more than its limit, is admitted the limit");
    }

    /**
     * Joint requests ({@link RateLimiter#tryAcquireAll}) over two limits of each instance, per client (60 an hour, 3
     * clients) and per user (20 an hour, 6 users), from ten instances with three threads each, rounds running while
     * requests do: after every round every key's stored count is within its limit and the store holds what was
     * admitted plus what the instances hold unused; once they close, exactly what was admitted, so a refused joint
     * request took nothing from either limit.
     */
    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void jointRequestsPassBothLimitsOrTakeFromNeither(Algorithm algorithm) throws Exception {
        int threads = 3;
        int rounds = 8;
        int requests = 20;
        List<LeasedStore> stores = new ArrayList<>();
        List<RateLimiter> perClient = new ArrayList<>();
        List<RateLimiter> perUser = new ArrayList<>();
        for (int j = 0; j < INSTANCES; j++) {
            LeasedStore s = instance();
            stores.add(s);
            perClient.add(limiter(s, algorithm, 60, Duration.ofHours(1)));
            perUser.add(limiter(s, algorithm, 20, Duration.ofHours(1)));
        }
        String[] clients = {key("client0"), key("client1"), key("client2")};
        String[] users = new String[6];
        for (int u = 0; u < users.length; u++) {
            users[u] = key("user" + u);
        }
        AtomicLongArray byClient = new AtomicLongArray(clients.length);
        AtomicLongArray byUser = new AtomicLongArray(users.length);
        AtomicLong refused = new AtomicLong();
        CounterStore reader = counterStore();
        Traffic joint = (j, random) -> {
            for (int r = 0; r < requests; r++) {
                int u = random.nextInt(users.length);
                int c = u % clients.length; // each user belongs to one client
                long cost = 1L + random.nextInt(2);
                if (RateLimiter.tryAcquireAll(
                                Acquisition.of(perClient.get(j), clients[c], cost),
                                Acquisition.of(perUser.get(j), users[u], cost))
                        .allowed()) {
                    byClient.addAndGet(c, cost);
                    byUser.addAndGet(u, cost);
                } else {
                    refused.incrementAndGet();
                }
            }
        };
        rounds(stores, rounds, threads, new Random(13), joint, (round, unused) -> {
            long total = 0;
            long sumAdmitted = 0;
            for (int c = 0; c < clients.length; c++) {
                long stored = stored(reader, perClient.get(0), clients[c]);
                assertTrue(stored <= 60, "client " + c + " counts " + stored + " after round " + round);
                total += stored;
                sumAdmitted += byClient.get(c);
            }
            for (int u = 0; u < users.length; u++) {
                long stored = stored(reader, perUser.get(0), users[u]);
                assertTrue(stored <= 20, "user " + u + " counts " + stored + " after round " + round);
                total += stored;
                sumAdmitted += byUser.get(u);
            }
            assertEquals(total, sumAdmitted + unused, "store = admitted + unused after round " + round);
        });
        assertTrue(refused.get() > 0, "the users' limits must refuse requests");
        for (int c = 0; c < clients.length; c++) {
            assertEquals(byClient.get(c), stored(reader, perClient.get(0), clients[c]), "client " + c + " once closed");
        }
        for (int u = 0; u < users.length; u++) {
            assertEquals(byUser.get(u), stored(reader, perUser.get(0), users[u]), "user " + u + " once closed");
        }
    }

    /**
     * What the instances' calls to the store met so far: failed calls (whose writes' outcomes were settled by a later
     * read) and conflicts, the two paths a count could take on its way to the store besides a plain write.
     */
    private static String calls(List<LeasedStore> stores) {
        long failures = 0;
        long conflicts = 0;
        long calls = 0;
        for (LeasedStore s : stores) {
            LeaseStats stats = s.stats();
            failures += stats.storeFailures();
            conflicts += stats.conflicts();
            calls += stats.storeCalls();
        }
        return calls + " store calls, " + failures + " failed, " + conflicts + " conflicts";
    }

    private static void traffic(
            RateLimiter limiter, String[] names, int requests, Random random, AtomicLongArray admitted) {
        List<Reservation> held = new ArrayList<>();
        List<Integer> heldKeys = new ArrayList<>();
        List<Long> costs = new ArrayList<>();
        for (int r = 0; r < requests; r++) {
            int k = random.nextInt(2) == 0 ? random.nextInt(3) : random.nextInt(names.length);
            long cost = 1L + random.nextInt(3);
            int op = random.nextInt(10);
            if (op < 8) {
                if (limiter.tryAcquire(names[k], cost).allowed()) {
                    admitted.addAndGet(k, cost);
                }
            } else if (op < 9 || held.isEmpty()) {
                Reservation res = limiter.reserve(names[k], cost);
                if (res.decision().allowed()) {
                    admitted.addAndGet(k, cost);
                    held.add(res);
                    heldKeys.add(k);
                    costs.add(cost);
                }
            } else {
                int j = random.nextInt(held.size());
                Reservation res = held.remove(j);
                int hk = heldKeys.remove(j);
                if (res.cancel()) {
                    admitted.addAndGet(hk, -costs.remove(j));
                } else {
                    costs.remove(j);
                }
            }
        }
    }

    /** One thread's requests at instance {@code instance} in one round, drawing from {@code random}. */
    private interface Traffic {
        void run(int instance, Random random);
    }

    /** What a test checks after a round, given the permits the instances hold unused. */
    private interface AfterRound {
        void check(int round, long unused);
    }

    /**
     * Runs {@code rounds} rounds over {@code stores}: in each, {@code threads} threads per instance run
     * {@code traffic} while the instance's round runs beside them; then {@code check}, and the clock moves 20 s. Then
     * every instance closes, having had no store failure.
     */
    private void rounds(
            List<LeasedStore> stores, int rounds, int threads, Random seeds, Traffic traffic, AfterRound check)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(stores.size() * (threads + 1));
        try {
            for (int round = 0; round < rounds; round++) {
                List<Callable<Void>> tasks = new ArrayList<>();
                for (int j = 0; j < stores.size(); j++) {
                    int instance = j;
                    for (int t = 0; t < threads; t++) {
                        Random random = new Random(seeds.nextLong());
                        tasks.add(() -> {
                            traffic.run(instance, random);
                            return null;
                        });
                    }
                    LeasedStore s = stores.get(j);
                    tasks.add(() -> {
                        s.refresh();
                        return null;
                    });
                }
                runAll(pool, tasks);
                long unused = 0;
                for (LeasedStore s : stores) {
                    unused += s.unusedPermits();
                }
                check.check(round, unused);
                clock.advance(Duration.ofSeconds(20));
            }
        } finally {
            pool.shutdownNow();
        }
        for (LeasedStore s : stores) {
            assertEquals(0, s.stats().storeFailures(), "store failures at " + s);
            s.close();
        }
    }

    private static void runAll(ExecutorService pool, List<Callable<Void>> tasks) throws Exception {
        for (Future<Void> f : pool.invokeAll(tasks, 5, TimeUnit.MINUTES)) {
            f.get();
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void aKeyNewToTenInstancesFloodedByAllAtOnceGetsExactlyItsLimit(Algorithm algorithm) throws Exception {
        String k = key("flood");
        long limit = 200;
        List<RateLimiter> limiters = new ArrayList<>();
        for (int j = 0; j < INSTANCES; j++) {
            limiters.add(limiter(instance(), algorithm, limit, Duration.ofHours(24)));
        }
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(INSTANCES * threads);
        try {
            CyclicBarrier start = new CyclicBarrier(INSTANCES * threads);
            List<Future<Long>> results = new ArrayList<>();
            for (RateLimiter limiter : limiters) {
                for (int t = 0; t < threads; t++) {
                    results.add(pool.submit(() -> {
                        start.await();
                        long n = 0;
                        for (int r = 0; r < 25; r++) {
                            if (limiter.tryAcquire(k).allowed()) {
                                n++;
                            }
                        }
                        return n;
                    }));
                }
            }
            long admitted = 0;
            for (Future<Long> f : results) {
                admitted += f.get(5, TimeUnit.MINUTES);
            }
            assertTrue(admitted <= limit, "admitted " + admitted);
            long unused = built.stream().mapToLong(LeasedStore::unusedPermits).sum();
            assertEquals(stored(counterStore(), limiters.get(0), k), admitted + unused);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Instance A claims slices and dies (never closes, never runs a round again). B is refused what A holds until
     * A's frame stops counting: the end of the window for a fixed window, a window after its sub-window began for the
     * sub-window counter, two windows for the sliding tail (whose previous window weighs less and less); then B admits
     * the whole limit, less, for the sub-window counter, its own requests of half a window before, which still count.
     */
    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void anInstanceThatDiesHoldingASliceBlocksTheOthersOnlyUntilItsFrameStopsCounting(Algorithm algorithm) {
        String k = key("dead");
        clock.set(clock.instant().truncatedTo(ChronoUnit.HOURS).plus(Duration.ofMinutes(10)));
        LeasedStore dead = LeasedStore.builder(counterStore()).manualRounds().build(); // never closed: it dies
        RateLimiter atDead = limiter(dead, algorithm, 10, Duration.ofMinutes(1));
        for (int j = 0; j < 4; j++) {
            assertTrue(atDead.tryAcquire(k).allowed());
        }
        assertEquals(3, dead.unusedPermits(), "slices of 1, 2 and 4; 4 used");
        RateLimiter alive = limiter(instance(), algorithm, 10, Duration.ofMinutes(1));
        clock.advance(Duration.ofSeconds(30));
        assertEquals(3, admitted(alive, k, 20), "10 less the 7 the dead instance was granted");
        if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
            // the dead slices' sub-window, :10:00, counts until :11:00; the 3 admitted at :10:30 until :11:30
            clock.advance(Duration.ofSeconds(30).minusMillis(1));
            assertEquals(0, admitted(alive, k, 20), "a millisecond before the dead slices lapse");
            clock.advance(Duration.ofMillis(1));
            assertEquals(7, admitted(alive, k, 20), "the dead slices have lapsed; the 3 of half a window ago count");
            return;
        }
        clock.advance(Duration.ofSeconds(30));
        Duration lapse = algorithm == Algorithm.FIXED_WINDOW ? Duration.ZERO : Duration.ofMinutes(1);
        clock.advance(lapse);
        assertEquals(10, admitted(alive, k, 20), "once the dead slice's frame stops counting, the whole limit");
    }

    /**
     * A round just before a frame starts claims that frame's slice ahead, and the store keeps it as a frame later than
     * the current one: the store counts what was admitted plus what is held. Once the frame has started, requests are
     * admitted from the slice with no claim of their own; closing gives back what is left, so the store then counts
     * exactly what was admitted in the frames that still count.
     */
    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void aRoundClaimsTheNextFrameAheadAndRequestsThereMakeNoClaimOfTheirOwn(Algorithm algorithm) {
        String k = key("ahead");
        Instant turn = clock.instant().truncatedTo(ChronoUnit.HOURS).plus(Duration.ofMinutes(11));
        clock.set(turn.minusMillis(50));
        CounterStore reader = counterStore();
        LeasedStore store = instance(); // a round every 100 ms: the frame of the turn starts before the next round
        RateLimiter limiter = limiter(store, algorithm, 600, Duration.ofMinutes(1));
        assertEquals(10, admitted(limiter, k, 10));
        store.refresh();
        assertEquals(1, store.stats().claimsAhead(), "the round claims the next frame's slice ahead");
        assertEquals(10 + store.unusedPermits(), stored(reader, limiter, k), "admitted plus held");
        assertTrue(store.unusedPermits() >= 10, "a slice of at least the demand, " + store.unusedPermits());

        clock.set(turn.plusMillis(10));
        long claims = store.stats().claims();
        long calls = store.stats().storeCalls();
        assertEquals(10, admitted(limiter, k, 10));
        assertEquals(claims, store.stats().claims(), "no claim on a request");
        assertEquals(calls, store.stats().storeCalls(), "no call on a request");
        store.close();
        assertEquals(algorithm == Algorithm.FIXED_WINDOW ? 10 : 20, stored(reader, limiter, k));
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

    @Test
    void aClosedInstanceGivesBackWhatItHolds() {
        String k = key("close");
        CounterStore reader = counterStore();
        LeasedStore a = instance();
        RateLimiter limiter = limiter(a, Algorithm.FIXED_WINDOW, 10, Duration.ofHours(1));
        for (int j = 0; j < 4; j++) {
            assertTrue(limiter.tryAcquire(k).allowed());
        }
        assertEquals(7, stored(reader, limiter, k));
        a.close();
        assertEquals(4, stored(reader, limiter, k));
    }
}
