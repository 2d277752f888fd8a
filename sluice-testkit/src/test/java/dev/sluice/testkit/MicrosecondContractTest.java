package dev.sluice.testkit;

import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.Reservation;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.spi.RateLimitStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;

/**
 * The contract run against a model of an ideal microsecond store (as Redis keeps time): the in-memory store reading
 * a clock floored to the microsecond, every duration it answers rounded up to the microsecond. It proves the suite
 * itself asks nothing a microsecond store cannot answer.
 */
class MicrosecondContractTest extends RateLimiterContract {

    private static final long MICRO = 1_000;

    @Override
    protected Duration resolution() {
        return Duration.ofNanos(MICRO);
    }

    @Override
    protected RateLimitStore store() {
        return config -> {
            Clock source = config.clock();
            Clock floored = new Clock() {
                @Override
                public Instant instant() {
                    return source.instant().truncatedTo(ChronoUnit.MICROS);
                }

                @Override
                public ZoneId getZone() {
                    return source.getZone();
                }

                @Override
                public Clock withZone(ZoneId zone) {
                    throw new UnsupportedOperationException();
                }
            };
            RateLimiter inner = InMemoryStore.create()
                    .bind(new LimiterConfig(
                            config.algorithm(),
                            config.limit(),
                            config.window(),
                            floored,
                            config.countRejected(),
                            config.buckets(),
                            config.strict(),
                            config.listener()));
            return new MicrosecondLimiter(config, inner);
        };
    }

    private static long up(long nanos) {
        return (nanos + MICRO - 1) / MICRO * MICRO;
    }

    private static Decision rounded(Decision d) {
        return d.allowed()
                ? Decision.allowed(d.limit(), d.remaining(), up(d.resetAfterNanos()))
                : Decision.denied(d.limit(), d.remaining(), up(d.resetAfterNanos()), up(d.retryAfterNanos()));
    }

    private static final class MicrosecondLimiter implements RateLimiter {
        private final LimiterConfig config;
        private final RateLimiter inner;

        MicrosecondLimiter(LimiterConfig config, RateLimiter inner) {
            this.config = config;
            this.inner = inner;
        }

        @Override
        public LimiterConfig config() {
            return config;
        }

        @Override
        public void close() {
            inner.close();
        }

        @Override
        public Decision tryAcquire(String key, long cost) {
            return rounded(inner.tryAcquire(key, cost));
        }

        @Override
        public Decision peek(String key, long cost) {
            return rounded(inner.peek(key, cost));
        }

        @Override
        public Reservation reserve(String key, long cost) {
            Reservation r = inner.reserve(key, cost);
            Decision d = rounded(r.decision());
            return new Reservation() {
                @Override
                public Decision decision() {
                    return d;
                }

                @Override
                public boolean cancel() {
                    return r.cancel();
                }
            };
        }
    }
}
