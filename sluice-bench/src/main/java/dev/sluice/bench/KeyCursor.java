package dev.sluice.bench;

import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Each benchmark thread's walk over the key indices {@code 0 .. keys−1}: a fixed stride that visits every index
 * once per lap, in an order that scatters successive requests across the map (consecutive keys such as
 * {@code client:0000001} and {@code client:0000002} hash to neighbouring slots, which would flatter every map).
 * One add and one compare per request. Threads start half a lap apart; on one key every thread hits the same key.
 *
 * <p>The key count is the run's {@code keys} parameter, read from {@link BenchmarkParams}: every benchmark that
 * walks keys declares that parameter itself, with its own values. A {@code @Param} here would be the same JMH
 * parameter as theirs, one list of values for all, so this class declares none. A subclass picks another stride
 * (the stores' benchmarks use their own, see {@link StoreKeyCursor}); the stride must be coprime with every key
 * count it walks.
 */
@State(Scope.Thread)
public class KeyCursor {

    /** A prime, so coprime with every key count used here (10<sup>6</sup> = 2<sup>6</sup>·5<sup>6</sup>). */
    private static final int STRIDE = 611_953;

    private final int strideOfAnyCount;
    private int keys;
    private int index;
    private int stride;

    public KeyCursor() {
        this(STRIDE);
    }

    /** A walk with the given stride (taken modulo the key count). */
    protected KeyCursor(int stride) {
        this.strideOfAnyCount = stride;
    }

    @Setup
    public void setUp(BenchmarkParams benchmark, ThreadParams thread) {
        keys = Integer.parseInt(benchmark.getParam("keys"));
        stride = strideOfAnyCount % keys;
        index = (int) ((long) keys * thread.getThreadIndex() / Math.max(1, thread.getThreadCount()));
    }

    /** The next key index. */
    public final int next() {
        int i = index + stride;
        if (i >= keys) {
            i -= keys;
        }
        index = i;
        return i;
    }
}
