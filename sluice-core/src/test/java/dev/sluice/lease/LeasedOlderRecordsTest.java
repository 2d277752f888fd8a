package dev.sluice.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.TestClock;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterWrite;
import dev.sluice.spi.SharedStoreOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Records written by an older version, or by synchronized mode, are read correctly: such a record is counts per frame
 * up to the current one, with no frame claimed ahead, the shape every version has written. A leased instance takes it
 * as the counts already granted, measures it as the algorithm does (a frame that no longer counts is left out, the
 * sliding tail's previous window weighted), and admits exactly the room it leaves.
 */
class LeasedOlderRecordsTest {

    private static final long L = 10;
    private static final Instant T = Instant.parse("2026-01-01T12:00:00Z");
    private static final long SECOND = 1_000_000_000L;
    private static final long T0 = T.getEpochSecond() * SECOND;

    private final TestClock clock = new TestClock(T);
    private final InMemoryCounterStore shared = InMemoryCounterStore.create();

    @Test
    void aFixedWindowRecordOfTheCurrentWindowLeavesItsRoom() {
        clock.set(T.plusMillis(300));
        assertEquals(3, admittedAfter(Algorithm.FIXED_WINDOW, Map.of(T0, 7L)));
    }

    @Test
    void aSlidingTailRecordIsMeasuredWithItsPreviousWindowWeighted() {
        clock.set(T.plusMillis(1500)); // half into the window of 12:00:01: floor(8 × 0.5) + 2 = 6
        assertEquals(4, admittedAfter(Algorithm.SLIDING_TAIL, Map.of(T0, 8L, T0 + SECOND, 2L)));
    }

    @Test
    void aSubWindowCounterRecordCountsOnlyTheSubWindowsStillInTheWindow() {
        clock.set(T.plusMillis(1050)); // counts the sub-windows after 12:00:00.050: those of :00.500 and :01.000
        Map<Long, Long> record = Map.of(T0, 4L, T0 + SECOND / 2, 3L, T0 + SECOND, 2L);
        assertEquals(5, admittedAfter(Algorithm.SLIDING_WINDOW_COUNTER, record));
    }

    /**
     * A record with another instance's demand note (docs/leased-mode.md, "Fair shares") beside its frames: the note is
     * no frame of any window, so each algorithm admits exactly what the frames alone leave. The measure is the one an
     * older version applies to such a record too: it reads a note as a frame of the 19th century.
     */
    @Test
    void aDemandNoteIsNotCountedAsAdmissions() {
        long note = DemandNotes.key(7, T0 + 10 * SECOND);
        clock.set(T.plusMillis(300));
        assertEquals(3, admittedAfter(Algorithm.FIXED_WINDOW, Map.of(note, 1_000L, T0, 7L)));
        clock.set(T.plusMillis(1500));
        // a note of 1: a sliding tail holding its share of a larger demand noted would wait for more room than 4
        assertEquals(4, admittedAfter(Algorithm.SLIDING_TAIL, Map.of(note, 1L, T0, 8L, T0 + SECOND, 2L)));
        clock.set(T.plusMillis(1050));
        Map<Long, Long> record = Map.of(note, 1_000L, T0, 4L, T0 + SECOND / 2, 3L, T0 + SECOND, 2L);
        assertEquals(5, admittedAfter(Algorithm.SLIDING_WINDOW_COUNTER, record));
    }

    /** Writes {@code record} as an older instance would, then floods the key from a leased instance. */
    private int admittedAfter(Algorithm algorithm, Map<Long, Long> record) {
        LeasedStore store = LeasedStore.builder(shared).manualRounds().build();
        RateLimiter limiter = LeaseTests.limiter(store, clock, algorithm, L, Duration.ofSeconds(1));
        CounterKey id = new CounterKey(SharedStoreOptions.shape(limiter.config()), "k");
        long expire = T0 + 10 * SECOND;
        assertTrue(shared.compareAndSet(
                        List.of(new CounterWrite(id, CounterSnapshot.ABSENT, 1, new TreeMap<>(record), expire)))[0]);
        int admitted = LeaseTests.admitted(limiter, "k", (int) (2 * L));
        store.close();
        return admitted;
    }
}
