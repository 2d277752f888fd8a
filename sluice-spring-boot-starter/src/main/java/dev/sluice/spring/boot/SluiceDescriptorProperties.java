package dev.sluice.spring.boot;

import dev.sluice.http.RequestDescriptors;
import dev.sluice.http.RequestEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * One descriptor of {@code sluice.filter.descriptors}: its entries, each a descriptor key and where its value comes
 * from in a request, as Envoy's rate-limit actions build a descriptor. The list becomes a {@link RequestDescriptors}
 * extractor.
 *
 * <pre>{@code
 * sluice:
 *   filter:
 *     url-patterns: /api/*
 *     descriptors:
 *       - entries: [{key: api_key, source: header, header: X-Api-Key}]    # [api_key=<the key>]
 *       - entries: [{key: remote_address, source: remote-address}]        # [remote_address=<the address>]
 * }</pre>
 */
public class SluiceDescriptorProperties {

    /** The entries of the descriptor, in order: the first matches a rule at the top of the policy, the next a rule in it. */
    private List<Entry> entries = new ArrayList<>();

    /** The defaults: no entry. */
    public SluiceDescriptorProperties() {}

    public List<Entry> getEntries() {
        return entries;
    }

    public void setEntries(List<Entry> entries) {
        this.entries = entries;
    }

    /** Where an entry's value comes from. */
    public enum Source {
        /** The client's address (behind a trusted proxy, the address it forwarded). */
        REMOTE_ADDRESS,
        /** A request header, named by {@code header}: an API key, a tenant. */
        HEADER,
        /** The name of the authenticated principal (the filter must run after authentication). */
        PRINCIPAL,
        /** The path within the application, without the query. */
        PATH,
        /** A constant, {@code value}, the same for every request. */
        VALUE
    }

    /** One entry: a descriptor key and its source. */
    public static class Entry {

        /** The defaults: nothing set. */
        public Entry() {}

        /** The descriptor key the policy's rules match, e.g. api_key. */
        private @Nullable String key;

        /** Where the value comes from: remote-address, header, principal, path or value. */
        private @Nullable Source source;

        /** The request header of source header, e.g. X-Api-Key. */
        private @Nullable String header;

        /** The constant of source value. */
        private @Nullable String value;

        public @Nullable String getKey() {
            return key;
        }

        public void setKey(@Nullable String key) {
            this.key = key;
        }

        public @Nullable Source getSource() {
            return source;
        }

        public void setSource(@Nullable Source source) {
            this.source = source;
        }

        public @Nullable String getHeader() {
            return header;
        }

        public void setHeader(@Nullable String header) {
            this.header = header;
        }

        public @Nullable String getValue() {
            return value;
        }

        public void setValue(@Nullable String value) {
            this.value = value;
        }
    }

    /**
     * The extractor of these descriptors.
     *
     * @param property the descriptors' property, for messages: {@code sluice.filter.descriptors}
     * @throws IllegalStateException naming the property at fault if a descriptor has no entry, or an entry no key, no
     *                               source, or not what its source needs
     */
    static RequestDescriptors extractor(String property, List<SluiceDescriptorProperties> descriptors) {
        RequestDescriptors.Builder b = RequestDescriptors.builder();
        for (int d = 0; d < descriptors.size(); d++) {
            List<Entry> entries = descriptors.get(d).getEntries();
            String at = property + "[" + d + "]";
            if (entries.isEmpty()) {
                throw new IllegalStateException(at + ".entries: a descriptor needs at least one entry");
            }
            List<RequestEntry> built = new ArrayList<>(entries.size());
            for (int e = 0; e < entries.size(); e++) {
                built.add(entry(at + ".entries[" + e + "]", entries.get(e)));
            }
            b.descriptor(built);
        }
        return b.build();
    }

    private static RequestEntry entry(String at, Entry e) {
        String key = e.getKey();
        if (key == null || key.isEmpty()) {
            throw new IllegalStateException(at + ".key: every entry needs a descriptor key");
        }
        Source source = e.getSource();
        if (source == null) {
            throw new IllegalStateException(at + ".source: missing for key '" + key
                    + "': expected remote-address, header, principal, path or value");
        }
        return switch (source) {
            case REMOTE_ADDRESS -> RequestEntry.remoteAddress(key);
            case HEADER -> RequestEntry.header(key, required(at + ".header", e.getHeader(), source));
            case PRINCIPAL -> RequestEntry.principal(key);
            case PATH -> RequestEntry.path(key);
            case VALUE -> RequestEntry.value(key, required(at + ".value", e.getValue(), source));
        };
    }

    private static String required(String property, @Nullable String value, Source source) {
        if (value == null || value.isEmpty()) {
            throw new IllegalStateException(property + ": required by source "
                    + source.name().toLowerCase(Locale.ROOT).replace('_', '-'));
        }
        return value;
    }
}
