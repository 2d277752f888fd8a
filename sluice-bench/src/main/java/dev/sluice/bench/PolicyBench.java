package dev.sluice.bench;

import dev.sluice.Acquisition;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.JointDecision;
import dev.sluice.RateLimiter;
import dev.sluice.policy.Descriptor;
import dev.sluice.policy.OAuthDescriptors;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.policy.Verdict;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the policy layer adds to a decision: {@link PolicyLimiter#check} of an OAuth user-grant request,
 * {@code [client_id=c, username=u]}, on the two-level configuration of {@code docs/policies.md} (a per-client rule
 * with a per-user rule nested under it), against the bare {@link RateLimiter#tryAcquire(String)} of the same
 * algorithm and limit, in memory, one thread, over a handful of (client, user) pairs. Both limits are
 * {@link Load#ALLOWED}'s, so nothing is ever refused.
 *
 * <ul>
 *   <li>{@code check}: the descriptors built once per pair beforehand, as an application holding them would pass
 *       them;</li>
 *   <li>{@code checkFromRequest}: the descriptors built per request by
 *       {@link OAuthDescriptors#forTokenRequest}, as a token endpoint would;</li>
 *   <li>{@code tryAcquire}: the bare limiter on pre-built keys of the same count;</li>
 *   <li>{@code tryAcquireAllOfOne}: the same decision through {@link RateLimiter#tryAcquireAll} of one part (the
 *       part pre-built), the path the check takes to the store, to tell its cost from the policy layer's own.</li>
 * </ul>
 *
 * <p>The check matches the request to the nested rule (one limit), builds its counter key
 * ({@code oauth-token|client_id=c|username=u#0}), takes it through {@link RateLimiter#tryAcquireAll} and answers a
 * {@link Verdict} with one descriptor verdict; the bare decision does the last step's work on one key.
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

    @Param({"FIXED_WINDOW", "SLIDING_TAIL"})
    public Algorithm algorithm;

    /** (client, user) pairs, walked by {@link KeyCursor}. */
    @Param({"8"})
    public int keys;

    private PolicyLimiter policy;
    private RateLimiter bare;
    private String[] clients;
    private String[] users;
    private List<List<Descriptor>> requests;
    private String[] names;
    private List<List<Acquisition>> parts;

    /** The configuration: the per-client rule and the per-user rule under it, both at {@link Load#ALLOWED}. */
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
                + "        rate_limits: [" + limit + "]\n";
    }

    @Setup(Level.Trial)
    public void setUp() {
        policy = PolicyLimiter.builder(Policies.parse("oauth-token.yaml", configuration(algorithm)))
                .build();
        bare = RateLimiter.builder(algorithm)
                .limit(Load.ALLOWED.limit, Load.ALLOWED.window)
                .build();
        names = Keys.generate(keys);
        clients = new String[keys];
        users = new String[keys];
        requests = new ArrayList<>(keys);
        parts = new ArrayList<>(keys);
        for (int i = 0; i < keys; i++) {
            clients[i] = "client-" + (i % 4);
            users[i] = "user-" + i;
            requests.add(OAuthDescriptors.forTokenRequest("password", clients[i], users[i]));
            Verdict v = policy.check(DOMAIN, requests.get(i), 1);
            if (!v.allowed()
                    || !v.descriptor(0)
                            .rule()
                            .map(r -> r.path().equals("client_id.username"))
                            .orElse(false)) {
                throw new IllegalStateException("setup request not allowed by the nested rule: " + v);
            }
            parts.add(List.of(new Acquisition(bare, names[i], 1)));
            if (!bare.tryAcquire(names[i]).allowed()) {
                throw new IllegalStateException("setup request denied for " + names[i]);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        policy.close();
        bare.close();
    }

    @Benchmark
    @Threads(1)
    public Verdict check(KeyCursor cursor, Outcomes outcomes) {
        Verdict v = policy.check(DOMAIN, requests.get(cursor.next()), 1);
        outcomes.count(v.allowed());
        return v;
    }

    @Benchmark
    @Threads(1)
    public Verdict checkFromRequest(KeyCursor cursor, Outcomes outcomes) {
        int i = cursor.next();
        Verdict v = policy.check(DOMAIN, OAuthDescriptors.forTokenRequest("password", clients[i], users[i]), 1);
        outcomes.count(v.allowed());
        return v;
    }

    @Benchmark
    @Threads(1)
    public Decision tryAcquire(KeyCursor cursor, Outcomes outcomes) {
        Decision d = bare.tryAcquire(names[cursor.next()]);
        outcomes.count(d.allowed());
        return d;
    }

    @Benchmark
    @Threads(1)
    public JointDecision tryAcquireAllOfOne(KeyCursor cursor, Outcomes outcomes) {
        JointDecision d = RateLimiter.tryAcquireAll(parts.get(cursor.next()));
        outcomes.count(d.allowed());
        return d;
    }
}
