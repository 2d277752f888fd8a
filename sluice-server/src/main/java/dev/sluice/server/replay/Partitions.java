package dev.sluice.server.replay;

import dev.sluice.policy.Descriptor;
import dev.sluice.policy.Policies;
import dev.sluice.policy.Rule;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * How a replay splits its requests between threads without changing a decision: by the value of a descriptor key that
 * every counter of the domain is kept per ({@link Policies#keysOfEveryCounter}), so that requests of different parts
 * never count against one counter, and each part, decided in the log's order on its own thread by its own policy
 * limiter, decides exactly what one limiter deciding the whole log would.
 *
 * <p>Worked example: the OAuth policy of {@code docs/rollout.md} keeps every counter per {@code client_id} (per client,
 * per user of a client), so {@code [client_id=a]} and {@code [client_id=a, username=bob]} go to the part of {@code a}
 * and {@code [client_id=b]} to the part of {@code b}, possibly another. Add a rule {@code generic_key=global} with one
 * limit for every request and no key is on every counting rule's path: the replay runs on one thread. A request whose
 * descriptors name two parts ({@code [client_id=a]} and {@code [client_id=b]} in one request) joins their counters;
 * the configuration cannot rule that out, so the router finds it ({@link #of} answers -1) and the replay is run again
 * on one thread.
 *
 * <p>A request of a domain that counts nothing, or whose descriptors lack the key, touches no counter, and goes to part
 * 0 (or to the part its other descriptors name).
 */
final class Partitions {
    /** The most parts: more threads than this gain nothing on the machines a replay runs on. */
    static final int MAX = 16;

    private final int count;
    /** Per domain that counts something, the key whose value picks the part. */
    private final Map<String, String> keys;

    private final String description;

    /** Per domain, per descriptor number ({@link TimedRequest#descriptorIds()}): its part + 2, 1 for none, 0 unknown. */
    private final Map<String, byte[]> knownByDomain = new HashMap<>();

    private @Nullable String lastDomain;
    private @Nullable String lastKey;
    private byte[] known = new byte[0];

    private Partitions(int count, Map<String, String> keys, String description) {
        this.count = count;
        this.keys = keys;
        this.description = description;
    }

    /** One part: the requests decided in order on one thread, for {@code why}. */
    static Partitions one(String why) {
        return new Partitions(1, Map.of(), "decided on one thread: " + why);
    }

    /**
     * The parts for {@code policies} on up to {@code threads} threads: one when {@code threads} is 1, when the log is
     * standard input (which cannot be read again should a request join two parts) or when a domain has no key that
     * every counter of it is kept per.
     */
    static Partitions of(Policies policies, int threads, boolean standardInput) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, was " + threads);
        }
        if (threads == 1) {
            return one("--threads 1");
        }
        if (standardInput) {
            return one("the log is standard input, which cannot be read again if a request joins two threads' keys");
        }
        Map<String, String> keys = new HashMap<>();
        for (String domain : policies.domains()) {
            if (!counts(policies.rules(domain))) {
                continue;
            }
            List<String> every = policies.keysOfEveryCounter(domain);
            if (every.isEmpty()) {
                return one("no descriptor key of domain " + domain
                        + " is on the path of every limited rule, so a limit may be shared across keys");
            }
            keys.put(domain, every.get(0));
        }
        int n = Math.min(threads, MAX);
        return new Partitions(
                n,
                Map.copyOf(keys),
                "decided on " + n + " threads, the requests split by the value of "
                        + String.join(", ", new java.util.TreeSet<>(keys.values())));
    }

    private static boolean counts(List<Rule> rules) {
        return rules.stream().anyMatch(Replayed::counts);
    }

    /** How many parts. */
    int count() {
        return count;
    }

    /** How the requests were split, or why they were not: a line of the summary. */
    String description() {
        return description;
    }

    /**
     * The part of {@code r}; -1 when its descriptors name two parts. Remembers each descriptor's part by the number
     * the log reader gave it, so a descriptor seen before costs an array read: not thread-safe.
     */
    int of(TimedRequest r) {
        if (count == 1) {
            return 0;
        }
        String domain = r.domain();
        if (!domain.equals(lastDomain)) {
            lastDomain = domain;
            lastKey = keys.get(domain);
            known = knownByDomain.computeIfAbsent(domain, d -> new byte[1024]);
        }
        String key = lastKey;
        if (key == null) {
            return 0;
        }
        int part = -1;
        List<Descriptor> descriptors = r.descriptors();
        int[] ids = r.descriptorIds();
        for (int i = 0; i < descriptors.size(); i++) {
            int p = partOf(domain, descriptors.get(i), ids[i], key);
            if (p < 0) {
                continue;
            }
            if (part >= 0 && p != part) {
                return -1;
            }
            part = p;
        }
        return Math.max(part, 0);
    }

    /** The part {@code d}'s value of {@code key} names, -1 when it has none; remembered by {@code id} if it is one. */
    private int partOf(String domain, Descriptor d, int id, String key) {
        byte[] k = known;
        if (id >= 0 && id < k.length && k[id] != 0) {
            return k[id] - 2;
        }
        String value = valueOf(d, key);
        int p = value == null ? -1 : part(value);
        if (id >= 0) {
            if (id >= k.length) {
                k = java.util.Arrays.copyOf(k, Math.max(id + 1, 2 * k.length));
                known = k;
                knownByDomain.put(domain, k);
            }
            k[id] = (byte) (p + 2);
        }
        return p;
    }

    /** The part of the requests whose key has {@code value}. */
    int part(String value) {
        int h = value.hashCode() * 0x9E3779B9;
        return (int) (((h ^ (h >>> 16)) & 0xFFFF_FFFFL) % count);
    }

    private static @Nullable String valueOf(Descriptor d, String key) {
        List<Descriptor.Entry> entries = d.entries();
        for (int i = 0; i < entries.size(); i++) {
            Descriptor.Entry e = entries.get(i);
            if (e.key().equals(key)) {
                return e.value();
            }
        }
        return null;
    }

    /** The key and the two values of {@code r}'s descriptors that name different parts, for the summary. */
    String joined(TimedRequest r) {
        String key = keys.get(r.domain());
        String first = null;
        for (Descriptor d : r.descriptors()) {
            String value = key == null ? null : valueOf(d, key);
            if (value == null) {
                continue;
            }
            if (first == null) {
                first = value;
            } else if (part(value) != part(first)) {
                return key + "=" + first + " and " + key + "=" + value;
            }
        }
        return "two keys";
    }
}
