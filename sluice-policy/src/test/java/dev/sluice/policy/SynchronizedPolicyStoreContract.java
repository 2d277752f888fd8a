package dev.sluice.policy;

import dev.sluice.spi.CounterStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.sync.SynchronizedStore;
import java.util.ArrayList;
import java.util.List;

/**
 * All or nothing in synchronized mode: the policy's limiters on a {@link SynchronizedStore} flushed and refreshed by
 * hand, and another instance of the service on a second synchronized store over the same counter store. Joint
 * requests are decided in memory, so the limiter's answers are exact; what the other instance sees after a flush and
 * a refresh is what the counter store holds.
 */
abstract class SynchronizedPolicyStoreContract extends PolicyStoreContract {

    private final List<SynchronizedStore> instances = new ArrayList<>();

    /** The counter store the instances share; may be a new client on the same records each call. */
    protected abstract CounterStore counterStore();

    @Override
    protected RateLimitStore store() {
        return instance(0);
    }

    @Override
    protected RateLimitStore otherInstance() {
        return instance(1);
    }

    private synchronized SynchronizedStore instance(int i) {
        while (instances.size() <= i) {
            instances.add(
                    SynchronizedStore.builder(counterStore()).manualRounds().build());
        }
        return instances.get(i);
    }

    @Override
    protected synchronized void exchange() {
        for (SynchronizedStore s : instances) {
            if (!s.flush()) {
                throw new AssertionError("a flush of " + s + " did not write every count");
            }
        }
        for (SynchronizedStore s : instances) {
            if (!s.refresh()) {
                throw new AssertionError("a refresh of " + s + " did not read every key");
            }
        }
    }

    @Override
    protected synchronized void closeStores() {
        instances.forEach(SynchronizedStore::close);
    }
}
