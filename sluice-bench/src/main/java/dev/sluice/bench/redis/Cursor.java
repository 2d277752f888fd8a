package dev.sluice.bench.redis;

import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Each benchmark thread's walk over the key indices {@code 0 .. keys−1}, every index once per lap, threads
 * starting spread over the lap. On one key every thread hits the same key: the hot key.
 */
@State(Scope.Thread)
public class Cursor {

    private int keys;
    private int index;

    @Setup
    public void setUp(BenchmarkParams benchmark, ThreadParams thread) {
        keys = Integer.parseInt(benchmark.getParam("keys"));
        index = (int) ((long) keys * thread.getThreadIndex() / Math.max(1, thread.getThreadCount()));
    }

    /** The next key index. */
    public int next() {
        int i = index + 1;
        if (i >= keys) {
            i = 0;
        }
        index = i;
        return i;
    }
}
