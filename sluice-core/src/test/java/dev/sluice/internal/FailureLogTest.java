package dev.sluice.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.SluiceException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Failures with no listener are logged: one line per interval with their count, never one per failure. */
class FailureLogTest {

    private final List<String> lines = new ArrayList<>();

    private FailureLog log(String source, String answeredBy, long intervalNanos) {
        return new FailureLog(source, answeredBy, intervalNanos, (line, e) -> lines.add(line));
    }

    @Test
    void aThousandFailuresWithinOneIntervalWriteOneLine() {
        FailureLog log = log("TestStore[a]", "FAIL_OPEN", Long.MAX_VALUE / 4);
        for (int i = 0; i < 1000; i++) {
            log.failed(new SluiceException("timed out #" + i));
        }
        assertEquals(1, lines.size(), "lines for 1,000 failures in one interval");
        String message = lines.get(0);
        assertTrue(
                message.contains("TestStore[a]")
                        && message.contains("1 store failure")
                        && message.contains("FAIL_OPEN")
                        && message.contains("timed out #0"),
                message);
        assertEquals(999, log.pending(), "failures counted for the next line");
    }

    @Test
    void theNextLineCountsTheFailuresSinceTheLast() {
        FailureLog log = log("TestStore[b]", "FAIL_CLOSED", 0);
        log.failed(new SluiceException("first"));
        log.failed(new SluiceException("second"));
        assertEquals(2, lines.size());
        assertTrue(lines.get(1).contains("1 store failure in the last 0 s"), lines.get(1));
        assertTrue(lines.get(1).contains("second"), lines.get(1));
        assertEquals(0, log.pending());
    }
}
