package dev.sluice.http;

import dev.sluice.policy.Descriptor;
import jakarta.servlet.http.HttpServletRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Descriptors built from what any request carries, for an ordinary API, as Envoy's rate-limit actions build them: each
 * descriptor is a list of {@link RequestEntry entries}, each entry a key and where its value comes from (the remote
 * address, a header such as an API key, the authenticated principal, the path, a constant). Immutable and thread-safe.
 *
 * <pre>{@code
 * DescriptorExtractor perKeyAndAddress = RequestDescriptors.builder()
 *         .descriptor(RequestEntry.header("api_key", "X-Api-Key"))              // [api_key=<the key>]
 *         .descriptor(RequestEntry.remoteAddress("remote_address"))             // [remote_address=<the address>]
 *         .build();
 * }</pre>
 *
 * A request is checked under every descriptor it can fill, together (all or nothing: a refused request consumes from
 * none of them). As with Envoy, a descriptor one of whose entries has no value in a request (no such header, no
 * principal) is left out for that request; a request that fills none is not limited. The cost is one hit.
 */
public final class RequestDescriptors implements DescriptorExtractor {

    private final List<List<RequestEntry>> descriptors;

    private RequestDescriptors(List<List<RequestEntry>> descriptors) {
        this.descriptors = descriptors;
    }

    /** A builder with no descriptor yet. */
    public static Builder builder() {
        return new Builder();
    }

    /** The descriptors, each as its entries in order. */
    public List<List<RequestEntry>> descriptors() {
        return descriptors;
    }

    @Override
    public Optional<Extraction> extract(HttpServletRequest request) {
        List<Descriptor> filled = new ArrayList<>(descriptors.size());
        descriptors:
        for (List<RequestEntry> entries : descriptors) {
            List<Descriptor.Entry> values = new ArrayList<>(entries.size());
            for (RequestEntry e : entries) {
                String v = e.value().apply(request);
                if (v == null || v.isEmpty()) {
                    continue descriptors;
                }
                values.add(new Descriptor.Entry(e.key(), v));
            }
            filled.add(Descriptor.of(values));
        }
        return filled.isEmpty() ? Optional.empty() : Optional.of(Extraction.of(filled));
    }

    /** Builds a {@link RequestDescriptors}. Not thread-safe. */
    public static final class Builder {

        private final List<List<RequestEntry>> descriptors = new ArrayList<>();

        private Builder() {}

        /**
         * Adds a descriptor of these entries, in order (its first entry matches a rule at the top of the policy, the
         * next one a rule nested in it, …).
         *
         * @throws IllegalArgumentException if there is no entry
         */
        public Builder descriptor(RequestEntry... entries) {
            return descriptor(List.of(entries));
        }

        /**
         * Adds a descriptor of these entries, in order.
         *
         * @throws IllegalArgumentException if {@code entries} is empty
         */
        public Builder descriptor(List<RequestEntry> entries) {
            Objects.requireNonNull(entries, "entries must not be null");
            if (entries.isEmpty()) {
                throw new IllegalArgumentException("a descriptor needs at least one entry");
            }
            descriptors.add(List.copyOf(entries));
            return this;
        }

        /**
         * Builds the extractor.
         *
         * @throws IllegalStateException if no descriptor was added
         */
        public RequestDescriptors build() {
            if (descriptors.isEmpty()) {
                throw new IllegalStateException("no descriptor: add one with descriptor(RequestEntry...)");
            }
            return new RequestDescriptors(List.copyOf(descriptors));
        }
    }

    @Override
    public String toString() {
        return descriptors.stream()
                .map(d -> d.stream().map(RequestEntry::toString).collect(Collectors.joining(", ", "[", "]")))
                .collect(Collectors.joining(", ", "RequestDescriptors[", "]"));
    }
}
