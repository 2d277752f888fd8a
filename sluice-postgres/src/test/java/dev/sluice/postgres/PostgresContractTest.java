package dev.sluice.postgres;

import dev.sluice.FailurePolicy;
import dev.sluice.TimeSource;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.RateLimiterContract;

/**
 * The store contract, unchanged, on a real PostgreSQL, timed by the limiter's hand-moved clock. A store failure
 * throws ({@link FailurePolicy#THROW}) so that it can never pass for an answer; the timeout is generous, since this
 * test is about answers, not about a loaded machine.
 */
class PostgresContractTest extends RateLimiterContract {

    private static PostgresStore store; // guarded by PostgresContractTest.class

    @Override
    protected RateLimitStore store() {
        synchronized (PostgresContractTest.class) {
            if (store == null) {
                store = PostgresStore.builder(Databases.shared())
                        .table("sluice_contract")
                        .timeSource(TimeSource.CLOCK)
                        .failurePolicy(FailurePolicy.THROW)
                        .timeout(Databases.PATIENCE)
                        .build();
            }
            return store;
        }
    }
}
