package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The engine keeps what a descriptor resolved to (rule and counter keys): checking the same object again, in another
 * domain, on another limiter or after a reload, must answer exactly as a fresh descriptor would.
 */
class DescriptorReuseTest {

    static final String WEB =
            """
            domain: web
            descriptors:
              - key: client_id
                rate_limit: {unit: second, requests_per_unit: 4}
            """;

    static final String API =
            """
            domain: api
            descriptors:
              - key: client_id
                rate_limit: {unit: second, requests_per_unit: 2}
            """;

    final ManualClock clock = Clocks.atHourStart();

    PolicyLimiter limiter(Policies policies) {
        return PolicyLimiter.builder(policies).clock(clock).build();
    }

    static int admitted(PolicyLimiter limiter, String domain, Descriptor d, int tries) {
        int n = 0;
        for (int i = 0; i < tries; i++) {
            if (limiter.check(domain, List.of(d), 1).allowed()) {
                n++;
            }
        }
        return n;
    }

    @Test
    void oneDescriptorInTwoDomainsCountsUnderEachDomainsRule() {
        try (PolicyLimiter l = limiter(Policies.parse(Map.of("web.yaml", WEB, "api.yaml", API)))) {
            Descriptor d = Descriptor.of("client_id", "abc");
            int web = 0;
            int api = 0;
            for (int i = 0; i < 10; i++) { // alternating, so that each check finds the other domain's resolution
                web += l.check("web", List.of(d), 1).allowed() ? 1 : 0;
                api += l.check("api", List.of(d), 1).allowed() ? 1 : 0;
            }
            assertEquals(4, web);
            assertEquals(2, api);
            assertEquals(
                    "api",
                    l.check("api", List.of(d), 1)
                            .descriptor(0)
                            .rule()
                            .orElseThrow()
                            .domain());
            assertEquals(
                    Outcome.NO_LIMIT,
                    l.check("other", List.of(d), 1).descriptor(0).outcome(),
                    "an unknown domain after a known one");
        }
    }

    @Test
    void oneDescriptorOnTwoLimitersCountsOnEach() {
        try (PolicyLimiter four = limiter(Policies.parse("web.yaml", WEB));
                PolicyLimiter two = limiter(Policies.parse("api.yaml", API))) {
            Descriptor d = Descriptor.of("client_id", "abc");
            int a = 0;
            int b = 0;
            for (int i = 0; i < 10; i++) {
                a += four.check("web", List.of(d), 1).allowed() ? 1 : 0;
                b += two.check("api", List.of(d), 1).allowed() ? 1 : 0;
            }
            assertEquals(4, a);
            assertEquals(2, b);
        }
    }

    @Test
    void aReloadIsSeenByADescriptorCheckedBefore() {
        String limitOf =
                "domain: web\ndescriptors:\n  - key: client_id\n    rate_limit: {unit: second, requests_per_unit: %d}\n";
        try (PolicyLimiter l = limiter(Policies.parse("web.yaml", limitOf.formatted(2)))) {
            Descriptor d = Descriptor.of("client_id", "abc");
            assertEquals(2, admitted(l, "web", d, 5));

            Policies five = Policies.parse("web.yaml", limitOf.formatted(5));
            l.update(five);
            clock.advance(Duration.ofSeconds(1));
            Verdict v = l.check("web", List.of(d), 1);
            assertTrue(v.allowed());
            Rule rule = v.descriptor(0).rule().orElseThrow();
            assertEquals(five.rules("web").get(0), rule, "the rule of the configuration now in force");
            assertEquals(5, rule.limits().get(0).requestsPerUnit());
            assertEquals(4, admitted(l, "web", d, 10), "five in the second, one of them above");

            l.update(
                    Policies.parse(
                            "web.yaml",
                            "domain: web\ndescriptors:\n  - key: tenant\n    rate_limit: {unit: second, requests_per_unit: 1}\n"));
            Verdict none = l.check("web", List.of(d), 1);
            assertTrue(none.allowed());
            assertEquals(Outcome.NO_LIMIT, none.descriptor(0).outcome(), "no rule of the new configuration matches");
        }
    }

