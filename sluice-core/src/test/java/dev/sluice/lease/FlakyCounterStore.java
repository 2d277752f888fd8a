package dev.sluice.lease;

import dev.sluice.SluiceException;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A counter store in front of another that counts the calls, records them as {@code load(n)} and {@code cas(n)[true,
 * false]}, and fails every call while {@link #down} is set, as a store that cannot be reached would; while
 * {@link #loseAnswers} is set a compare-and-set is applied and then fails, as a call whose answer a dropped connection
 * lost. {@link #beforeWrite}, if set, sees every compare-and-set before it reaches the store (and may hold it there).
 */
final class FlakyCounterStore implements CounterStore {

    private final CounterStore inner;
    final AtomicInteger calls = new AtomicInteger();
    final List<String> log = new ArrayList<>();
    volatile boolean down;
    volatile boolean loseAnswers;
    volatile @Nullable Consumer<List<CounterWrite>> beforeWrite;

    FlakyCounterStore(CounterStore inner) {
        this.inner = inner;
    }

    @Override
    public List<CounterSnapshot> load(List<CounterKey> keys) {
        calls.incrementAndGet();
        if (down) {
            record("load(" + keys.size() + ")[down]");
            throw new SluiceException("store down");
        }
        record("load(" + keys.size() + ")");
        return inner.load(keys);
    }

    @Override
    public boolean[] compareAndSet(List<CounterWrite> writes) {
        Consumer<List<CounterWrite>> hook = beforeWrite;
        if (hook != null) {
            hook.accept(writes);
        }
        calls.incrementAndGet();
        if (down) {
            record("cas(" + writes.size() + ")[down]");
            throw new SluiceException("store down");
        }
        boolean[] applied = inner.compareAndSet(writes);
        if (loseAnswers) {
            record("cas(" + writes.size() + ")[answer lost]");
            throw new SluiceException("connection reset");
        }
        StringBuilder b = new StringBuilder("cas(" + writes.size() + ")");
        for (boolean a : applied) {
            b.append(a ? "[true]" : "[false]");
        }
        record(b.toString());
        return applied;
    }

    private synchronized void record(String call) {
        log.add(call);
    }

    synchronized List<String> takeLog() {
        List<String> out = new ArrayList<>(log);
        log.clear();
        return out;
    }
}
