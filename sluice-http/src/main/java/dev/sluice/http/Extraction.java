package dev.sluice.http;

import dev.sluice.policy.Descriptor;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link DescriptorExtractor} read from a request: the descriptors to check and the cost of the request under
 * each limit of each descriptor (the {@code hits} of {@link dev.sluice.policy.PolicyLimiter#check(String, List,
 * long[])}), as Envoy's per-descriptor {@code hits_addend}. Whatever the costs, the request is one decision, all or
 * nothing. Immutable.
 */
public final class Extraction {
    private final List<Descriptor> descriptors;
    private final long[] costs;

    /**
     * The descriptors, each at a cost of {@code hits}.
     *
     * @throws IllegalArgumentException if {@code descriptors} is empty or {@code hits < 1}
     */
    public Extraction(List<Descriptor> descriptors, long hits) {
        this(descriptors, filled(Objects.requireNonNull(descriptors, "descriptors must not be null"), hits));
    }

    private Extraction(List<Descriptor> descriptors, long[] costs) {
        this.descriptors = List.copyOf(descriptors);
        if (this.descriptors.isEmpty()) {
            throw new IllegalArgumentException("descriptors must not be empty");
        }
        if (costs.length != this.descriptors.size()) {
            throw new IllegalArgumentException(
                    "one cost per descriptor: " + this.descriptors.size() + " descriptors, " + costs.length + " costs");
        }
        for (int i = 0; i < costs.length; i++) {
            if (costs[i] < 1) {
                throw new IllegalArgumentException("costs[" + i + "] must be >= 1, was " + costs[i]);
            }
        }
        this.costs = costs;
    }

    private static long[] filled(List<Descriptor> descriptors, long hits) {
        if (hits < 1) {
            throw new IllegalArgumentException("hits must be >= 1, was " + hits);
        }
        long[] costs = new long[descriptors.size()];
        Arrays.fill(costs, hits);
        return costs;
    }

    /** The descriptors at a cost of one hit. */
    public static Extraction of(List<Descriptor> descriptors) {
        return new Extraction(descriptors, 1);
    }

    /** One descriptor at a cost of one hit. */
    public static Extraction of(Descriptor descriptor) {
        return new Extraction(List.of(descriptor), 1);
    }

    /**
     * The descriptors, {@code descriptors.get(i)} at a cost of {@code costs[i]}.
     *
     * @throws IllegalArgumentException if {@code descriptors} is empty, {@code costs} is not of its length, or a cost
     *                                  is below 1
     */
    public static Extraction withCosts(List<Descriptor> descriptors, long... costs) {
        Objects.requireNonNull(descriptors, "descriptors must not be null");
        Objects.requireNonNull(costs, "costs must not be null");
        return new Extraction(descriptors, costs.clone());
    }

    /** The descriptors to check, not empty. */
    public List<Descriptor> descriptors() {
        return descriptors;
    }

    /** The cost of the request under each limit of {@code descriptors().get(i)}, at least 1. */
    public long cost(int i) {
        return costs[i];
    }

    /** The costs, one per descriptor, in a new array. */
    public long[] costs() {
        return costs.clone();
    }

    @Override
    public boolean equals(@Nullable Object o) {
        return o instanceof Extraction e && descriptors.equals(e.descriptors) && Arrays.equals(costs, e.costs);
    }

    @Override
    public int hashCode() {
        return 31 * descriptors.hashCode() + Arrays.hashCode(costs);
    }

    @Override
    public String toString() {
        return "Extraction[descriptors=" + descriptors + ", costs=" + Arrays.toString(costs) + "]";
    }
}
