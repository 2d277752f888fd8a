package dev.sluice.bench;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.RateLimiter;
import dev.sluice.policy.Descriptor;
import dev.sluice.policy.OAuthDescriptors;
import dev.sluice.policy.Outcome;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.policy.Verdict;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the policy layer adds to a decision: {@link PolicyLimiter#check} of the request shapes an application sends,
 * against the bare {@link RateLimiter} calls that take the same permits, in memory, over a handful of keys. Every
 * limit is far above what the run can ask ({@link Load#ALLOWED}'s, or a day's limit larger still), so nothing is
 * ever refused. The thread count is JMH's {@code -t} (one unless told).
 *
 * <p>The configuration ({@link #configuration}), one domain:
 *
 * <ul>
 *   <li>{@code client_id}: one limit, with {@code username} nested under it, one limit;</li>
 *   <li>{@code api_key}: two limits, a per-second one and a per-day one, both must pass;</li>
 *   <li>{@code tenant}: one limit in {@code mode: dry_run};</li>
 *   <li>{@code remote_address} and {@code path}: one limit each.</li>
 * </ul>
 *
 * <p>The benchmarks:
 *
 * <ul>
 *   <li>{@code checkOneLimit}: {@code [client_id=c]}, the top rule, one limit;</li>
 *   <li>{@code checkTwoLimits}: {@code [api_key=k]}, per second and per day;</li>
 *   <li>{@code checkNested}: {@code [client_id=c, username=u]}, the nested rule, one limit;</li>
 *   <li>{@code checkDryRun}: {@code [tenant=t]}, one dry-run limit;</li>
 *   <li>{@code checkFromRequest}: {@code checkNested} with the descriptors built per request by
 *       {@link OAuthDescriptors#forTokenRequest}, as a token endpoint would;</li>
 *   <li>{@code checkThree}: Envoy's usual request of three descriptors, {@code [remote_address=a]},
 *       {@code [client_id=c]}, {@code [path=p]}, each matching a rule of one limit: one all-or-nothing decision of
 *       three parts;</li>
 *   <li>{@code checkOneLimitMetered}: {@code checkOneLimit} on a limiter with a Micrometer
 *       {@link SimpleMeterRegistry};</li>
 *   <li>{@code checkOneLimitDetailed}: {@code checkOneLimitMetered} with {@code detailed_metric: true} on the
 *       {@code client_id} rule, a counter per client id (up to the default cap of 1,000 values);</li>
 *   <li>{@code tryAcquire}: the bare limiter of the same algorithm and limit on pre-built keys of the same count;</li>
 *   <li>{@code tryAcquireAllOfOne}: the same decision through {@link RateLimiter#tryAcquireAll} of one part;</li>
 *   <li>{@code tryAcquireAllOfTwo}: {@link RateLimiter#tryAcquireAll} of the two limits of {@code api_key} on bare
 *       limiters, the least an all-or-nothing check of two limits does;</li>
 *   <li>{@code tryAcquireAllOfThree}: {@link RateLimiter#tryAcquireAll} of three keys on the bare limiter, the least
 *       {@code checkThree} does.</li>
 * </ul>
 *
 * <p>Every check's descriptors are built once per key beforehand (but in {@code checkFromRequest}), as an
 * application holding them would pass them; each setup checks that the request matches the rule meant.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
public class PolicyBench {

    static final String DOMAIN = "oauth-token";

    /** The per-day limit of {@code api_key}: more than a run can ask, and within the format's bound (2<sup>32</sup>−1). */
    static final long PER_DAY = 4_000_000_000L;

    /** The per-second limit of {@code api_key}: {@link Load#ALLOWED}'s rate. */
    static final long PER_SECOND = Load.ALLOWED.limit * (1000 / Load.ALLOWED.window.toMillis());

    @Param({"FIXED_WINDOW", "SLIDING_TAIL"})
    public Algorithm algorithm;

    /** Keys (of each shape: (client, user) pairs, api keys, tenants), walked by {@link KeyCursor}. */
    @Param({"8"})
    public int keys;

    private PolicyLimiter policy;
    private PolicyLimiter metered;
    private PolicyLimiter detailed;
    private RateLimiter bare;
    private RateLimiter bareSecond;
    private RateLimiter bareDay;
    private String[] clients;
    /** The clients of the nested requests: 4 of them, each with {@code keys / 4} users. */
    private String[] nestedClients;

    private String[] users;
    private List<List<Descriptor>> oneLimit;
    private List<List<Descriptor>> twoLimits;
    private List<List<Descriptor>> nested;
    private List<List<Descriptor>> dryRun;
    private String[] names;
    private List<List<Acquisition>> partsOfOne;
    private List<List<Acquisition>> partsOfTwo;
    private List<List<Descriptor>> three;
    private List<List<Acquisition>> partsOfThree;

    /** The configuration, every limit under {@code algorithm}. */
    static String configuration(Algorithm algorithm) {
        String limit = String.format(
                Locale.ROOT,
                "{window: %dms, requests_per_unit: %d}",
                Load.ALLOWED.window.toMillis(),
                Load.ALLOWED.limit);
        return "domain: " + DOMAIN + "\n"
                + "algorithm: " + algorithm.name().toLowerCase(Locale.ROOT) + "\n"
                + "descriptors:\n"
                + "  - key: client_id\n"
                + "    rate_limits: [" + limit + "]\n"
                + "    descriptors:\n"
                + "      - key: username\n"
                + "        rate_limits: [" + limit + "]\n"
                + "  - key: api_key\n"
                + "    rate_limits:\n"
                + "      - {unit: second, requests_per_unit: " + PER_SECOND + "}\n"
                + "      - {unit: day, requests_per_unit: " + PER_DAY + "}\n"
                + "  - key: tenant\n"
                + "    mode: dry_run\n"
                + "    rate_limits: [" + limit + "]\n"
                + "  - key: remote_address\n"
                + "    rate_limits: [" + limit + "]\n"
                + "  - key: path\n"
                + "    rate_limits: [" + limit + "]\n";
    }

    @Setup(Level.Trial)
    public void setUp() {
        Policies policies = Policies.parse("oauth-token.yaml", configuration(algorithm));
        policy = PolicyLimiter.builder(policies).build();
        metered = PolicyLimiter.builder(policies)
                .meterRegistry(new SimpleMeterRegistry())
                .build();
        detailed = PolicyLimiter.builder(Policies.parse(
                        "detailed.yaml",
                        configuration(algorithm)
                                .replace("  - key: client_id\n", "  - key: client_id\n    detailed_metric: true\n")))
                .meterRegistry(new SimpleMeterRegistry())
                .build();
        bare = RateLimiter.builder(algorithm)
                .limit(Load.ALLOWED.limit, Load.ALLOWED.window)
                .build();
        bareSecond = RateLimiter.builder(algorithm)
                .limit(PER_SECOND, Duration.ofSeconds(1))
                .build();
        bareDay = RateLimiter.builder(algorithm)
                .limit(PER_DAY, Duration.ofDays(1))
                .build();
        names = Keys.generate(keys);
        clients = new String[keys];
        users = new String[keys];
        nestedClients = new String[keys];
        oneLimit = new ArrayList<>(keys);
        twoLimits = new ArrayList<>(keys);
        nested = new ArrayList<>(keys);
        dryRun = new ArrayList<>(keys);
        partsOfOne = new ArrayList<>(keys);
        partsOfTwo = new ArrayList<>(keys);
        three = new ArrayList<>(keys);
        partsOfThree = new ArrayList<>(keys);
        for (int i = 0; i < keys; i++) {
            clients[i] = "client-" + i;
            users[i] = "user-" + i;
            nestedClients[i] = "client-" + (i % 4);
            oneLimit.add(List.of(Descriptor.of("client_id", clients[i])));
            twoLimits.add(List.of(Descriptor.of("api_key", "key-" + i)));
            nested.add(OAuthDescriptors.forTokenRequest("password", nestedClients[i], users[i]));
            dryRun.add(List.of(Descriptor.of("tenant", "tenant-" + i)));
            expect(policy.check(DOMAIN, oneLimit.get(i), 1), "client_id", 1, Outcome.ALLOWED);
            expect(metered.check(DOMAIN, oneLimit.get(i), 1), "client_id", 1, Outcome.ALLOWED);
            expect(policy.check(DOMAIN, twoLimits.get(i), 1), "api_key", 2, Outcome.ALLOWED);
            expect(policy.check(DOMAIN, nested.get(i), 1), "client_id.username", 1, Outcome.ALLOWED);
            expect(policy.check(DOMAIN, dryRun.get(i), 1), "tenant", 1, Outcome.ALLOWED);
            three.add(List.of(
                    Descriptor.of("remote_address", "10.0.0." + i),
                    Descriptor.of("client_id", clients[i]),
                    Descriptor.of("path", "/api/" + i)));
            Verdict v = policy.check(DOMAIN, three.get(i), 1);
            if (!v.allowed() || v.descriptors().size() != 3 || v.descriptor(2).outcome() != Outcome.ALLOWED) {
                throw new IllegalStateException("setup request of three descriptors not allowed: " + v);
            }
            partsOfOne.add(List.of(new Acquisition(bare, names[i], 1)));
            partsOfThree.add(List.of(
                    new Acquisition(bare, "a|" + names[i], 1),
                    new Acquisition(bare, "c|" + names[i], 1),
                    new Acquisition(bare, "p|" + names[i], 1)));
            partsOfTwo.add(List.of(new Acquisition(bareSecond, names[i], 1), new Acquisition(bareDay, names[i], 1)));
            if (!bare.tryAcquire(names[i]).allowed()) {
                throw new IllegalStateException("setup request denied for " + names[i]);
            }
        }
    }

    private static void expect(Verdict v, String rule, int limits, Outcome outcome) {
        boolean ok = v.allowed()
                && v.descriptor(0).rule().map(r -> r.path().equals(rule)).orElse(false)
                && v.descriptor(0).limits().size() == limits
                && v.descriptor(0).outcome() == outcome;
        if (!ok) {
            throw new IllegalStateException("setup request not " + outcome + " by rule " + rule + ": " + v);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        policy.close();
        metered.close();
        bare.close();
        bareSecond.close();
        bareDay.close();
    }

    @Benchmark
    public Verdict checkOneLimit(KeyCursor cursor, Outcomes outcomes) {
        Verdict v = policy.check(DOMAIN, oneLimit.get(cursor.next()), 1);
        outcomes.count(v.allowed());
        return v;
    }

    @Benchmark
    public Verdict checkTwoLimits(KeyCursor cursor, Outcomes outcomes) {
        Verdict v = policy.check(DOMAIN, twoLimits.get(cursor.next()), 1);
        outcomes.count(v.allowed());
        return v;
    }

    @Benchmark
    public Verdict checkNested(KeyCursor cursor, Outcomes outcomes) {
        Verdict v = policy.check(DOMAIN, nested.get(cursor.next()), 1);
        outcomes.count(v.allowed());
        return v;
    }

    @Benchmark
    public Verdict checkDryRun(KeyCursor cursor, Outcomes outcomes) {
        Verdict v = policy.check(DOMAIN, dryRun.get(cursor.next()), 1);
        outcomes.count(v.allowed());
        return v;
    }

    @Benchmark
    public Verdict checkThree(KeyCursor cursor, Outcomes outcomes) {
        Verdict v = policy.check(DOMAIN, three.get(cursor.next()), 1);
        outcomes.count(v.allowed());
        return v;
    }

    @Benchmark
    public Verdict checkFromRequest(KeyCursor cursor, Outcomes outcomes) {
        int i = cursor.next();
        Verdict v = policy.check(DOMAIN, OAuthDescriptors.forTokenRequest("password", nestedClients[i], users[i]), 1);
        outcomes.count(v.allowed());
        return v;
    }

    @Benchmark
    public Verdict checkOneLimitMetered(KeyCursor cursor, Outcomes outcomes) {
        Verdict v = metered.check(DOMAIN, oneLimit.get(cursor.next()), 1);
        outcomes.count(v.allowed());
        return v;
    }

    @Benchmark
    public Verdict checkOneLimitDetailed(KeyCursor cursor, Outcomes outcomes) {
        Verdict v = detailed.check(DOMAIN, oneLimit.get(cursor.next()), 1);
        outcomes.count(v.allowed());
        return v;
    }

    @Benchmark
    public Decision tryAcquire(KeyCursor cursor, Outcomes outcomes) {
        Decision d = bare.tryAcquire(names[cursor.next()]);
        outcomes.count(d.allowed());
        return d;
    }

    @Benchmark
    public JointDecision tryAcquireAllOfOne(KeyCursor cursor, Outcomes outcomes) {
        JointDecision d = RateLimiter.tryAcquireAll(partsOfOne.get(cursor.next()));
        outcomes.count(d.allowed());
        return d;
    }

    @Benchmark
    public JointDecision tryAcquireAllOfTwo(KeyCursor cursor, Outcomes outcomes) {
        JointDecision d = RateLimiter.tryAcquireAll(partsOfTwo.get(cursor.next()));
        outcomes.count(d.allowed());
        return d;
    }

    @Benchmark
    public JointDecision tryAcquireAllOfThree(KeyCursor cursor, Outcomes outcomes) {
        JointDecision d = RateLimiter.tryAcquireAll(partsOfThree.get(cursor.next()));
        outcomes.count(d.allowed());
        return d;
    }
}
