package dev.sluice.sync;

import dev.sluice.SluiceException;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * A counter store wrapper for tests: records every call, runs a hook after each, and fails on demand, either before
 * the call reaches the store ({@link Mode#DOWN}) or after the store applied it ({@link Mode#LOSE_ANSWERS}).
 */
final class ScriptedCounterStore implements CounterStore {

    enum Mode {
        UP,
        DOWN,
        LOSE_ANSWERS
    }

    /** One call: {@code op} is "load" or "cas"; {@code results} the CAS flags (null for a load or a failure). */
    record Call(String op, int size, boolean[] results, boolean failed) {
        @Override
        public String toString() {
            return op + "(" + size + ")" + (failed ? " failed" : results != null ? Arrays.toString(results) : "");
        }
    }

    private final CounterStore delegate;
    private volatile Mode mode = Mode.UP;
    private final List<Call> calls = new ArrayList<>();
    private volatile Consumer<Call> afterCall = c -> {};
    private volatile Consumer<String> beforeCall = op -> {};

    ScriptedCounterStore(CounterStore delegate) {
        this.delegate = delegate;
    }

    void mode(Mode mode) {
        this.mode = mode;
    }

    void afterCall(Consumer<Call> hook) {
        this.afterCall = hook;
    }

    void beforeCall(Consumer<String> hook) {
        this.beforeCall = hook;
    }

    synchronized List<Call> calls() {
        return new ArrayList<>(calls);
    }

    synchronized void clearCalls() {
        calls.clear();
    }

    private synchronized void record(Call c) {
        calls.add(c);
    }

    @Override
    public List<CounterSnapshot> load(List<CounterKey> keys) {
        beforeCall.accept("load");
        if (mode != Mode.UP) {
            fail(new Call("load", keys.size(), null, true));
        }
        List<CounterSnapshot> out = delegate.load(keys);
        Call c = new Call("load", keys.size(), null, false);
        record(c);
        afterCall.accept(c);
        return out;
    }

    @Override
    public boolean[] compareAndSet(List<CounterWrite> writes) {
        beforeCall.accept("cas");
        Mode m = mode;
        if (m == Mode.DOWN) {
            fail(new Call("cas", writes.size(), null, true));
        }
        boolean[] applied = delegate.compareAndSet(writes);
        if (m == Mode.LOSE_ANSWERS) {
            fail(new Call("cas", writes.size(), applied, true));
        }
        Call c = new Call("cas", writes.size(), applied.clone(), false);
        record(c);
        afterCall.accept(c);
        return applied;
    }

    private void fail(Call c) {
        record(c);
        afterCall.accept(c);
        throw new SluiceException("scripted outage (" + mode + ")");
    }
}
