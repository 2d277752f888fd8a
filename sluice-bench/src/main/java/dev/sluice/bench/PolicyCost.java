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
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * What the policy layer adds to a decision, as thread CPU time, which a busy machine disturbs far less than
 * {@link PolicyBench}'s throughput: {@code PolicyLimiter.check} of the request shapes of {@link PolicyBench} against
 * the bare {@code RateLimiter.tryAcquire} under it, in memory, with the default clock, over 8 keys; nothing is ever
 * refused. The descriptors are built once per key beforehand, as {@code PolicyBench}'s, and the bare keys too, but
 * in {@code checkFromRequest}, which builds the descriptors per request, and {@code tryAcquireFromRequest}, its bare
 * counterpart, which builds the key per request from the same client and user; {@code checkThree} and
 * {@code tryAcquireAllOfThree} are {@code PolicyBench}'s; {@code checkManyKeys} and {@code tryAcquireManyKeys} are
 * {@code checkOneLimit} and {@code tryAcquire} over 65,536 keys in a scattered order, more than the CPU's caches hold,
 * where a check waits on memory more than it computes; {@code checkManyParsed} and {@code tryAcquireManyParsed} are the
 * same with the request parsed as a service parses it, a new descriptor (or key) of new strings decoded from bytes per
 * request. Each subject runs in a JVM of its own (so that one
 * subject's call sites do not make another's megamorphic), best and median of 20 rounds of 2,000,000 decisions after
 * 10 warm-up rounds. The subjects run twice, in two orders, so that a change in the machine's load during the run
 * shows as a difference between the two.
 *
 * <pre>java -cp sluice-bench/target/benchmarks.jar dev.sluice.bench.PolicyCost [FIXED_WINDOW|SLIDING_TAIL]</pre>
 */
public final class PolicyCost {

    private static final int KEYS = 8;
    private static final int WARM_ROUNDS = 10;
    private static final int ROUNDS = 20;
    private static final int OPS_PER_ROUND = 2_000_000;
    private static final List<String> SUBJECTS = List.of(
            "tryAcquire",
            "checkOneLimit",
            "checkNested",
            "checkDryRun",
            "tryAcquireFromRequest",
            "checkFromRequest",
            "tryAcquireAllOfThree",
            "checkThree",
            "tryAcquireManyKeys",
            "checkManyKeys",
            "tryAcquireManyParsed",
            "checkManyParsed");

    /**
     * The keys of the many-key subjects: more than the CPU's caches hold the state of, as a service limiting by remote
     * address meets them; a power of two, walked in a scattered order.
     */
    private static final int MANY_KEYS = 1 << 16;

    private static volatile Object sink;

    private PolicyCost() {}

    public static void main(String[] args) throws IOException, InterruptedException {
        if (args.length == 3 && args[0].equals("--one")) {
            one(args[1], Algorithm.valueOf(args[2]));
            return;
        }
        Algorithm algorithm = args.length > 0 ? Algorithm.valueOf(args[0]) : Algorithm.FIXED_WINDOW;
        System.out.println("| pass | subject | best ns/op | median ns/op |");
        System.out.println("|---|---|--:|--:|");
        List<String> reversed = new ArrayList<>(SUBJECTS);
        Collections.reverse(reversed);
        int pass = 0;
        for (List<String> order : List.of(SUBJECTS, reversed)) {
            String prefix = "| " + ++pass + " ";
            for (String subject : order) {
                CpuRounds.inNewJvm(
                        PolicyCost.class,
                        List.of("--one", subject, algorithm.name()),
                        line -> System.out.println(prefix + line));
            }
        }
    }

    private static void one(String subject, Algorithm algorithm) {
        Runnable round =
                switch (subject) {
                    case "tryAcquire" -> bare(algorithm);
                    case "tryAcquireFromRequest" -> bareFromRequest(algorithm);
                    case "checkFromRequest" -> fromRequest(algorithm);
                    case "tryAcquireAllOfThree" -> bareOfThree(algorithm);
                    case "tryAcquireManyKeys" -> bareManyKeys(algorithm);
                    case "checkManyKeys" -> checkManyKeys(algorithm);
                    case "tryAcquireManyParsed" -> bareManyParsed(algorithm);
                    case "checkManyParsed" -> checkManyParsed(algorithm);
                    default -> check(subject, algorithm);
                };
        double[] ns = CpuRounds.nanosPerOperation(round, WARM_ROUNDS, ROUNDS, OPS_PER_ROUND);
        System.out.printf(Locale.ROOT, "| %s | %.1f | %.1f |%n", subject, ns[0], ns[ROUNDS / 2]);
    }

