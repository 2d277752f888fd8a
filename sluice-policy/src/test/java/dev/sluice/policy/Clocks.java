package dev.sluice.policy;

import dev.sluice.testkit.ManualClock;
import java.time.Instant;

/** Test clocks. */
final class Clocks {

    private Clocks() {}

    /** A manual clock at the start of a UTC hour, so every window up to an hour starts now. */
    static ManualClock atHourStart() {
        return new ManualClock(Instant.parse("2026-03-02T10:00:00Z"));
    }
}
