package dev.sluice.lease;

import dev.sluice.RateLimiter;

/** What the leased mode tests of this package share. */
final class LeaseTests {

    private LeaseTests() {}

    /** Makes {@code requests} requests of one permit on {@code key} and answers how many were admitted. */
    static int admitted(RateLimiter limiter, String key, int requests) {
        int n = 0;
        for (int j = 0; j < requests; j++) {
            if (limiter.tryAcquire(key).allowed()) {
                n++;
            }
        }
        return n;
    }
}