    private static Runnable bare(Algorithm algorithm) {
        RateLimiter limiter = RateLimiter.builder(algorithm)
                .limit(Load.ALLOWED.limit, Load.ALLOWED.window)
                .build();
        String[] names = Keys.generate(KEYS);
        return () -> {
            Decision d = null;
            for (int i = 0; i < OPS_PER_ROUND; i++) {
                d = limiter.tryAcquire(names[i & (KEYS - 1)]);
                if (!d.allowed()) {
                    throw new IllegalStateException("refused: " + d);
                }
            }
            sink = d;
        };
    }

    /** The bare counterpart of {@code checkThree}: {@code tryAcquireAll} of three keys on one limiter. */
    private static Runnable bareOfThree(Algorithm algorithm) {
        RateLimiter limiter = RateLimiter.builder(algorithm)
                .limit(Load.ALLOWED.limit, Load.ALLOWED.window)
                .build();
        String[] names = Keys.generate(KEYS);
        List<List<Acquisition>> parts = new ArrayList<>(KEYS);
        for (String name : names) {
            parts.add(List.of(
                    new Acquisition(limiter, "a|" + name, 1),
                    new Acquisition(limiter, "c|" + name, 1),
                    new Acquisition(limiter, "p|" + name, 1)));
        }
        return () -> {
            JointDecision d = null;
            for (int i = 0; i < OPS_PER_ROUND; i++) {
                d = RateLimiter.tryAcquireAll(parts.get(i & (KEYS - 1)));
                if (!d.allowed()) {
                    throw new IllegalStateException("refused: " + d);
                }
            }
            sink = d;
        };
    }

    private static PolicyLimiter policy(Algorithm algorithm) {
        return PolicyLimiter.builder(Policies.parse("oauth-token.yaml", PolicyBench.configuration(algorithm)))
                .build();
    }

    /**
     * The bare counterpart of {@code checkFromRequest}: the key built per request from the client and user, as an
     * application limiting without policies would build it.
     */
    private static Runnable bareFromRequest(Algorithm algorithm) {
        RateLimiter limiter = RateLimiter.builder(algorithm)
                .limit(Load.ALLOWED.limit, Load.ALLOWED.window)
                .build();
        String[] clients = clients();
        String[] users = users();
        return () -> {
            Decision d = null;
            for (int i = 0; i < OPS_PER_ROUND; i++) {
                int k = i & (KEYS - 1);
                d = limiter.tryAcquire(clients[k] + '|' + users[k]);
                if (!d.allowed()) {
                    throw new IllegalStateException("refused: " + d);
                }
            }
            sink = d;
        };
    }

    private static String[] clients() {
        String[] clients = new String[KEYS];
        for (int i = 0; i < KEYS; i++) {
            clients[i] = "client-" + (i % 4);
        }
        return clients;
    }

    private static String[] users() {
        String[] users = new String[KEYS];
        for (int i = 0; i < KEYS; i++) {
            users[i] = "user-" + i;
        }
        return users;
    }

    /** {@code checkNested} with the descriptors built per request, as a token endpoint would. */
    private static Runnable fromRequest(Algorithm algorithm) {
        PolicyLimiter policy = policy(algorithm);
        String[] clients = clients();
        String[] users = users();
        return () -> {
            Verdict v = null;
            for (int i = 0; i < OPS_PER_ROUND; i++) {
                int k = i & (KEYS - 1);
                v = policy.check(
                        PolicyBench.DOMAIN, OAuthDescriptors.forTokenRequest("password", clients[k], users[k]), 1);
                if (!v.allowed()) {
                    throw new IllegalStateException("refused: " + v);
                }
            }
            sink = v;
        };
    }

    /** The index of the {@code i}-th request among {@link #MANY_KEYS}: every key once per lap, in a scattered order. */
    private static int scattered(int i) {
        return (i * 40_503) & (MANY_KEYS - 1); // an odd multiplier: a permutation of the keys
    }

    /** The bare counterpart of {@code checkManyKeys}: {@code tryAcquire} on {@link #MANY_KEYS} pre-built keys. */
    private static Runnable bareManyKeys(Algorithm algorithm) {
        RateLimiter limiter = RateLimiter.builder(algorithm)
                .limit(Load.ALLOWED.limit, Load.ALLOWED.window)
                .build();
        String[] names = Keys.generate(MANY_KEYS);
        return () -> {
            Decision d = null;
            for (int i = 0; i < OPS_PER_ROUND; i++) {
                d = limiter.tryAcquire(names[scattered(i)]);
                if (!d.allowed()) {
                    throw new IllegalStateException("refused: " + d);
                }
            }
            sink = d;
        };
    }

