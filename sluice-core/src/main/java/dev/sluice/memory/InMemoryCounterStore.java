package dev.sluice.memory;

import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * A {@link CounterStore} in this JVM's heap: for tests, simulations, and several synchronized or leased stores in one
 * JVM. Each write is atomic per key ({@link ConcurrentHashMap#compute}); a batch is not atomic as a whole, like the
 * real stores'.
 *
 * <p>Built {@linkplain #expiringWith(Clock) with a clock}, it deletes a record once its expiry has passed on that
 * clock, as a MongoDB TTL index or a Redis key expiry would; without one it keeps every record. Thread-safe.
 */
public final class InMemoryCounterStore implements CounterStore {

    private record Stored(CounterSnapshot snapshot, long expireAtNanos) {}

    private final ConcurrentHashMap<CounterKey, Stored> records = new ConcurrentHashMap<>();
    private final @Nullable Clock clock; // null: records never expire

    private InMemoryCounterStore(@Nullable Clock clock) {
        this.clock = clock;
    }

    /** A store that keeps every record. */
    public static InMemoryCounterStore create() {
        return new InMemoryCounterStore(null);
    }

    /** A store that deletes a record once {@code clock} has reached its expiry. */
    public static InMemoryCounterStore expiringWith(Clock clock) {
        return new InMemoryCounterStore(Objects.requireNonNull(clock, "clock must not be null"));
    }

    @Override
    public List<CounterSnapshot> load(List<CounterKey> keys) {
        List<CounterSnapshot> out = new ArrayList<>(keys.size());
        for (CounterKey k : keys) {
            out.add(read(Objects.requireNonNull(k, "key must not be null")));
        }
        return out;
    }

    @Override
    public boolean[] compareAndSet(List<CounterWrite> writes) {
        boolean[] applied = new boolean[writes.size()];
        for (int j = 0; j < applied.length; j++) {
            CounterWrite w = Objects.requireNonNull(writes.get(j), "write must not be null");
            boolean[] ok = new boolean[1];
            records.compute(w.key(), (k, old) -> {
                long current = old == null || expired(old)
                        ? CounterSnapshot.ABSENT
                        : old.snapshot().version();
                if (current != w.expectedVersion()) {
                    return old;
                }
                ok[0] = true;
                return new Stored(new CounterSnapshot(w.newVersion(), w.counters()), w.expireAtNanos());
            });
            applied[j] = ok[0];
        }
        return applied;
    }

    /** The record of {@code key} now; {@link CounterSnapshot#absent()} if there is none. */
    public CounterSnapshot read(CounterKey key) {
        Stored s = records.get(key);
        if (s == null) {
            return CounterSnapshot.absent();
        }
        if (expired(s)) {
            records.remove(key, s);
            return CounterSnapshot.absent();
        }
        return s.snapshot();
    }

    /** How many records the store holds (expired ones included until they are next touched). */
    public int size() {
        return records.size();
    }

    private boolean expired(Stored s) {
        if (clock == null) {
            return false;
        }
        Instant i = clock.instant();
        return i.getEpochSecond() * 1_000_000_000L + i.getNano() >= s.expireAtNanos();
    }

    @Override
    public String toString() {
        return "InMemoryCounterStore[records=" + records.size() + (clock == null ? "" : ", expiring") + "]";
    }
}
