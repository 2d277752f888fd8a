package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.FailurePolicy;
import dev.sluice.TimeSource;
import dev.sluice.redis.RedisStore;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * {@link PolicyLimiter#checkAsync} in exact mode on a real Redis: every check is sent from the test's one thread and
 * none holds a thread while Redis answers, so all of them are in flight at once and go in the store's batches
 * together. The answers are exactly those of {@link PolicyLimiter#check}: the limit admitted exactly, a joint check
 * all or nothing, and a stalled server answered by the domain's {@code on_store_failure} by the deadline, with the
 * configuration the checks held let go once they are answered.
 */
class AsyncCheckTest {

    private static final int CHECKS = 512;
    private static final Duration HANG = Duration.ofSeconds(30);
    /** Where the store calls that a checking thread cannot bound run; none here (Redis keeps deadlines). */
    private static final ExecutorService DEADLINE = Executors.newFixedThreadPool(2);

    private static final RedisStore STORE = RedisStore.builder(Servers.redis())
            .timeSource(TimeSource.CLOCK)
            .failurePolicy(FailurePolicy.THROW)
            .timeout(Servers.PATIENCE)
            .expiryMargin(Duration.ofMinutes(1))
            .build();

    /** Ten minutes into an hour, whatever the time of day: a minute's and an hour's window have room left. */
    private final ManualClock clock =
            new ManualClock(Instant.now().truncatedTo(ChronoUnit.HOURS).plusSeconds(600));

    private final String domain = "async-" + UUID.randomUUID();

    @AfterAll
    static void stop() {
        STORE.close();
        DEADLINE.shutdownNow();
    }

    private Policies policies(String onStoreFailure) {
        return Policies.parse(
                "async.yaml",
                """
                domain: %s
                on_store_failure: %s
                descriptors:
                  - {key: a, rate_limit: {unit: minute, requests_per_unit: 300}}
                  - {key: j, rate_limit: {unit: minute, requests_per_unit: 200}}
                  - {key: k, rate_limit: {unit: hour, requests_per_unit: 400}}
                  - {key: e, rate_limit: {unit: hour, requests_per_unit: 1000}}
                  - {key: q1, quota_mode: true, rate_limit: {unit: minute, requests_per_unit: 3}}
                  - {key: q2, quota_mode: true, rate_limit: {unit: minute, requests_per_unit: 5}}
                """
                        .formatted(domain, onStoreFailure));
    }

    private PolicyLimiter limiter(RedisStore store, Duration deadline) {
        return PolicyLimiter.builder(policies("deny"))
                .store(store)
                .clock(clock)
                .deadline(deadline, DEADLINE)
                .build();
    }

    /** Sends {@code CHECKS} checks of {@code descriptors} at once from this thread; their verdicts, in order. */
    private List<Verdict> all(PolicyLimiter limiter, List<Descriptor> descriptors) throws Exception {
        List<CompletableFuture<Verdict>> pending = new ArrayList<>(CHECKS);
        for (int i = 0; i < CHECKS; i++) {
            pending.add(limiter.checkAsync(domain, descriptors, 1).toCompletableFuture());
        }
        List<Verdict> verdicts = new ArrayList<>(CHECKS);
        for (CompletableFuture<Verdict> v : pending) {
            verdicts.add(v.get(HANG.toSeconds(), TimeUnit.SECONDS));
        }
        return verdicts;
    }

    @Test
    void asyncChecksOnOneKeyAdmitExactlyTheLimit() throws Exception {
        try (PolicyLimiter limiter = limiter(STORE, Servers.PATIENCE)) {
            List<Verdict> verdicts = all(limiter, List.of(Descriptor.of("a", "hot")));
            assertEquals(300, verdicts.stream().filter(Verdict::allowed).count(), "admitted of " + CHECKS);
            assertFalse(verdicts.stream().anyMatch(Verdict::storeFailed), "every check answered by Redis");
            Verdict after = limiter.check(domain, Descriptor.of("a", "hot"));
            assertFalse(after.allowed());
            assertEquals(0, after.descriptor(0).limits().get(0).remaining(), "left");
        }
    }

    /**
     * Joint checks of a limit of 200 a minute and one of 400 an hour: exactly 200 admitted, and the hour's limit has
     * exactly 200 left, so no refused check took from it.
     */
    @Test
    void aJointCheckInABatchStaysAllOrNothing() throws Exception {
        try (PolicyLimiter limiter = limiter(STORE, Servers.PATIENCE)) {
            List<Verdict> verdicts = all(limiter, List.of(Descriptor.of("j", "x"), Descriptor.of("k", "x")));
            assertEquals(200, verdicts.stream().filter(Verdict::allowed).count(), "admitted of " + CHECKS);
            Verdict hour = limiter.check(domain, Descriptor.of("k", "x"));
            assertTrue(hour.allowed());
            assertEquals(400 - 200 - 1, hour.descriptor(0).limits().get(0).remaining(), "left of the hour's 400");
        }
    }

    /**
     * A request with an enforced limit and two quota-mode limits: the quota stage asks its parts one after the other,
     * each after the store answered the one before. Asked one check at a time, each async verdict is the synchronous
     * one of a twin key, limit by limit; sent all at once, the quota limits took exactly their limits (3 and 5) and a
     * check was admitted exactly when one of its quota limits had room.
     */
    @Test
    void theQuotaStageAsksItsPartsInTurnWithoutWaiting() throws Exception {
        try (PolicyLimiter limiter = limiter(STORE, Servers.PATIENCE)) {
            for (int i = 0; i < 8; i++) {
                Verdict sync = limiter.check(domain, quotaRequest("sync"), 1);
                Verdict async = limiter.checkAsync(domain, quotaRequest("async"), 1)
                        .toCompletableFuture()
                        .get(HANG.toSeconds(), TimeUnit.SECONDS);
                assertEquals(sync.allowed(), async.allowed(), "check " + i + ": " + sync + " / " + async);
                for (int d = 0; d < 3; d++) {
                    DescriptorVerdict s = sync.descriptor(d);
                    DescriptorVerdict a = async.descriptor(d);
                    assertEquals(s.outcome(), a.outcome(), "check " + i + ", descriptor " + d);
                    assertEquals(s.remaining(), a.remaining(), "check " + i + ", descriptor " + d);
                }
            }

            List<Verdict> verdicts = all(limiter, quotaRequest("all"));
            assertFalse(verdicts.stream().anyMatch(Verdict::storeFailed), "every check answered by Redis");
            long admitted = verdicts.stream().filter(Verdict::allowed).count();
            long withRoom = verdicts.stream()
                    .filter(v -> v.descriptor(1).outcome() == Outcome.ALLOWED
                            || v.descriptor(2).outcome() == Outcome.ALLOWED)
                    .count();
            assertEquals(withRoom, admitted, "admitted exactly when a quota limit had room");
            assertTrue(admitted >= 5 && admitted <= 8, "admitted " + admitted);
            Verdict after = limiter.check(domain, quotaRequest("all"), 1);
            assertEquals(0, after.descriptor(1).remaining(), "q1 took exactly 3");
            assertEquals(0, after.descriptor(2).remaining(), "q2 took exactly 5");
            assertEquals(1000 - CHECKS - 1, after.descriptor(0).remaining(), "the enforced limit took every check");
        }
    }

    private static List<Descriptor> quotaRequest(String key) {
        return List.of(Descriptor.of("e", key), Descriptor.of("q1", key), Descriptor.of("q2", key));
    }

    /**
     * A server that answers nothing ({@code CLIENT PAUSE}): each of 8 checks sent at once is answered by the domain's
     * {@code deny} as timed out, none waits for the server; once it is back the counts are what they were, and the
     * configuration the checks held closes when replaced, so each let it go.
     */
    @Test
    void aStalledStoreAnswersEveryQueuedCheckByItsDeadlineWithTheDomainsAnswer() throws Exception {
        try (RedisServer server = RedisServers.start()) {
            RedisClient client = RedisClient.create(server.uri());
            client.setOptions(RedisStore.recommendedClientOptions());
            try (RedisStore store = RedisStore.builder(client)
                            .timeSource(TimeSource.CLOCK)
                            .failurePolicy(FailurePolicy.FAIL_OPEN)
                            .timeout(Servers.PATIENCE)
                            .build();
                    PolicyLimiter limiter = limiter(store, Duration.ofMillis(300))) {
                Await.until("a check answered by Redis", Await.GENEROUS, () -> !limiter.check(
                                domain, Descriptor.of("a", "warm"))
                        .storeFailed());
                assertTrue(limiter.check(domain, Descriptor.of("a", "stalled")).allowed(), "before the stall");
                Engine held = limiter.engineForTest();

                server.call("CLIENT", "PAUSE", "10000", "WRITE"); // holds every script
                List<CompletableFuture<Verdict>> during = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    during.add(limiter.checkAsync(domain, List.of(Descriptor.of("a", "stalled")), 1)
                            .toCompletableFuture());
                }
                for (CompletableFuture<Verdict> f : during) {
                    Verdict v = f.get(HANG.toSeconds(), TimeUnit.SECONDS);
                    assertTrue(v.storeTimedOut(), "answered by the deadline: " + v);
                    assertFalse(v.allowed(), "by the domain's deny: " + v);
                }
                limiter.update(policies("deny"));
                assertTrue(held != null && held.closed(), "every check let its configuration go");
                server.call("CLIENT", "UNPAUSE");

                Await.until(
                        "Redis answers again", Await.GENEROUS, () -> !limiter.check(domain, Descriptor.of("a", "after"))
                                .storeFailed());
                Verdict after = limiter.check(domain, Descriptor.of("a", "stalled"));
                assertEquals(300 - 2, after.descriptor(0).limits().get(0).remaining(), "nothing taken in the stall");
            } finally {
                client.shutdown();
            }
        }
    }
}
