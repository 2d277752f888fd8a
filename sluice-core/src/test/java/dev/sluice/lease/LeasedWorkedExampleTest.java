package dev.sluice.lease;

import static dev.sluice.lease.LeaseTests.admitted;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.TestClock;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.SharedStoreOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The worked example of leased mode (docs/leased-mode.md and the design comment of {@link LeasedStore}): instances A
 * and B on one key, a fixed window of 10 a minute, rounds every second run by hand. After every step: each instance's
 * slice as {@code granted(used)}, the store's count, and the calls the instance made.
 */
class LeasedWorkedExampleTest {

    private static final String KEY = "client:abc";

    private final TestClock clock = new TestClock("2026-01-01T12:00:10Z");
    private final InMemoryCounterStore shared = InMemoryCounterStore.create();
    private final FlakyCounterStore toA = new FlakyCounterStore(shared);
    private final FlakyCounterStore toB = new FlakyCounterStore(shared);
    private final LeasedStore a = instance(toA);
    private final LeasedStore b = instance(toB);
    private final RateLimiter atA = limiter(a);
    private final RateLimiter atB = limiter(b);

    private static LeasedStore instance(FlakyCounterStore store) {
        return LeasedStore.builder(store)
                .interval(Duration.ofSeconds(1))
                .manualRounds()
                .build();
    }

    private RateLimiter limiter(LeasedStore store) {
        return RateLimiter.builder(Algorithm.FIXED_WINDOW)
                .limit(10, Duration.ofMinutes(1))
                .clock(clock)
                .store(store)
                .build();
    }

    @Test
    void theWorkedExample() {
        // 1. A's first request: A reads the record (there is none) and claims 1, the demand it has seen
        assertEquals(1, admitted(atA, KEY, 1));
        assertState("1(1)", "-", 1);
        assertEquals(List.of("load(1)", "cas(1)[true]"), toA.takeLog());

        // 2. A's second request: its slice is spent; it claims 2 (its demand so far)
        assertEquals(1, admitted(atA, KEY, 1));
        assertState("3(2)", "-", 3);
        assertEquals(List.of("cas(1)[true]"), toA.takeLog());

        // 3. A's third request: from its slice, no call
        assertEquals(1, admitted(atA, KEY, 1));
        assertState("3(3)", "-", 3);
        assertEquals(List.of(), toA.takeLog());

        // 4. a round at both: nothing to give back, no request refused, so no call
        clock.advance(Duration.ofSeconds(1));
        a.refresh();
        b.refresh();
        assertEquals(List.of(), toA.takeLog());
        assertEquals(List.of(), toB.takeLog());

        // 5. B's first 4 requests: B reads 3, claims 1, then 2, then (from its slice) 1, then 4
        assertEquals(4, admitted(atB, KEY, 4));
        assertState("3(3)", "7(4)", 10);
        assertEquals(List.of("load(1)", "cas(1)[true]", "cas(1)[true]", "cas(1)[true]"), toB.takeLog());

        // 6. A's fourth request: A last saw 3, so it claims; its write meets B's (a conflict), it reads 10: no room.
        //    Refused, and starved: no more claims in this frame until the next round
        assertEquals(0, admitted(atA, KEY, 2));
        assertState("3(3)", "7(4)", 10);
        assertEquals(List.of("cas(1)[false]", "load(1)"), toA.takeLog());

        // 7. a round: B keeps its 3 unused (no more than twice its demand of 4 in the interval); A was refused, so its
        //    round reads the record
        clock.advance(Duration.ofSeconds(1));
        b.refresh();
        a.refresh();
        assertEquals(List.of(), toB.takeLog());
        assertEquals(List.of("load(1)"), toA.takeLog());

        // 8. another round: B had no request, so it gives its 3 unused back; A had no request either
        clock.advance(Duration.ofSeconds(1));
        b.refresh();
        a.refresh();
        assertState("3(3)", "4(4)", 7);
        assertEquals(List.of("cas(1)[true]"), toB.takeLog());
        assertEquals(List.of(), toA.takeLog());

        // 9. A's next request: A last read 10, so it sees no room and refuses without a call ...
        assertEquals(0, admitted(atA, KEY, 1));
        assertEquals(List.of(), toA.takeLog());
        // ... until the next round reads the record again: then A claims the 3 given back
        clock.advance(Duration.ofSeconds(1));
        a.refresh();
        assertEquals(List.of("load(1)"), toA.takeLog());
        assertEquals(3, admitted(atA, KEY, 5));
        assertState("6(6)", "4(4)", 10);
        assertEquals(List.of("cas(1)[true]", "cas(1)[true]"), toA.takeLog(), "claims of 1 and 2; then no room");

        // 10. the minute turns: the old window's slices lapse (a fixed window does not count its past); A's first
        //     request claims in the new window as much as it was asked for in this interval so far: 6
        clock.set(Instant.parse("2026-01-01T12:01:00Z"));
        assertEquals(1, admitted(atA, KEY, 1));
        assertState("6(1)", "4(4)", 6); // B still shows its old window's slice: it has had no request since
        assertEquals(List.of("cas(1)[true]"), toA.takeLog());
    }

    private CounterKey id() {
        return new CounterKey(SharedStoreOptions.shape(atA.config()), KEY);
    }

    private void assertState(String atA, String atB, long store) {
        assertEquals(atA, slice(this.atA), "A");
        assertEquals(atB, slice(this.atB), "B");
        assertEquals(store, shared.read(id()).total(), "store");
    }

    private static String slice(RateLimiter limiter) {
        LeasedLimiter.Held h = ((LeasedLimiter) limiter).inspect(KEY);
        return h == null || h.granted() == 0 && h.used() == 0 ? "-" : h.granted() + "(" + h.used() + ")";
    }
}
