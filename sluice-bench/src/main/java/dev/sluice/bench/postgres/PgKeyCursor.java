package dev.sluice.bench.postgres;

import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Each benchmark thread's walk over the key indices {@code 0 .. keys−1}: a prime stride, so every thread visits
 * every key once per lap, threads spread evenly around the lap. On one key every thread hits the same row.
 */
@State(Scope.Thread)
public class PgKeyCursor {

    private static final int STRIDE = 7_919;

    /** The number of keys; each PostgreSQL benchmark declares the same parameter. */
    @Param({"1", "100000"})
    public int keys;

    private int index;
    private int stride;

    @Setup
    public void setUp(ThreadParams thread) {
        stride = STRIDE % keys;
        index = (int) ((long) keys * thread.getThreadIndex() / Math.max(1, thread.getThreadCount()));
    }

    /** The next key index. */
    public int next() {
        int i = index + stride;
        if (i >= keys) {
            i -= keys;
        }
        index = i;
        return i;
    }
}
