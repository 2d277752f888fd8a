package dev.sluice.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.TestClock;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The worked example of synchronized mode (docs/sync-mode.md, and the design comment of {@link SynchronizedStore}):
 * instances A and B on one key (and C taking it up at the end), flushes and refreshes by hand, state as {@code g/i} with the version of {@code g},
 * and the store's count and version after every step. Versions come from one sequence 1, 2, 3, ... for
 * readability (by default they are random).
 */
class WorkedExampleTest {

    private static final String KEY = "client:abc";

    private final TestClock clock = new TestClock("2026-01-01T12:00:10Z");
    private final InMemoryCounterStore shared = InMemoryCounterStore.create();
    private final ScriptedCounterStore recorded = new ScriptedCounterStore(shared);
    private final AtomicLong versions = new AtomicLong();

    private SynchronizedStore instance(ScriptedCounterStore store) {
        return SynchronizedStore.builder(store)
                .manualRounds()
                .versions(versions::incrementAndGet)
                .build();
    }

    private RateLimiter limiter(SynchronizedStore store) {
        return RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(10, Duration.ofMinutes(1))
                .clock(clock)
                .store(store)
                .build();
    }

    /** "g/i (version)" of the key at an instance. */
    private static String state(RateLimiter limiter) {
        SynchronizedLimiter.Held h = ((SynchronizedLimiter) limiter).inspect(KEY);
        return h.g() + "/" + h.i() + " (v" + h.version() + ")";
    }

    /** "count (version)" of the key's record in the store. */
    private String store(RateLimiter limiter) {
        CounterSnapshot s = shared.read(new CounterKey(((SynchronizedLimiter) limiter).shape(), KEY));
        return s.total() + " (v" + s.version() + ")";
    }

    private static void assertAllowed(long remaining, Decision d) {
        assertTrue(d.allowed(), d.toString());
        assertEquals(remaining, d.remaining(), d.toString());
    }

    @Test
    void tenStepsTwoInstancesNoLostUpdate() {
        SynchronizedStore a = instance(recorded);
        SynchronizedStore b = instance(new ScriptedCounterStore(shared));
        RateLimiter atA = limiter(a);
        RateLimiter atB = limiter(b);

        // 1. start: both hold the key (a peek consumes nothing), the store has no record
        assertAllowed(10, atA.peek(KEY, 1));
        assertAllowed(10, atB.peek(KEY, 1));
        assertEquals("0/0 (v0)", state(atA));
        assertEquals("0/0 (v0)", state(atB));
        assertEquals("0 (v0)", store(atA));

        // 2. one request at A: counted in i, nothing written
        assertAllowed(9, atA.tryAcquire(KEY));
        assertEquals("0/1 (v0)", state(atA));
        assertEquals("0 (v0)", store(atA));

        // 3. A flushes: creates the record with version 1
        assertTrue(a.flush());
        assertEquals("1/0 (v1)", state(atA));
        assertEquals("1 (v1)", store(atA));

        // 4. B pulls
        assertTrue(b.refresh());
        assertEquals("1/0 (v1)", state(atB));

        // 5. A gets 1 request, B gets 3: each decides on its own g + i
        assertAllowed(8, atA.tryAcquire(KEY));
        assertAllowed(8, atB.tryAcquire(KEY));
        assertAllowed(7, atB.tryAcquire(KEY));
        assertAllowed(6, atB.tryAcquire(KEY));
        assertEquals("1/1 (v1)", state(atA));
        assertEquals("1/3 (v1)", state(atB));
        assertEquals("1 (v1)", store(atA));

        // 6. B flushes g + i = 4 expecting version 1
        assertTrue(b.flush());
        assertEquals("4/0 (v2)", state(atB));
        assertEquals("4 (v2)", store(atA));

        // 7. and 8. A flushes 2 expecting version 1: conflict, nothing written; A re-reads (4/1) and flushes 5.
        // The refused write had drawn version 3, which is never stored.
        List<String> trace = new ArrayList<>();
        recorded.clearCalls();
        recorded.beforeCall(op -> trace.add("A " + state(atA) + " " + op));
        recorded.afterCall(c -> trace.add(c + " -> store " + store(atA)));
        assertTrue(a.flush());
        assertEquals(
                List.of(
                        "A 1/1 (v1) cas",
                                "cas(1)[false] -> store 4 (v2)", // 7. expects v1: refused, the store keeps B's 4
                        "A 1/1 (v1) load", "load(1) -> store 4 (v2)", // 8. re-read ...
                        "A 4/1 (v2) cas", "cas(1)[true] -> store 5 (v4)"), //    ... g = 4 with i = 1 kept: writes 5
                trace);
        assertEquals("5/0 (v4)", state(atA));
        assertEquals("5 (v4)", store(atA));

        // 9. B has not read since: still 4/0
        assertEquals("4/0 (v2)", state(atB));
        assertAllowed(6, atB.peek(KEY, 1));

        // 10. B pulls: 5, every request admitted anywhere, each counted once
        assertTrue(b.refresh());
        assertEquals("5/0 (v4)", state(atB));
        assertAllowed(5, atB.peek(KEY, 1));
        assertEquals("5 (v4)", store(atA));

        assertEquals(1, a.stats().conflicts());
        assertEquals(2, a.stats().writes());
        assertEquals(1 + 4, a.stats().storeCalls()); // the first peek's load; cas; cas, load, cas
        assertEquals(0, b.stats().conflicts());
        assertEquals(1 + 3, b.stats().storeCalls()); // the first peek's load; load; cas; load
        assertFalse(((SynchronizedLimiter) atA).inspect(KEY).doubt());

        // 11. C, a third instance that never held the key: reads the record as it takes the key up, then decides
        ScriptedCounterStore toC = new ScriptedCounterStore(shared);
        RateLimiter atC = limiter(instance(toC));
        assertAllowed(4, atC.tryAcquire(KEY)); // on 5/0 (v4); on 0/0 it would have been 9
        assertEquals("5/1 (v4)", state(atC));
        assertEquals("[load(1)]", toC.calls().toString());
    }
}
