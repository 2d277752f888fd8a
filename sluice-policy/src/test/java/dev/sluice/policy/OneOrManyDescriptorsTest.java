package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A descriptor is decided alike alone and among others ({@link Engine#decide}, the one path, which Envoy's usual
 * request of several descriptors takes as a request of one does): two limiters on one hand-moved clock, each on its
 * own in-memory store, take the same random descriptors, one alone, the other in a request with descriptors that no
 * rule matches around it, and the verdicts of the descriptor must be the same, field by field, as must the counts left
 * behind. The counter keys a check resolves are checked against the ones a fresh engine builds.
 */
class OneOrManyDescriptorsTest {

    /** Every kind of rule the fast path meets: key-only, exact, wildcards shared or not, nested, unlimited, 0, modes. */
    static final String RULES =
            """
            domain: test-domain
            descriptors:
              - key: client_id
                rate_limit: {unit: second, requests_per_unit: 4}
                descriptors:
                  - key: username
                    rate_limit: {unit: minute, requests_per_unit: 3}
                  - key: username
                    value: bo*
                    rate_limit: {unit: minute, requests_per_unit: 2}
              - key: client_id
                value: trusted
                rate_limit: {unlimited: true}
              - key: client_id
                value: big
                rate_limits:
                  - {unit: second, requests_per_unit: 5}
                  - {window: 10s, requests_per_unit: 7, algorithm: sliding_tail}
              - key: client_id
                value: zero
                rate_limit: {unit: second, requests_per_unit: 0}
              - key: client_id
                value: half
                rate_limits:
                  - {unit: second, requests_per_unit: 0}
                  - {unit: minute, requests_per_unit: 9}
              - key: file
                value: te*
                share_threshold: true
                rate_limit: {unit: minute, requests_per_unit: 6}
              - key: file
                value: a|b*
                rate_limit: {unit: minute, requests_per_unit: 2}
              - key: tenant
                mode: dry_run
                rate_limits:
                  - {unit: second, requests_per_unit: 2}
                  - {unit: minute, requests_per_unit: 3}
              - key: ip
                mode: shadow_ban
                rate_limit: {unit: second, requests_per_unit: 2, algorithm: token_bucket}
              - key: region
                value: eu
                rate_limit: {unit: second, requests_per_unit: 3}
                descriptors:
                  - key: zone
                    value: a
                    rate_limit: {unit: second, requests_per_unit: 1}
                  - key: zone
                    rate_limit: {unit: second, requests_per_unit: 2}
            """;

    static final String[][] KEYS_AND_VALUES = {
        {"client_id", "abc", "big", "trusted", "zero", "half", "x=y|z#1\\", "client_id"},
        {"username", "bob", "bo", "ann", "b~o", ""},
        {"file", "test", "tea", "a|bc", "a|b", "other"},
        {"tenant", "t1", "t2"},
        {"ip", "1.2.3.4", "5.6.7.8"},
        {"region", "eu", "us"},
        {"zone", "a", "b"},
        {"unknown", "u"},
    };

    final ManualClock clock = Clocks.atHourStart();
    /** One model for both limiters, so their verdicts name the same rules. */
    final Policies policies = Policies.parse("test.yaml", RULES);

    PolicyLimiter limiter(boolean dryRun) {
        return PolicyLimiter.builder(policies).clock(clock).dryRun(dryRun).build();
    }

    static Descriptor randomDescriptor(Random random) {
        int depth = 1 + random.nextInt(3);
        List<Descriptor.Entry> entries = new ArrayList<>();
        for (int i = 0; i < depth; i++) {
            String[] kv;
            if (i == 0) {
                kv = KEYS_AND_VALUES[random.nextInt(KEYS_AND_VALUES.length)];
            } else if (entries.get(0).key().equals("region")) {
                kv = KEYS_AND_VALUES[6];
            } else {
                kv = KEYS_AND_VALUES[random.nextInt(2) == 0 ? 1 : random.nextInt(KEYS_AND_VALUES.length)];
            }
            entries.add(new Descriptor.Entry(kv[0], kv[1 + random.nextInt(kv.length - 1)]));
        }
        return Descriptor.of(entries);
    }

    /** A descriptor no rule of {@link #RULES} matches. */
    static final Descriptor NO_RULE = Descriptor.of("unknown", "u");

    /** A descriptor whose rule has one limit, unlimited: a limit (slot) of the request, with no counter. */
    static final Descriptor UNLIMITED = Descriptor.of("client_id", "trusted");

    void sameAnswers(boolean dryRun, long seed) {
        sameAnswers(dryRun, seed, List.of(NO_RULE), List.of(NO_RULE));
    }

    /**
     * Each random descriptor alone, and between {@code before} and {@code after}, descriptors that take no counter
     * (no rule, or an unlimited one): the same answer.
     */
    void sameAnswers(boolean dryRun, long seed, List<Descriptor> before, List<Descriptor> after) {
        try (PolicyLimiter alone = limiter(dryRun);
                PolicyLimiter among = limiter(dryRun)) {
            Random random = new Random(seed);
            for (int i = 0; i < 5_000; i++) {
                Descriptor d = randomDescriptor(random);
                long hits = 1 + random.nextInt(random.nextInt(10) == 0 ? 12 : 2);
                Verdict a = alone.check("test-domain", List.of(d), hits);
                List<Descriptor> request = new ArrayList<>(before);
                request.add(d);
                request.addAll(after);
                Verdict many = among.check("test-domain", request, hits);
                for (int j = 0; j < request.size(); j++) {
                    if (j != before.size()) {
                        assertEquals(
                                request.get(j) == NO_RULE ? Outcome.NO_LIMIT : Outcome.UNLIMITED,
                                many.descriptor(j).outcome());
                    }
                }
                Verdict b = new Verdict(
                        many.allowed(),
                        many.shadowBanRule().orElse(null),
                        many.storeFailure().orElse(null),
                        many.storeTimedOut(),
                        List.of(many.descriptor(before.size())));
                assertSameVerdict(b, a, "request " + i + ": " + d + " x" + hits);
                if (random.nextInt(20) == 0) {
                    clock.advance(Duration.ofMillis(random.nextInt(3000)));
                }
            }
        }
    }

    static void assertSameVerdict(Verdict expected, Verdict actual, String what) {
        // the answers a verdict of one limit gives without building its descriptor verdicts, then the rest
        assertEquals(expected.allowed(), actual.allowed(), what);
        assertEquals(expected.shadowBanRule(), actual.shadowBanRule(), what);
        assertEquals(expected.retryAfter(), actual.retryAfter(), what);
        assertEquals(expected.remaining(), actual.remaining(), what);
        assertEquals(expected.storeFailed(), actual.storeFailed(), what);
        assertEquals(expected.refusedNothing(), actual.refusedNothing(), what);
        assertEquals(expected.toString(), actual.toString(), what);
        assertEquals(expected.descriptors().size(), actual.descriptors().size(), what);
        for (int i = 0; i < expected.descriptors().size(); i++) {
            DescriptorVerdict e = expected.descriptor(i);
            DescriptorVerdict a = actual.descriptor(i);
            assertEquals(e.rule(), a.rule(), what);
            assertEquals(e.outcome(), a.outcome(), what);
            assertEquals(e.limits(), a.limits(), what);
        }
    }

    @Test
    void oneDescriptorAnswersAloneAsAmongOthers() {
        for (long seed = 1; seed <= 4; seed++) {
            sameAnswers(false, seed);
        }
    }

    @Test
    void oneDescriptorAnswersAloneAsAmongOthersInGlobalDryRun() {
        sameAnswers(true, 7);
    }

    /**
     * Its limits after slots of no counter (after one, and past the 64th limit of a request of more than three), and
     * before a request's many limits of no counter.
     */
    @Test
    void oneDescriptorAnswersAloneAsAfterLimitsOfNoCounter() {
        sameAnswers(false, 11, List.of(UNLIMITED), List.of(UNLIMITED));
        sameAnswers(false, 12, Collections.nCopies(66, UNLIMITED), List.of(NO_RULE, UNLIMITED));
        sameAnswers(false, 13, List.of(), Collections.nCopies(70, UNLIMITED)); // no counter past the 32nd limit
    }

    /**
     * Every request of two or three descriptors of the two {@code values}, in an order where the descriptor
     * {@code fastest} (-1: the last) changes its value from each request to the next of the same length.
     */
    static List<List<Descriptor>> kinds(List<Descriptor> values, int fastest) {
        List<List<Descriptor>> kinds = new ArrayList<>();
        for (int n = 2; n <= 3; n++) {
            int f = fastest < 0 ? n - 1 : fastest;
            for (int bits = 0; bits < 1 << n; bits++) {
                List<Descriptor> kind = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    int bit = i == f ? 0 : i < f ? n - 1 - i : n - i; // the fastest takes bit 0
                    kind.add(values.get(bits >> bit & 1));
                }
                kinds.add(kind);
            }
        }
        return kinds;
    }

    /**
     * Every request takes its own costs from its own counters, whatever the engine keeps of the requests before it.
     * With tables of two slots (the resolutions' one pair keeps both descriptors asked), every request of two or three
     * descriptors of two values is asked at costs 1 to 3: each kind at each cost in turn, then each cost over every
     * kind, ordered so that kinds next to each other differ in one descriptor only, the last, then the second. (An
     * engine that kept what a request asks of the store, by its descriptors and cost, failed this test when its match
     * ignored the cost, the second or the third descriptor.)
     */
    @Test
    void everyKindOfRequestTakesItsOwnCostsOnTablesOfTwoSlots() {
        Policies oneRule = Policies.parse(
                "t.yaml",
                """
                domain: d
                descriptors:
                  - {key: client_id, rate_limit: {unit: minute, requests_per_unit: 100000}}
                """);
        List<Descriptor> values = List.of(Descriptor.of("client_id", "a"), Descriptor.of("client_id", "b"));
        try (PolicyLimiter l =
                PolicyLimiter.builder(oneRule).clock(clock).recentResolutions(2).build()) {
            Map<Descriptor, Long> taken = new HashMap<>();
            int asked = 0;
            for (int order = 0; order < 3; order++) {
                // the descriptor whose value changes fastest from kind to kind: the last (orders 0 and 1), the second
                List<List<Descriptor>> kinds = kinds(values, order < 2 ? -1 : 1);
                for (int k = 0; k < kinds.size() * 3; k++) {
                    boolean kindByKind = order == 0; // each kind at costs 1, 2, 3; else each cost over every kind
                    List<Descriptor> request = kinds.get(kindByKind ? k / 3 : k % kinds.size());
                    long hits = 1 + (kindByKind ? k % 3 : k / kinds.size());
                    Verdict v = l.check("d", request, hits);
                    String what = "request " + asked++ + ": " + request + " x" + hits;
                    assertTrue(v.allowed(), what);
                    for (Descriptor d : request) {
                        taken.merge(d, hits, Long::sum);
                    }
                    for (int j = 0; j < request.size(); j++) {
                        assertEquals(
                                100_000 - taken.get(request.get(j)),
                                v.descriptor(j).limits().get(0).remaining(),
                                what + ", descriptor " + j);
                    }
                }
            }
        }
    }

    /**
     * Eight threads ask every kind of request of two or three descriptors of two values at costs 1 to 3, on tables of
     * two slots that they read and replace at once, against one limit: what each descriptor's counter took is exactly
     * the costs of the requests allowed (a refused request took nothing), and never more than the limit.
     */
    @Test
    void threadsOnTablesOfTwoSlotsTakeExactlyTheCostsAllowed() throws Exception {
        long limit = 3_000;
        Policies oneRule = Policies.parse(
                "t.yaml",
                """
                domain: d
                descriptors:
                  - {key: client_id, rate_limit: {unit: minute, requests_per_unit: %d}}
                """
                        .formatted(limit));
        List<Descriptor> values = List.of(Descriptor.of("client_id", "a"), Descriptor.of("client_id", "b"));
        List<List<Descriptor>> kinds = kinds(values, -1);
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (PolicyLimiter l =
                PolicyLimiter.builder(oneRule).clock(clock).recentResolutions(2).build()) {
            CyclicBarrier start = new CyclicBarrier(threads);
            List<Future<long[]>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                results.add(pool.submit(() -> {
                    Random random = new Random(seed);
                    long[] taken = new long[values.size()];
                    start.await();
                    for (int i = 0; i < 2_000; i++) {
                        List<Descriptor> request = kinds.get(random.nextInt(kinds.size()));
                        long hits = 1 + random.nextInt(3);
                        if (l.check("d", request, hits).allowed()) {
                            for (Descriptor d : request) {
                                taken[values.indexOf(d)] += hits;
                            }
                        }
                    }
                    return taken;
                }));
            }
            long[] taken = new long[values.size()];
            for (Future<long[]> f : results) {
                long[] one = f.get(60, TimeUnit.SECONDS);
                for (int v = 0; v < taken.length; v++) {
                    taken[v] += one[v];
                }
            }
            for (int v = 0; v < values.size(); v++) {
                assertTrue(taken[v] <= limit, values.get(v) + " took " + taken[v]);
                Verdict last = l.check("d", List.of(values.get(v)), 1);
                assertEquals(taken[v] < limit, last.allowed(), values.get(v) + " took " + taken[v]);
                assertEquals(
                        Math.max(0, limit - taken[v] - 1),
                        last.descriptor(0).limits().get(0).remaining(),
                        values.get(v) + " took " + taken[v]);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void keptKeysAreTheKeysAFreshEngineBuilds() {
        Random random = new Random(3);
        try (PolicyLimiter l = limiter(false)) {
            Engine engine = l.engineForTest();
            assertNotNull(engine);
            for (int i = 0; i < 2_000; i++) {
                Descriptor d = randomDescriptor(random);
                String[] keys = engine.keysForTest("test-domain", d);
                Optional<Rule> rule = policies.match("test-domain", d);
                if (rule.isEmpty()) {
                    assertNull(keys, d.toString());
                    continue;
                }
                assertNotNull(keys, d.toString());
                try (PolicyLimiter fresh = limiter(false)) {
                    Engine other = fresh.engineForTest();
                    assertNotNull(other);
                    assertArrayEquals(other.keysForTest("test-domain", Descriptor.of(d.entries())), keys, d.toString());
                }
                for (int j = 0; j < keys.length; j++) {
                    Limit limit = rule.get().limits().get(j);
                    assertEquals(limit.unlimited(), keys[j] == null, d + " limit " + j);
                    if (keys[j] != null) {
                        assertTrue(keys[j].startsWith("test-domain|") && keys[j].endsWith("#" + j), keys[j]);
                    }
                }
                assertSame(keys, engine.keysForTest("test-domain", d), "kept: " + d);
                assertSame(keys, engine.keysForTest("test-domain", Descriptor.of(d.entries())), "kept, equal: " + d);
            }
        }
    }

    @Test
    void theTableOfResolutionsStaysWithinItsBound() {
        try (PolicyLimiter l = limiter(false)) {
            Engine engine = l.engineForTest();
            assertNotNull(engine);
            for (int i = 0; i < 3 * Engine.RECENT; i++) {
                Descriptor d = Descriptor.of("client_id", "c" + i, "username", "u" + (i % 7));
                assertEquals(
                        "test-domain|client_id=c" + i + "|username=u" + (i % 7) + "#0",
                        engine.keysForTest("test-domain", d)[0]);
            }
            String big = "v".repeat(Engine.MAX_CACHED_CHARS);
            Descriptor longer = Descriptor.of("client_id", big);
            String[] keys = engine.keysForTest("test-domain", longer);
            assertEquals("test-domain|client_id=" + big + "#0", keys[0]);
            assertNotSame(keys, engine.keysForTest("test-domain", longer), "a descriptor this long is not kept");
        }
    }
}
