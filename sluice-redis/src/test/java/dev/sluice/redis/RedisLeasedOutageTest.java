package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailurePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.SluiceException;
import dev.sluice.lease.LeasedStore;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Leased mode through an outage of a real Redis: the server is killed while two instances hold slices of a key
 * limited to {@value #LIMIT} an hour, then restarted on the same port.
 *
 * <ul>
 *   <li>While it is down, each instance admits what its slice still covers, with no call to the store; a request
 *       beyond it gets the failure policy: {@code FAIL_CLOSED} (the default) refuses it with {@code failed()} true and
 *       a retry after one round interval; only the first such request calls the store, and no request after it does;
 *       {@code FAIL_OPEN} admits, {@code THROW} throws a {@link SluiceException}. Every call ends within the store's
 *       timeout (here {@value #TIMEOUT_SECONDS} s, bounded by the test at {@link #BOUND}: a call left to the driver
 *       would wait its 60 s); the round fails.</li>
 *   <li>Once the server is back the round reaches it again (waited for, bounded by {@link Await#GENEROUS}), claims
 *       resume, and the instances admit exactly the limit over the whole run, outage included: Redis, persisting every
 *       write ({@code appendfsync always}), counts what was admitted plus the slices held at every step, never more
 *       than the limit, and exactly what was admitted once the instances close.</li>
 * </ul>
 *
 * <p>The limiters read a {@link ManualClock} that never moves (an hour-long window that no real time can turn) and the
 * rounds are run by hand ({@link LeasedStore.Builder#manualRounds()}), so every count is exact. Each algorithm runs on a
 * server of its own.
 *
 * <p>Two more tests: the same kill with traffic running, claims and rounds cut off in flight; and what the first relies
 * on, a Redis that keeps its records: one that comes back empty has forgotten the window, and the limit is admitted
 * again on top of what was.
 */
class RedisLeasedOutageTest {

    private static final long LIMIT = 100;
    private static final long TRAFFIC_LIMIT = 1000;
    private static final long TIMEOUT_SECONDS = 2;
    private static final Duration TIMEOUT = Duration.ofSeconds(TIMEOUT_SECONDS);
    /** The store's timeout plus room for a loaded machine; a call that outlives it was not ended by the store. */
    private static final Duration BOUND = TIMEOUT.plusSeconds(10);

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final ManualClock clock =
            new ManualClock(Instant.now().truncatedTo(ChronoUnit.HOURS).plus(70, ChronoUnit.MINUTES));
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int j = opened.size() - 1; j >= 0; j--) {
            opened.get(j).close();
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_TAIL"})
    void throughAKilledRedisTheSlicesHeldAreSpentThenThePolicyAnswersAndAfterARestartTheLimitHolds(
            Algorithm algorithm) {
        RedisServer server = redis("--appendonly", "yes", "--appendfsync", "always");
        RedisClient client = client(server);
        RedisCounterStore reader = counterStore(client);

        String key = "outage:" + run;
        LeasedStore a = leased(client, FailurePolicy.FAIL_CLOSED);
        LeasedStore b = leased(client, FailurePolicy.FAIL_CLOSED);
        RateLimiter atA = limiter(a, algorithm);
        RateLimiter atB = limiter(b, algorithm);
        String other = "outage-policies:" + run;
        LeasedStore open = leased(client, FailurePolicy.FAIL_OPEN);
        LeasedStore throwing = leased(client, FailurePolicy.THROW);
        RateLimiter atOpen = limiter(open, algorithm);
        RateLimiter atThrowing = limiter(throwing, algorithm);

        long admitted = admitted(atA, key, 10) + admitted(atB, key, 6);
        assertEquals(16, admitted);
        assertEquals(5, a.unusedPermits(), "slices of 1, 2, 4 and 8; 10 used");
        assertEquals(1, b.unusedPermits(), "slices of 1, 2 and 4; 6 used");
        assertEquals(admitted + 6, stored(reader, atA, key));
        assertTrue(atOpen.tryAcquire(other).allowed());
        assertTrue(atThrowing.tryAcquire(other).allowed());
        assertEquals(0, open.unusedPermits() + throwing.unusedPermits(), "a slice of 1 each, used");

        server.stop();

        long callsA = a.stats().storeCalls();
        assertEquals(5, admitted(atA, key, 5), "what A's slice covers, admitted in the outage");
        admitted += 5;
        assertEquals(callsA, a.stats().storeCalls(), "without a call");
        Decision refused = bounded(() -> atA.tryAcquire(key));
        assertFalse(refused.allowed());
        assertTrue(refused.failed(), "the failure policy's answer: " + refused);
        assertEquals(a.interval(), refused.retryAfter(), "retry after one round interval");
        assertEquals(callsA + 1, a.stats().storeCalls(), "one claim found the store down");
        for (int j = 0; j < 5; j++) {
            Decision d = atA.tryAcquire(key);
            assertFalse(d.allowed());
            assertTrue(d.failed());
        }
        assertEquals(callsA + 1, a.stats().storeCalls(), "no request waits for a store known to be down");

        long callsB = b.stats().storeCalls();
        assertEquals(1, admitted(atB, key, 1), "what B's slice covers");
        admitted += 1;
        assertEquals(callsB, b.stats().storeCalls());
        Decision refusedAtB = bounded(() -> atB.tryAcquire(key));
        assertTrue(!refusedAtB.allowed() && refusedAtB.failed(), "B: " + refusedAtB);

        Decision openAnswer = bounded(() -> atOpen.tryAcquire(other));
        assertTrue(openAnswer.allowed() && openAnswer.failed(), "FAIL_OPEN: " + openAnswer);
        SluiceException thrown = assertThrows(SluiceException.class, () -> bounded(() -> atThrowing.tryAcquire(other)));
        assertTrue(thrown.getMessage().contains(other), thrown.getMessage());

        assertFalse(bounded(a::refresh), "a round in the outage");
        assertFalse(bounded(b::refresh), "a round in the outage");
        assertEquals(0, a.unusedPermits() + b.unusedPermits());

        server.restart();

        Await.until("A's round reaching the restarted Redis", Await.GENEROUS, a::refresh);
        Await.until("B's round reaching the restarted Redis", Await.GENEROUS, b::refresh);
        awaitAnswer(reader);
        assertEquals(admitted, stored(reader, atA, key), "Redis kept every slice through the restart");
        long before = admitted;
        for (int r = 0; r < 4 * LIMIT; r++) {
            RateLimiter at = r % 2 == 0 ? atA : atB;
            Decision d = at.tryAcquire(key);
            assertFalse(d.failed(), "after the restart, request " + r + ": " + d);
            if (d.allowed()) {
                admitted++;
            }
            long stored = stored(reader, atA, key);
            assertTrue(stored <= LIMIT, "Redis counts " + stored);
            assertEquals(admitted + a.unusedPermits() + b.unusedPermits(), stored, "after request " + r);
        }
        assertTrue(admitted > before, "claims resumed");
        assertEquals(LIMIT, admitted, "the whole run, outage included, admits exactly the limit");
        atA.close();
        atB.close();
        assertEquals(LIMIT, stored(reader, atA, key), "once the instances close, Redis counts what was admitted");

        Await.until("THROW's round reaching the restarted Redis", Await.GENEROUS, throwing::refresh);
        assertTrue(atThrowing.tryAcquire(other).allowed(), "THROW answers again once the store does");
    }

    /**
     * What the test above relies on: a Redis that comes back empty (no persistence, as a cache is often run) has
     * forgotten the slices and what was admitted. The instances spend the slices they still hold, now counted nowhere,
     * and then claim the whole limit again in the same window: 122 admitted in the hour for a limit of 100 (16 before
     * the outage, the 6 held, 100 after it), while Redis counts 100. The limit holds through a restart only if the
     * store keeps its records.
     */
    @Test
    void aRedisThatComesBackEmptyHasForgottenTheWindowAndTheLimitIsAdmittedAgain() {
        RedisServer server = redis(); // no persistence: a restart loses every record
        RedisClient client = client(server);
        RedisCounterStore reader = counterStore(client);
        RedisCounterStore countersA = counterStore(client);
        RedisCounterStore countersB = counterStore(client);
        String key = "outage-empty:" + run;
        LeasedStore a = leased(countersA, FailurePolicy.FAIL_CLOSED);
        LeasedStore b = leased(countersB, FailurePolicy.FAIL_CLOSED);
        RateLimiter atA = limiter(a, Algorithm.FIXED_WINDOW);
        RateLimiter atB = limiter(b, Algorithm.FIXED_WINDOW);
        long admitted = admitted(atA, key, 10) + admitted(atB, key, 6);
        assertEquals(22, stored(reader, atA, key), "16 admitted, 5 and 1 held");

        server.stop();
        server.restart();
        for (RedisCounterStore s : List.of(reader, countersA, countersB)) {
            awaitAnswer(s);
        }
        assertEquals(0, stored(reader, atA, key), "the restarted Redis has no record");

        for (int r = 0; r < 4 * LIMIT; r++) {
            Decision d = (r % 2 == 0 ? atA : atB).tryAcquire(key);
            assertFalse(d.failed(), "request " + r + ": " + d);
            if (d.allowed()) {
                admitted++;
            }
        }
        assertEquals(LIMIT, stored(reader, atA, key));
        assertEquals(16 + 6 + LIMIT, admitted, "in one hour-long window");
    }

    /**
     * The same outage with traffic running: two instances with their background rounds (every 20 ms), two threads
     * each, request a key limited to {@value #TRAFFIC_LIMIT} an hour while {@code redis-server} is killed and later restarted,
     * so claims and rounds are cut off in flight. Every request is answered within {@link #BOUND}; while the server is
     * down the instances keep answering, and what they admit beyond their slices is nothing ({@code FAIL_CLOSED} never
     * admits); once it is back they claim again until Redis counts the limit. Over the whole run they admit at most
     * the limit; once they close Redis counts at least what they admitted (more only by a claim whose answer the kill
     * lost: its slice lapses unused), and a new instance gets exactly what it has left, so that Redis counts the
     * limit and no more.
     */
    @Test
    void aKillWithTrafficRunningNeverLetsTheRunPassTheLimit() throws Exception {
        RedisServer server = redis("--appendonly", "yes", "--appendfsync", "always");
        RedisClient client = client(server);
        RedisCounterStore reader = counterStore(client);
        String key = "outage-traffic:" + run;
        List<LeasedStore> stores = new ArrayList<>();
        List<RateLimiter> limiters = new ArrayList<>();
        for (int j = 0; j < 2; j++) {
            RedisCounterStore counters = counterStore(client);
            LeasedStore store = LeasedStore.builder(counters)
                    .interval(Duration.ofMillis(20))
                    .build();
            opened.add(store);
            stores.add(store);
            limiters.add(limiter(store, Algorithm.FIXED_WINDOW, TRAFFIC_LIMIT));
        }

        Semaphore requests = new Semaphore(0); // a permit per request the workers may make
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch hundredAdmitted = new CountDownLatch(1);
        LongAdder admitted = new LongAdder();
        LongAdder failed = new LongAdder();
        LongAdder refused = new LongAdder();
        LongAdder admittedByPolicy = new LongAdder();
        AtomicLong slowest = new AtomicLong();
        ExecutorService workers = Executors.newFixedThreadPool(4);
        List<Future<?>> running = new ArrayList<>();
        long atKill;
        long inOutage;
        try {
            for (int t = 0; t < 4; t++) {
                RateLimiter limiter = limiters.get(t % 2);
                running.add(workers.submit(() -> {
                    while (!stop.get()) {
                        if (!requests.tryAcquire(10, TimeUnit.MILLISECONDS)) {
                            continue;
                        }
                        long start = System.nanoTime();
                        Decision d = limiter.tryAcquire(key);
                        slowest.accumulateAndGet(System.nanoTime() - start, Math::max);
                        if (d.allowed()) {
                            admitted.increment();
                            if (admitted.sum() >= 100) {
                                hundredAdmitted.countDown();
                            }
                            if (d.failed()) {
                                admittedByPolicy.increment();
                            }
                        } else if (d.failed()) {
                            failed.increment();
                        } else {
                            refused.increment();
                        }
                    }
                    return null;
                }));
            }

            requests.release(400);
            assertTrue(hundredAdmitted.await(Await.GENEROUS.toSeconds(), TimeUnit.SECONDS), "100 admitted");
            atKill = admitted.sum();
            server.stop(); // the workers still have about 300 requests to make
            Await.until("the slices held spent, and requests refused by the failure policy", Await.GENEROUS, () -> {
                if (requests.availablePermits() == 0) {
                    requests.release(100);
                }
                return failed.sum() >= 100;
            });
            inOutage = admitted.sum() - atKill;

            server.restart();
            Await.until("Redis counting the limit after the restart", Await.GENEROUS, () -> {
                if (requests.availablePermits() == 0) {
                    requests.release(100);
                }
                try {
                    return stored(reader, limiters.get(0), key) == TRAFFIC_LIMIT;
                } catch (SluiceException notYet) {
                    return false; // the reader has not reconnected yet
                }
            });
        } finally {
            stop.set(true);
            workers.shutdown();
        }
        for (Future<?> f : running) {
            f.get(Await.GENEROUS.toSeconds(), TimeUnit.SECONDS);
        }
        assertEquals(0, admittedByPolicy.sum(), "FAIL_CLOSED admits nothing by the policy");
        assertTrue(
                slowest.get() <= BOUND.toNanos(),
                "the slowest request took " + slowest.get() / 1_000_000 + " ms, past " + BOUND);
        assertTrue(admitted.sum() <= TRAFFIC_LIMIT, "admitted " + admitted.sum());
        stores.forEach(LeasedStore::close);
        long stored = stored(reader, limiters.get(0), key);
        assertTrue(stored >= admitted.sum(), "Redis counts " + stored + ", admitted " + admitted);
        RedisCounterStore lateCounters = counterStore(client);
        RateLimiter late =
                limiter(leased(lateCounters, FailurePolicy.FAIL_CLOSED), Algorithm.FIXED_WINDOW, TRAFFIC_LIMIT);
        long lateAdmitted = admitted(late, key, (int) TRAFFIC_LIMIT);
        assertEquals(TRAFFIC_LIMIT - stored, lateAdmitted, "a new instance gets what Redis has left");
        late.close();
        assertEquals(TRAFFIC_LIMIT, stored(reader, late, key));
        System.out.println("outage with traffic: " + atKill + " admitted when the kill began, " + inOutage
                + " more by the time 100 were refused by the policy, " + admitted.sum() + " in all, " + failed.sum()
                + " refused by the policy and " + refused.sum() + " by the limit; once the instances closed Redis "
                + "counted " + stored + " (" + (stored - admitted.sum()) + " lapsed by a write whose answer the kill "
                + "lost) and a new instance got the " + lateAdmitted + " left; the slowest request took "
                + slowest.get() / 1_000_000 + " ms");
    }

    /** A Redis server of this test's own, started with {@code args}, stopped after the test. */
    private RedisServer redis(String... args) {
        RedisServer server = RedisServers.start(args);
        opened.add(server);
        return server;
    }

    /** A client of {@code server} with the recommended options, shut down after the test. */
    private RedisClient client(RedisServer server) {
        RedisClient client = RedisClient.create(server.uri());
        client.setOptions(RedisStore.recommendedClientOptions());
        opened.add(client::shutdown);
        return client;
    }

    /** A counter store on {@code client}, once Redis has answered it. */
    private RedisCounterStore counterStore(RedisClient client) {
        RedisCounterStore store =
                RedisStore.counterStoreBuilder(client).timeout(TIMEOUT).build();
        opened.add(store);
        awaitAnswer(store);
        return store;
    }

    private LeasedStore leased(RedisClient client, FailurePolicy policy) {
        return leased(counterStore(client), policy);
    }

    private LeasedStore leased(RedisCounterStore counters, FailurePolicy policy) {
        LeasedStore store = LeasedStore.builder(counters)
                .failurePolicy(policy)
                .manualRounds()
                .build();
        opened.add(store);
        return store;
    }

    private RateLimiter limiter(LeasedStore store, Algorithm algorithm) {
        return limiter(store, algorithm, LIMIT);
    }

    private RateLimiter limiter(LeasedStore store, Algorithm algorithm, long limit) {
        RateLimiterBuilder b =
                RateLimiter.builder(algorithm).limit(limit, Duration.ofHours(1)).clock(clock);
        if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
            b.buckets(60);
        }
        return b.store(store).build();
    }

    /** Waits (bounded) until {@code store} has (re)connected and Redis answers it. */
    private void awaitAnswer(RedisCounterStore store) {
        Await.succeeds(
                "a read answered by Redis", Await.GENEROUS, () -> store.load(List.of(new CounterKey("probe", run))));
    }

    private static long stored(RedisCounterStore reader, RateLimiter limiter, String key) {
        return reader.load(List.of(new CounterKey(SharedStoreOptions.shape(limiter.config()), key)))
                .get(0)
                .total();
    }

    private static long admitted(RateLimiter limiter, String key, int requests) {
        long n = 0;
        for (int j = 0; j < requests; j++) {
            if (limiter.tryAcquire(key).allowed()) {
                n++;
            }
        }
        return n;
    }

    /** {@code call}, failing the test if it has not returned within {@link #BOUND}. */
    private static <T> T bounded(Supplier<T> call) {
        return assertTimeoutPreemptively(BOUND, call::get, "a call outlived the store's timeout");
    }
}
