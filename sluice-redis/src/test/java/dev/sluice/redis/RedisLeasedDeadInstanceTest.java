package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.lease.LeasedStore;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.SharedStoreOptions;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.FreshJvm;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.RedisServers;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An instance that dies holding a slice, as a real process on a real Redis: a JVM of its own ({@link LeasedHolder})
 * takes slices of a key limited to {@value #LIMIT} per 3 s (a fixed window), says how much it admitted and holds, and
 * is killed with {@code SIGKILL}: no close, no give-back. Two instances in the test's JVM then flood the key:
 *
 * <ul>
 *   <li>in the dead process's window they admit exactly the limit less what it admitted and what it holds, and are
 *       refused the rest (never by the failure policy), and Redis counts exactly the limit;</li>
 *   <li>in a later window, once the dead slice no longer counts, they admit the whole limit, exactly, with nothing
 *       done by anyone about the dead slice.</li>
 * </ul>
 *
 * <p>The processes share no clock but the wall clock. The test's limiters read a {@link ManualClock} that the test
 * sets to the wall clock before every request, so it knows the window of every decision; the dead process takes its
 * slices at one instant, early in a window. A window is never assumed to last long enough: if it ends before the test
 * has flooded the key in it (a loaded machine stalled it for seconds), the attempt shows nothing and is made again on a
 * new key, up to {@value #ATTEMPTS} times; what is asserted of a window holds in every attempt. The later window is
 * waited for, bounded by {@link Await#GENEROUS}.
 */
class RedisLeasedDeadInstanceTest {

    private static final long LIMIT = 20;
    private static final Duration WINDOW = Duration.ofSeconds(3);
    private static final long W = WINDOW.toNanos();
    /** The dead process's requests: slices of 1, 2, 4 and 8 (15 granted), 9 used, so it dies holding 6 today. */
    private static final int DEAD_REQUESTS = 9;

    private static final int ATTEMPTS = 5;

    private final String run = UUID.randomUUID().toString().substring(0, 8);
    private final ManualClock clock = new ManualClock(Instant.now());
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : opened) {
            c.close();
        }
    }

    @Test
    void aProcessKilledHoldingASliceBlocksTheOthersOnlyUntilItsWindowEnds() {
        long start = System.nanoTime();
        List<RateLimiter> alive = List.of(instance(), instance());
        RedisCounterStore reader = counterStore();
        for (RateLimiter l : alive) {
            l.peek("warm-up:" + run, 1); // reads once, so the flood does not wait for class loading
        }
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            String key = "leased-dead:" + run + ":" + attempt;
            FreshJvm jvm = FreshJvm.start(
                    LeasedHolder.class,
                    RedisServers.shared().uri(),
                    key,
                    Long.toString(LIMIT),
                    Long.toString(WINDOW.toMillis()),
                    Integer.toString(DEAD_REQUESTS));
            String line;
            try {
                line = jvm.awaitLine("holding ", Await.GENEROUS);
            } finally {
                jvm.kill(Await.GENEROUS);
            }
            long reported = System.nanoTime();
            long deadFrame = field(line, "frame");
            long deadAdmitted = field(line, "admitted");
            long deadHeld = field(line, "held");
            assertEquals(DEAD_REQUESTS, deadAdmitted, line);
            assertTrue(deadHeld > 0 && deadAdmitted + deadHeld < LIMIT, "a slice held, and room left: " + line);
            long deadSlices = deadAdmitted + deadHeld;

            CounterSnapshot before = stored(reader, alive.get(0), key);
            if (Math.floorDiv(nanos(Instant.now()), W) * W == deadFrame) {
                assertEquals(
                        Map.of(deadFrame, deadSlices),
                        before.counters(),
                        "Redis counts what the dead process admitted and what it holds");
            }

            Map<Long, Long> admitted = new TreeMap<>();
            long frame = flood(alive, key, admitted);
            long inDeadFrame = admitted.getOrDefault(deadFrame, 0L);
            assertTrue(
                    inDeadFrame <= LIMIT - deadSlices,
                    "admitted " + inDeadFrame + " in the dead process's window, which it holds " + deadSlices + " of");
            if (frame != deadFrame) {
                System.out.println("attempt " + attempt + ": the dead process's window ended before the flood did, "
                        + "admitted in it " + inDeadFrame + "; again on a new key");
                continue;
            }
            assertEquals(
                    LIMIT - deadSlices,
                    inDeadFrame,
                    "the limit less the " + deadAdmitted + " the dead process admitted and the " + deadHeld
                            + " it holds");
            assertEquals(
                    LIMIT,
                    stored(reader, alive.get(0), key).counters().get(deadFrame),
                    "Redis counts the limit in the dead process's window");

            Await.until("the whole limit admitted in a window after the dead process's", Await.GENEROUS, () -> {
                flood(alive, key, admitted);
                admitted.forEach((f, n) -> assertTrue(n <= LIMIT, "admitted " + n + " in the window at " + f));
                assertTrue(
                        admitted.getOrDefault(deadFrame, 0L) <= LIMIT - deadSlices, "in the dead window: " + admitted);
                return admitted.entrySet().stream().anyMatch(e -> e.getKey() > deadFrame && e.getValue() == LIMIT);
            });
            System.out.println("dead process holding " + deadHeld + " (admitted " + deadAdmitted + "), attempt "
                    + attempt + "; admitted per window by the two live instances: " + admitted + "; reported after "
                    + (reported - start) / 1_000_000 + " ms, done after " + (System.nanoTime() - start) / 1_000_000
                    + " ms");
            return;
        }
        fail("in none of " + ATTEMPTS + " attempts did the test flood the key within the dead process's window: "
                + "the machine is too slow for a " + WINDOW.toSeconds() + " s window");
    }

    /**
     * Requests the key on the instances in turn, the clock set to the wall clock before each, until every instance has
     * been refused in one window (at most {@code 4 * LIMIT} requests); adds what was admitted to {@code admitted}, per
     * window. Returns the window of the last request.
     */
    private long flood(List<RateLimiter> alive, String key, Map<Long, Long> admitted) {
        boolean[] refused = new boolean[alive.size()];
        int left = alive.size();
        long frame = Long.MIN_VALUE;
        for (int r = 0; r < 4 * LIMIT && left > 0; r++) {
            clock.set(Instant.now());
            long now = Math.floorDiv(alive.get(0).config().clockNanos(), W) * W;
            if (now != frame) {
                frame = now;
                Arrays.fill(refused, false);
                left = alive.size();
            }
            int i = r % alive.size();
            if (refused[i]) {
                continue;
            }
            Decision d = alive.get(i).tryAcquire(key);
            assertFalse(d.failed(), "a decision of the failure policy: " + d);
            if (d.allowed()) {
                admitted.merge(frame, 1L, Long::sum);
            } else {
                refused[i] = true;
                left--;
            }
        }
        return frame;
    }

    private RateLimiter instance() {
        LeasedStore store = LeasedStore.builder(counterStore()).manualRounds().build();
        opened.add(store);
        return RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(LIMIT, WINDOW)
                .clock(clock)
                .store(store)
                .build();
    }

    private RedisCounterStore counterStore() {
        RedisCounterStore store = RedisStore.counterStoreBuilder(Servers.client())
                .timeout(Servers.PATIENCE)
                .build();
        opened.add(store);
        Await.succeeds(
                "a read answered by Redis", Await.GENEROUS, () -> store.load(List.of(new CounterKey("probe", run))));
        return store;
    }

    private static CounterSnapshot stored(RedisCounterStore reader, RateLimiter limiter, String key) {
        return reader.load(List.of(new CounterKey(SharedStoreOptions.shape(limiter.config()), key)))
                .get(0);
    }

    private static long nanos(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    private static long field(String line, String name) {
        for (String part : line.split(" ")) {
            if (part.startsWith(name + "=")) {
                return Long.parseLong(part.substring(name.length() + 1));
            }
        }
        throw new AssertionError("no " + name + " in '" + line + "'");
    }
}
