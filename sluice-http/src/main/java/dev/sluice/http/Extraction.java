package dev.sluice.http;

import dev.sluice.policy.Descriptor;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link DescriptorExtractor} read from a request: the descriptors to check and the cost of the request under
 * each limit they touch (the {@code hits} of {@link dev.sluice.policy.PolicyLimiter#check}). Immutable.
 *
 * @param descriptors not empty
 * @param hits        at least 1
 */
public record Extraction(List<Descriptor> descriptors, long hits) {

    /**
     * Copies the descriptors and checks both.
     *
     * @throws IllegalArgumentException if {@code descriptors} is empty or {@code hits < 1}
     */
    public Extraction {
        Objects.requireNonNull(descriptors, "descriptors must not be null");
        descriptors = List.copyOf(descriptors);
        if (descriptors.isEmpty()) {
            throw new IllegalArgumentException("descriptors must not be empty");
        }
        if (hits < 1) {
            throw new IllegalArgumentException("hits must be >= 1, was " + hits);
        }
    }

    /** The descriptors at a cost of one hit. */
    public static Extraction of(List<Descriptor> descriptors) {
        return new Extraction(descriptors, 1);
    }

    /** One descriptor at a cost of one hit. */
    public static Extraction of(Descriptor descriptor) {
        return new Extraction(List.of(descriptor), 1);
    }
}
