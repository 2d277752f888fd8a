package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One request's decision put, every run, between its reading of the time and its taking of the key's lock, while
 * another thread moves the key to the next frame: the race in which a request whose time lies in one frame could be
 * admitted from the next frame's count. Each admission is noted with the time its thread read last, as an observer
 * outside the limiter sees it.
 *
 * <pre>
 * frame start + 10 ms      two requests admitted                          (frame 0)
 * frame end − 5 ms         thread A reads the time and stops              (frame 0)
 * frame end + 5 ms         thread B's request admitted, the key moves to frame 1
 *                          thread A goes on
 * </pre>
 *
 * A limiter that reads the time under the key's lock holds the lock while A is stopped, so B waits for A: the race
 * cannot happen there. The test lets B try for {@link #B_ALONE} before it lets A go on; on a slow machine B may not
 * get that far, and the run then shows no race, but it can never fail a limiter that decides each request at a time
 * inside its frame.
 */
public final class FrameTurnRace {

    /** How long thread B may decide alone while A is stopped. */
    private static final long B_ALONE = 500;

    private FrameTurnRace() {}

    /**
     * Runs the race on {@code key} of {@code limiter}, whose clock is {@code clock}, with frames of {@code frame}
     * starting at {@code start}; answers the admissions, by the start of the frame their observed time lies in.
     */
    public static Map<Long, Integer> run(
            RateLimiter limiter, PausingClock clock, String key, Instant start, Duration frame) throws Exception {
        List<Instant> admitted = new ArrayList<>();
        clock.set(start.plusMillis(10));
        for (int i = 0; i < 2; i++) {
            assertTrue(limiter.tryAcquire(key).allowed(), "a request early in frame 0");
            admitted.add(clock.lastReadHere());
        }
        AtomicReference<Decision> late = new AtomicReference<>();
        AtomicReference<Instant> lateAt = new AtomicReference<>();
        Thread a = new Thread(() -> {
            late.set(limiter.tryAcquire(key));
            lateAt.set(clock.lastReadHere());
        });
        clock.set(start.plus(frame).minusMillis(5));
        clock.pauseNextReadOn(a);
        a.start();
        clock.awaitPaused();
        clock.set(start.plus(frame).plusMillis(5));
        AtomicReference<Decision> early = new AtomicReference<>();
        AtomicReference<Instant> earlyAt = new AtomicReference<>();
        Thread b = new Thread(() -> {
            early.set(limiter.tryAcquire(key));
            earlyAt.set(clock.lastReadHere());
        });
        b.start();
        b.join(B_ALONE);
        clock.resume();
        a.join(10_000);
        b.join(10_000);
        assertTrue(early.get() != null && early.get().allowed(), "thread B's request: " + early.get());
        assertTrue(late.get() != null && late.get().allowed(), "thread A's request: " + late.get());
        admitted.add(earlyAt.get());
        admitted.add(lateAt.get());
        Map<Long, Integer> byFrame = new TreeMap<>();
        long size = frame.toNanos();
        for (Instant i : admitted) {
            long nanos = i.getEpochSecond() * 1_000_000_000L + i.getNano();
            byFrame.merge(Math.floorDiv(nanos, size) * size, 1, Integer::sum);
        }
        return byFrame;
    }
}
