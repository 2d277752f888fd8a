package dev.sluice.server.replay;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.policy.Limit;
import dev.sluice.policy.Policies;
import dev.sluice.policy.Rule;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One rule's limit tried at several candidate values on the replayed log, in one pass over the spilled requests:
 * for each candidate, how many keys it would refuse at least once and how many requests in all. Each key's requests
 * run alone under a {@link RateLimiter} of the rule's algorithm and window at the candidate limit (the rule's first
 * limit, when it has several), as {@link NeededLimit} runs them: the rollout question "how low can this go before
 * anyone but the outliers is refused".
 */
final class Sweep {
    final String domain;
    final Rule rule;
    final Limit limit;
    final long[] candidates;
    final long[] keysRefused;
    final long[] requestsRefused;
    /** Keys of the rule, and their requests. */
    long keys;

    long requests;
    /** Wall time the pass took, in nanoseconds. */
    long nanos;

    private Sweep(String domain, Rule rule, long[] candidates) {
        this.domain = domain;
        this.rule = rule;
        this.limit = rule.limits().get(0);
        this.candidates = candidates.clone();
        this.keysRefused = new long[candidates.length];
        this.requestsRefused = new long[candidates.length];
    }

    /** A parsed {@code RULE=L1,L2,…}. */
    record Spec(String rule, List<Long> limits) {
        /**
         * Parses {@code RULE=L1,L2,…}.
         *
         * @throws IllegalArgumentException naming what is wrong
         */
        static Spec parse(String text) {
            int eq = text.lastIndexOf('=');
            if (eq <= 0 || eq == text.length() - 1) {
                throw new IllegalArgumentException("'" + text + "' is not RULE=L1,L2,… (e.g. client_id=20,50,100)");
            }
            String[] parts = text.substring(eq + 1).split(",", -1);
            long[] limits = new long[parts.length];
            for (int i = 0; i < parts.length; i++) {
                try {
                    limits[i] = Long.parseLong(parts[i].strip());
                } catch (NumberFormatException e) {
                    limits[i] = -1;
                }
                if (limits[i] < 1) {
                    throw new IllegalArgumentException(
                            "candidate limit '" + parts[i] + "' in '" + text + "' is not a whole number ≥ 1");
                }
            }
            return new Spec(
                    text.substring(0, eq),
                    java.util.Arrays.stream(limits).boxed().toList());
        }
    }

    /** A rule of {@code policies} with its domain. */
    record Found(String domain, Rule rule) {}

    /**
     * The rule {@code name} names: {@code domain.path}, as {@code /rlconfig} lists it, or its path alone when one
     * domain has it.
     *
     * @throws IllegalArgumentException if no rule, or several, have that name, or the rule has no limit to sweep
     */
    static Found find(Policies policies, String name) {
        List<Found> found = new ArrayList<>();
        List<String> all = new ArrayList<>();
        for (String d : policies.domains()) {
            for (Rule r : policies.rules(d)) {
                all.add(d + "." + r.path());
                if (name.equals(d + "." + r.path()) || name.equals(r.path())) {
                    found.add(new Found(d, r));
                }
            }
        }
        if (found.size() > 1) {
            List<String> names =
                    found.stream().map(f -> f.domain() + "." + f.rule().path()).toList();
            throw new IllegalArgumentException("rule '" + name + "' is in several domains: name one of " + names);
        }
        if (found.isEmpty()) {
            throw new IllegalArgumentException("no rule '" + name + "': the rules are " + all);
        }
        Found f = found.get(0);
        Limit l = f.rule().limits().get(0);
        if (l.unlimited() || l.algorithm() == null || l.window() == null) {
            throw new IllegalArgumentException("rule '" + name + "' is unlimited: it has no limit to sweep");
        }
        return f;
    }

    /**
     * Runs the sweep over {@code replayed}'s requests, each part's on a thread of its own when there are several: a
     * row is counted by one part, and each key runs alone, so the parts add up.
     */
    static Sweep run(Replayed replayed, Found found, long[] candidates) throws IOException {
        Sweep s = new Sweep(found.domain(), found.rule(), candidates);
        long start = System.nanoTime();
        List<Replayer> parts = replayed.parts();
        List<Sweep> each = new ArrayList<>();
        for (int i = 0; i < parts.size(); i++) {
            each.add(new Sweep(found.domain(), found.rule(), candidates));
        }
        if (parts.size() == 1) {
            each.get(0).add(parts.get(0));
        } else {
            List<java.util.concurrent.CompletableFuture<Void>> running = new ArrayList<>();
            for (int i = 0; i < parts.size(); i++) {
                Sweep one = each.get(i);
                Replayer part = parts.get(i);
                running.add(java.util.concurrent.CompletableFuture.runAsync(
                        () -> {
                            try {
                                one.add(part);
                            } catch (IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        },
                        Replay::daemon));
            }
            Replay.joinAll(running);
        }
        for (Sweep one : each) {
            s.keys += one.keys;
            s.requests += one.requests;
            for (int c = 0; c < candidates.length; c++) {
                s.keysRefused[c] += one.keysRefused[c];
                s.requestsRefused[c] += one.requestsRefused[c];
            }
        }
        s.nanos = System.nanoTime() - start;
        return s;
    }

    /** Adds the keys of the rule that {@code part} counted, each under every candidate. */
    private void add(Replayer part) throws IOException {
        List<Row> rows = part.rows();
        @Nullable String[] keys = new String[rows.size()];
        for (Row row : rows) {
            if (row.rule == rule && row.domain.equals(domain)) {
                keys[row.id] = Integer.toString(row.id);
                this.keys++;
                requests += row.requests;
            }
        }
        Algorithm a = Objects.requireNonNull(limit.algorithm(), "checked by find");
        Duration w = Objects.requireNonNull(limit.window(), "checked by find");
        VirtualClock clock = new VirtualClock();
        RateLimiter[] limiters = new RateLimiter[candidates.length];
        BitSet[] refusedKeys = new BitSet[candidates.length];
        for (int c = 0; c < candidates.length; c++) {
            limiters[c] =
                    RateLimiter.builder(a).limit(candidates[c], w).clock(clock).build();
            refusedKeys[c] = new BitSet(rows.size());
        }
        try {
            part.readSpill((row, time, hits) -> {
                String key = row < keys.length ? keys[row] : null;
                if (key == null) {
                    return;
                }
                clock.set(time);
                for (int c = 0; c < limiters.length; c++) {
                    if (hits > candidates[c]
                            || !limiters[c].tryAcquire(key, hits).allowed()) {
                        requestsRefused[c]++;
                        refusedKeys[c].set(row);
                    }
                }
            });
        } finally {
            for (RateLimiter l : limiters) {
                l.close();
            }
        }
        for (int c = 0; c < candidates.length; c++) {
            keysRefused[c] += refusedKeys[c].cardinality();
        }
    }
}
