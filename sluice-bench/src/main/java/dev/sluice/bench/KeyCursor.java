package dev.sluice.bench;

import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Each benchmark thread's walk over the key indices {@code 0 .. keys−1}: a fixed stride that visits every index
 * once per lap, in an order that scatters successive requests across the map (consecutive keys such as
 * {@code client:0000001} and {@code client:0000002} hash to neighbouring slots, which would flatter every map).
 * One add and one compare per request. Threads start half a lap apart.
 */
@State(Scope.Thread)
public class KeyCursor {

    /** A prime, so coprime with every key count used here (10<sup>6</sup> = 2<sup>6</sup>·5<sup>6</sup>). */
    private static final int STRIDE = 611_953;

    /** The number of keys; each benchmark state declares the same parameter. */
    @Param({"1", "1000000"})
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
