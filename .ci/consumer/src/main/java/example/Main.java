package example;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.redis.RedisStore;
import io.lettuce.core.RedisClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

/** Four requests against a limit of 3 per minute, in memory on a stopped clock; prints one line per decision. */
public final class Main {

    public static void main(String[] args) {
        RateLimiter limiter = RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                .limit(3, Duration.ofMinutes(1))
                .clock(Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC))
                .build();
        for (int i = 0; i < 4; i++) {
            Decision d = limiter.tryAcquire("client:abc");
            System.out.println(d.allowed()
                    ? "allowed remaining=" + d.remaining()
                    : "denied retryAfter=" + d.retryAfter());
        }
    }

    /** The same limit shared through Redis: compiled to prove the store module resolves, never run here. */
    static RateLimiter shared(RedisClient client) {
        return RateLimiter.builder(Algorithm.TOKEN_BUCKET)
                .limit(3, Duration.ofMinutes(1))
                .store(RedisStore.builder(client).build())
                .build();
    }

    private Main() {
    }
}
