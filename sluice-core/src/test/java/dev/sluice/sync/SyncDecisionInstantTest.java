package dev.sluice.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.Algorithm;
import dev.sluice.FrameTurnRace;
import dev.sluice.PausingClock;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.memory.InMemoryCounterStore;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every admission's time, as the thread that asked read it, lies in the frame its permit was counted in: a request
 * that read the time in one frame and took the key's lock after another thread moved the key to the next frame is
 * decided at a time read again under the lock ({@link FrameTurnRace}).
 */
class SyncDecisionInstantTest {

    private static final Instant START = Instant.parse("2026-01-01T12:00:00Z");

    @ParameterizedTest
    @EnumSource(
            value = Algorithm.class,
            names = {"FIXED_WINDOW", "SLIDING_TAIL", "SLIDING_WINDOW_COUNTER"})
    void aRequestThatReadTheTimeBeforeTheFrameTurnedIsCountedInTheFrameOfItsTime(Algorithm algorithm) throws Exception {
        PausingClock clock = new PausingClock(START);
        SynchronizedStore store = SynchronizedStore.builder(InMemoryCounterStore.create())
                .manualRounds()
                .build();
        RateLimiterBuilder b =
                RateLimiter.builder(algorithm).limit(10, Duration.ofSeconds(1)).clock(clock);
        if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
            b.buckets(10);
        }
        RateLimiter limiter = b.store(store).build();
        Duration frame = algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? Duration.ofMillis(100) : Duration.ofSeconds(1);

        Map<Long, Integer> observed = FrameTurnRace.run(limiter, clock, "k", START, frame);

        Map<Long, Long> counted = ((SynchronizedLimiter) limiter).inspect("k").local();
        Map<Long, Long> seen = new TreeMap<>();
        for (long f : counted.keySet()) {
            seen.put(f, (long) observed.getOrDefault(f, 0));
        }
        assertEquals(seen, new TreeMap<>(counted), "counts per frame against the admissions whose time lies in it");
        store.close();
    }
}