    /**
     * {@code checkOneLimit} over {@link #MANY_KEYS} client ids, with a table of resolutions that holds them all (as the
     * service sizes it by its heap): where a check waits on memory more than it computes.
     */
    private static Runnable checkManyKeys(Algorithm algorithm) {
        PolicyLimiter policy = manyKeysPolicy(algorithm);
        List<List<Descriptor>> requests = new ArrayList<>(MANY_KEYS);
        for (int i = 0; i < MANY_KEYS; i++) {
            requests.add(List.of(Descriptor.of("client_id", "client-" + i)));
        }
        return () -> {
            Verdict v = null;
            for (int i = 0; i < OPS_PER_ROUND; i++) {
                v = policy.check(PolicyBench.DOMAIN, requests.get(scattered(i)), 1);
                if (!v.allowed()) {
                    throw new IllegalStateException("refused: " + v);
                }
            }
            sink = v;
        };
    }

    /** The policy of {@code checkOneLimit}, with a table of resolutions that holds {@link #MANY_KEYS} descriptors. */
    private static PolicyLimiter manyKeysPolicy(Algorithm algorithm) {
        return PolicyLimiter.builder(Policies.parse("oauth-token.yaml", PolicyBench.configuration(algorithm)))
                .recentResolutions(4 * MANY_KEYS)
                .build();
    }

    /**
     * {@code tryAcquireManyKeys} with each key decoded from its bytes per request, as a service reads it from the wire:
     * a new string, whose contents the store compares with the key it keeps.
     */
    private static Runnable bareManyParsed(Algorithm algorithm) {
        RateLimiter limiter = RateLimiter.builder(algorithm)
                .limit(Load.ALLOWED.limit, Load.ALLOWED.window)
                .build();
        byte[][] names = bytes(Keys.generate(MANY_KEYS));
        return () -> {
            Decision d = null;
            for (int i = 0; i < OPS_PER_ROUND; i++) {
                d = limiter.tryAcquire(new String(names[scattered(i)], StandardCharsets.ISO_8859_1));
                if (!d.allowed()) {
                    throw new IllegalStateException("refused: " + d);
                }
            }
            sink = d;
        };
    }

    /**
     * {@code checkManyKeys} with each request's descriptor made per request from its key and value decoded from bytes,
     * as the service parses them: an equal descriptor, never the same one, whose resolution is found by comparing.
     */
    private static Runnable checkManyParsed(Algorithm algorithm) {
        PolicyLimiter policy = manyKeysPolicy(algorithm);
        String[] ids = new String[MANY_KEYS];
        Arrays.setAll(ids, i -> "client-" + i);
        byte[][] values = bytes(ids);
        byte[] key = "client_id".getBytes(StandardCharsets.ISO_8859_1);
        return () -> {
            Verdict v = null;
            for (int i = 0; i < OPS_PER_ROUND; i++) {
                Descriptor d = Descriptor.of(
                        new String(key, StandardCharsets.ISO_8859_1),
                        new String(values[scattered(i)], StandardCharsets.ISO_8859_1));
                v = policy.check(PolicyBench.DOMAIN, List.of(d), 1);
                if (!v.allowed()) {
                    throw new IllegalStateException("refused: " + v);
                }
            }
            sink = v;
        };
    }

    private static byte[][] bytes(String[] strings) {
        byte[][] bytes = new byte[strings.length][];
        Arrays.setAll(bytes, i -> strings[i].getBytes(StandardCharsets.ISO_8859_1));
        return bytes;
    }

    private static Runnable check(String subject, Algorithm algorithm) {
        PolicyLimiter policy = policy(algorithm);
        List<List<Descriptor>> requests = new ArrayList<>(KEYS);
        for (int i = 0; i < KEYS; i++) {
            requests.add(
                    switch (subject) {
                        case "checkOneLimit" -> List.of(Descriptor.of("client_id", "client-" + i));
                        case "checkNested" -> OAuthDescriptors.forTokenRequest(
                                "password", "client-" + (i % 4), "user-" + i);
                        case "checkDryRun" -> List.of(Descriptor.of("tenant", "tenant-" + i));
                        case "checkThree" -> List.of(
                                Descriptor.of("remote_address", "10.0.0." + i),
                                Descriptor.of("client_id", "client-" + i),
                                Descriptor.of("path", "/api/" + i));
                        default -> throw new IllegalArgumentException("no such subject: " + subject);
                    });
        }
        return () -> {
            Verdict v = null;
            for (int i = 0; i < OPS_PER_ROUND; i++) {
                v = policy.check(PolicyBench.DOMAIN, requests.get(i & (KEYS - 1)), 1);
                if (!v.allowed()) {
                    throw new IllegalStateException("refused: " + v);
                }
            }
            sink = v;
        };
    }
}
