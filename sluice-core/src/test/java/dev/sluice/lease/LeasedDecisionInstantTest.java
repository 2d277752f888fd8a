package dev.sluice.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.Algorithm;
import dev.sluice.FrameTurnRace;
import dev.sluice.PausingClock;
import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryCounterStore;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every admission's time, as the thread that asked read it, lies in the frame its permit was charged to: a request
 * that read the time in one frame and took the key's lock after another thread moved the key to the next frame is
 * decided at a time read again under the lock ({@link FrameTurnRace}).
 */
class LeasedDecisionInstantTest {

    private static final Instant START = Instant.parse("2026-01-01T12:00:00Z");

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_TAIL", "SLIDING_WINDOW_COUNTER"})
    void aRequestThatReadTheTimeBeforeTheFrameTurnedIsChargedToTheFrameOfItsTime(Algorithm algorithm) throws Exception {
        PausingClock clock = new PausingClock(START);
        LeasedStore store = LeasedStore.builder(InMemoryCounterStore.create())
                .manualRounds()
                .build();
        RateLimiter limiter = LeaseTests.limiter(store, clock, algorithm, 10, Duration.ofSeconds(1));
        Duration frame = algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? Duration.ofMillis(100) : Duration.ofSeconds(1);

        Map<Long, Integer> observed = FrameTurnRace.run(limiter, clock, "k", START, frame);

        LeasedLimiter.Held held = ((LeasedLimiter) limiter).inspect("k");
        assertEquals(
                held.used(),
                (long) observed.getOrDefault(held.frame(), 0),
                "admissions charged to the frame held against those whose time lies in it: " + observed + ", " + held);
        store.close();
    }
}