    /** {@link OneOrManyDescriptorsTest}'s comparison, with a pool of descriptors each checked many times. */
    @Test
    void reusedDescriptorsAnswerAsTheGeneralPath() {
        Policies policies = Policies.parse("test.yaml", OneOrManyDescriptorsTest.RULES);
        Random random = new Random(11);
        List<Descriptor> pool = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            pool.add(OneOrManyDescriptorsTest.randomDescriptor(random));
        }
        try (PolicyLimiter fast = limiter(policies);
                PolicyLimiter general = limiter(policies)) {
            int refused = 0;
            for (int i = 0; i < 5_000; i++) {
                Descriptor d = pool.get(random.nextInt(pool.size()));
                long hits = 1 + random.nextInt(2);
                Verdict a = fast.check("test-domain", List.of(d), hits);
                Verdict b = general.check("test-domain", List.of(Descriptor.of(d.entries())), hits);
                OneOrManyDescriptorsTest.assertSameVerdict(b, a, "request " + i + ": " + d + " x" + hits);
                refused += a.allowed() ? 0 : 1;
                if (random.nextInt(20) == 0) {
                    clock.advance(Duration.ofMillis(random.nextInt(3000)));
                }
            }
            assertTrue(refused > 0, "the pool's descriptors reach their limits");
            assertFalse(refused == 5_000);
        }
    }

    /**
     * Threads that check more descriptors than the table of resolutions has slots, each descriptor by several
     * threads, equal objects and the same one, so that slots are overwritten under running checks: every descriptor
     * is counted under its own counter, exactly its limit admitted.
     */
    @Test
    void threadsOverwritingTheTableEachCountUnderTheirOwnCounter() throws Exception {
        eachCountsUnderItsOwnCounter(PolicyLimiter.DEFAULT_RECENT_RESOLUTIONS, 2 * Engine.RECENT);
    }

    /** The same, with a table that grows (to twice its first size) while the threads check. */
    @Test
    void threadsGrowingTheTableEachCountUnderTheirOwnCounter() throws Exception {
        eachCountsUnderItsOwnCounter(2 * Engine.RECENT, 4 * Engine.RECENT);
    }

    private void eachCountsUnderItsOwnCounter(int recentResolutions, int clients) throws Exception {
        Policies policies = Policies.parse(
                "web.yaml",
                "domain: web\ndescriptors:\n  - key: client_id\n    rate_limit: {unit: hour, requests_per_unit: 3}\n");
        int threads = 4; // each checks every client once: 4 tries of a limit of 3
        List<Descriptor> shared = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            shared.add(Descriptor.of("client_id", "c" + c));
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (PolicyLimiter l = PolicyLimiter.builder(policies)
                .clock(clock)
                .recentResolutions(recentResolutions)
                .build()) {
            CyclicBarrier start = new CyclicBarrier(threads);
            List<Future<int[]>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                boolean fresh = t % 2 == 0; // half the threads build an equal descriptor per check
                int offset = t * clients / threads;
                results.add(pool.submit(() -> {
                    start.await();
                    int[] admitted = new int[clients];
                    for (int k = 0; k < clients; k++) {
                        int c = (offset + k) % clients;
                        Descriptor d = fresh ? Descriptor.of("client_id", "c" + c) : shared.get(c);
                        admitted[c] += l.check("web", List.of(d), 1).allowed() ? 1 : 0;
                    }
                    return admitted;
                }));
            }
            int[] total = new int[clients];
            for (Future<int[]> f : results) {
                int[] admitted = f.get(60, TimeUnit.SECONDS);
                for (int c = 0; c < clients; c++) {
                    total[c] += admitted[c];
                }
            }
            for (int c = 0; c < clients; c++) {
                assertEquals(3, total[c], "client c" + c);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A table allowed more slots than the default starts at the default and doubles as descriptors are resolved anew,
     * never past its bound, and answers as the default table does: the limit of each of 5,000 clients, and no more.
     */
    @Test
    void aTableAllowedToGrowFollowsTheDescriptorsInUse() {
        Policies policies = Policies.parse("web.yaml", WEB);
        int bound = 2 * Engine.RECENT;
        try (PolicyLimiter fixed = limiter(policies);
                PolicyLimiter growing = PolicyLimiter.builder(policies)
                        .clock(clock)
                        .recentResolutions(bound - 1) // rounded up to a power of two
                        .build()) {
            Engine engine = java.util.Objects.requireNonNull(growing.engineForTest());
            assertEquals(Engine.RECENT, engine.recentSlotsForTest(), "it starts at the default");
            for (int round = 0; round < 2; round++) {
                for (int c = 0; c < 5_000; c++) {
                    Descriptor d = Descriptor.of("client_id", "c" + c);
                    int client = c;
                    assertEquals(
                            admitted(fixed, "web", d, 3), admitted(growing, "web", d, 3), () -> "client c" + client);
                }
                assertEquals(bound, engine.recentSlotsForTest(), "grown to its bound, and no further");
            }
            assertEquals(0, admitted(growing, "web", Descriptor.of("client_id", "c7"), 1), "its limit of 4 taken");
            assertEquals(
                    Engine.RECENT,
                    java.util.Objects.requireNonNull(fixed.engineForTest()).recentSlotsForTest(),
                    "the default never grows");
        }
    }

    /**
     * A descriptor whose hash equals a kept one's, in the same pair of slots (a table of two), is told apart by its
     * values: each of such a pair counts under its own counter, whichever was kept first, as an equal but new descriptor
     * counts under the kept one's. A descriptor's hash is made of its strings' hashes, and {@code "Aa"} and {@code "BB"}
     * have the same one, as {@code "1012"} and {@code "14669600"} do.
     */
    @Test
    void descriptorsOfEqualHashesCountEachUnderItsOwnCounter() {
        List<Descriptor[]> pairs = List.of(
                new Descriptor[] {Descriptor.of("client_id", "Aa"), Descriptor.of("client_id", "BB")},
                new Descriptor[] {Descriptor.of("client_id", "1012"), Descriptor.of("client_id", "14669600")},
                new Descriptor[] {
                    Descriptor.of("client_id", "Aa", "username", "BB"),
                    Descriptor.of("client_id", "BB", "username", "Aa")
                });
        for (Descriptor[] pair : pairs) {
            assertEquals(pair[0].hashCode(), pair[1].hashCode(), "the pair's hashes: " + pair[0] + ", " + pair[1]);
            for (int first = 0; first < 2; first++) {
                Descriptor a = pair[first];
                Descriptor b = pair[1 - first];
                try (PolicyLimiter l = PolicyLimiter.builder(Policies.parse("web.yaml", WEB + NESTED))
                        .clock(clock)
                        .recentResolutions(2)
                        .build()) {
                    assertEquals(4, admitted(l, "web", a, 6), a + " first");
                    assertEquals(4, admitted(l, "web", b, 6), b + ", of the same hash as " + a);
                    assertEquals(0, admitted(l, "web", Descriptor.of(a.entries()), 1), "an equal " + a);
                    assertEquals(0, admitted(l, "web", Descriptor.of(b.entries()), 1), "an equal " + b);
                }
            }
        }
    }

    /** A rule under {@link #WEB}'s {@code client_id}: a client's users, four a second each. */
    static final String NESTED =
            """
                descriptors:
                  - key: username
                    rate_limit: {unit: second, requests_per_unit: 4}
            """;

    @Test
    void recentResolutionsIsChecked() {
        PolicyLimiter.Builder b = PolicyLimiter.builder(Policies.parse("web.yaml", WEB));
        IllegalArgumentException zero = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> b.recentResolutions(0));
        assertEquals("recentResolutions must be between 1 and 4194304, was 0", zero.getMessage());
        IllegalArgumentException over = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> b.recentResolutions(PolicyLimiter.MAX_RECENT_RESOLUTIONS + 1));
        assertEquals("recentResolutions must be between 1 and 4194304, was 4194305", over.getMessage());
        try (PolicyLimiter small = b.recentResolutions(3).build()) {
            assertEquals(
                    4, java.util.Objects.requireNonNull(small.engineForTest()).recentSlotsForTest());
        }
    }
}
