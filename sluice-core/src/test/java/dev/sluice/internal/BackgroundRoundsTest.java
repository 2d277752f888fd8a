package dev.sluice.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.sluice.SluiceException;
import dev.sluice.TestAwait;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The rounds go on whatever a round does: a round that fails, by an exception or an {@link Error}, is reported and
 * runs again at its next turn, and so does one whose failure handler throws. A round that stopped them would leave
 * synchronized mode deciding from its last view of the others' counts, never sending its own, without a word.
 */
class BackgroundRoundsTest {

    private static final Duration INTERVAL = Duration.ofMillis(5);

    private final List<RuntimeException> reported = new CopyOnWriteArrayList<>();
    private BackgroundRounds rounds;

    @AfterEach
    void stop() {
        rounds.stop(Duration.ofSeconds(10));
    }

    @Test
    void aRoundThatEndsInAnErrorIsReportedAndTheRoundsGoOn() {
        rounds = new BackgroundRounds("test-rounds", reported::add);
        AtomicInteger runs = new AtomicInteger();
        rounds.every(INTERVAL, () -> {
            if (runs.incrementAndGet() == 1) {
                throw new StackOverflowError("the first round's");
            }
        });
        TestAwait.until("three rounds", () -> runs.get() >= 3);
        assertEquals(1, reported.size(), reported.toString());
        SluiceException e = assertInstanceOf(SluiceException.class, reported.get(0));
        assertInstanceOf(StackOverflowError.class, e.getCause());
    }

    @Test
    void aRoundWhoseFailureHandlerThrowsRunsAgain() {
        AtomicInteger handled = new AtomicInteger();
        rounds = new BackgroundRounds("test-rounds", e -> {
            handled.incrementAndGet();
            throw new IllegalStateException("the handler's bug");
        });
        AtomicInteger runs = new AtomicInteger();
        rounds.every(INTERVAL, () -> {
            runs.incrementAndGet();
            throw new IllegalArgumentException("every round's");
        });
        TestAwait.until("three rounds", () -> runs.get() >= 3);
        TestAwait.until("each handed over", () -> handled.get() >= 3);
    }
}
