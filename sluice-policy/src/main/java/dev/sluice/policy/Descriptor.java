package dev.sluice.policy;

import java.util.List;
import java.util.Objects;

/**
 * What a request is, for rate limiting: ordered key/value entries, as envoyproxy/ratelimit's descriptors. A
 * descriptor of N entries is matched against rules N levels deep. Immutable.
 *
 * <pre>{@code
 * Descriptor.of("client_id", "abc", "username", "bob")
 * }</pre>
 *
 * <p>Its hash is computed once, when it is made: the policy limiter finds what a descriptor it has seen resolves to
 * (rule and counter keys) by it, so a caller that passes the same or an equal descriptor again skips the matching; see
 * {@code docs/policies.md}, "Performance". The hash mixes every key and value in turn rather than summing them as
 * {@link List#hashCode()} does: with a sum, {@code client_id=client-0036, username=user-8786} and
 * {@code client_id=client-0037, username=user-8776} (the last digit of one value up, the tens of the other down) collide, and a log
 * of numbered clients and users falls into a few long chains.
 */
public final class Descriptor {

    /**
     * One entry.
     *
     * @param key   not empty
     * @param value not null; may be empty
     */
    public record Entry(String key, String value) {
        /** Validates both. */
        public Entry {
            Objects.requireNonNull(key, "key must not be null");
            Objects.requireNonNull(value, "value must not be null");
            if (key.isEmpty()) {
                throw new IllegalArgumentException("a descriptor key must not be empty");
            }
        }

        @Override
        public String toString() {
            return key + "=" + value;
        }
    }

    private final List<Entry> entries;
    private final int hash;

    private Descriptor(List<Entry> entries) {
        this.entries = entries;
        this.hash = hash(entries);
    }

    private static int hash(List<Entry> entries) {
        int h = entries.size();
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            h = mix(h ^ e.key().hashCode()) * 0x9E3779B1;
            h = mix(h ^ e.value().hashCode()) * 0x9E3779B1;
        }
        return mix(h);
    }

    /** MurmurHash3's finalizer: every bit of {@code h} moves every bit of the result. */
    private static int mix(int h) {
        h ^= h >>> 16;
        h *= 0x85EBCA6B;
        h ^= h >>> 13;
        h *= 0xC2B2AE35;
        return h ^ (h >>> 16);
    }

    /**
     * A descriptor of alternating keys and values: {@code of("client_id", "abc", "username", "bob")}.
     *
     * @throws IllegalArgumentException if no pair is given, the count is odd, or a key is empty
     * @throws NullPointerException     if any is null
     */
    public static Descriptor of(String... keysAndValues) {
        Objects.requireNonNull(keysAndValues, "keysAndValues must not be null");
        if (keysAndValues.length == 0 || keysAndValues.length % 2 != 0) {
            throw new IllegalArgumentException(
                    "keys and values come in pairs, at least one; was " + keysAndValues.length + " strings");
        }
        Entry[] entries = new Entry[keysAndValues.length / 2];
        for (int i = 0; i < entries.length; i++) {
            entries[i] = new Entry(keysAndValues[2 * i], keysAndValues[2 * i + 1]);
        }
        // a descriptor is often built per request: the two-element list holds its entries without an array
        return new Descriptor(
                switch (entries.length) {
                    case 1 -> List.of(entries[0]);
                    case 2 -> List.of(entries[0], entries[1]);
                    default -> List.of(entries);
                });
    }

    /**
     * A descriptor of {@code entries}, in order.
     *
     * @throws IllegalArgumentException if {@code entries} is empty
     */
    public static Descriptor of(List<Entry> entries) {
        List<Entry> copy = List.copyOf(entries);
        if (copy.isEmpty()) {
            throw new IllegalArgumentException("a descriptor has at least one entry, was none");
        }
        return new Descriptor(copy);
    }

    /** The entries, in order. */
    public List<Entry> entries() {
        return entries;
    }

    /** The number of entries: the depth of the rule it can match. */
    public int size() {
        return entries.size();
    }

    @Override
    public boolean equals(Object o) {
        return o == this || (o instanceof Descriptor d && d.hash == hash && d.entries.equals(entries));
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        return entries.toString();
    }
}
