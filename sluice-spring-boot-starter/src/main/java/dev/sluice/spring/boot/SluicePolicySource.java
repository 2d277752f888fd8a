package dev.sluice.spring.boot;

import dev.sluice.policy.Policies;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Where an application's policies come from: a file or directory ({@code sluice.policies.location}), YAML text in its
 * properties ({@code sluice.policies.inline}), or nothing (no limit). Immutable.
 */
public final class SluicePolicySource {

    private final @Nullable Path location;
    private final List<String> inline;

    private SluicePolicySource(@Nullable Path location, List<String> inline) {
        this.location = location;
        this.inline = List.copyOf(inline);
    }

    /** A file, or a directory of policy files. */
    public static SluicePolicySource location(Path location) {
        return new SluicePolicySource(Objects.requireNonNull(location, "location must not be null"), List.of());
    }

    /** YAML texts, one domain each. */
    public static SluicePolicySource inline(List<String> yaml) {
        return new SluicePolicySource(null, yaml);
    }

    /** The source the properties name: the location if given, else the inline texts (perhaps none). */
    public static SluicePolicySource of(SluiceProperties.Policies properties) {
        Path location = properties.getLocation();
        return location != null ? location(location) : inline(properties.getInline());
    }

    /**
     * Loads the policies, validated.
     *
     * @throws dev.sluice.policy.PolicyException with every error, each with its file (or
     *     {@code sluice.policies.inline[i]}), line and column
     */
    public Policies load() {
        if (location != null) {
            return Policies.load(location);
        }
        Map<String, String> sources = new LinkedHashMap<>();
        for (int i = 0; i < inline.size(); i++) {
            sources.put("sluice.policies.inline[" + i + "]", inline.get(i));
        }
        return sources.isEmpty() ? Policies.empty() : Policies.parse(sources);
    }

    /** The file or directory, or null for inline policies: only a location can be watched. */
    public @Nullable Path location() {
        return location;
    }

    /** How the source is shown: the path, {@code sluice.policies.inline}, or {@code none}. */
    public String description() {
        if (location != null) {
            return location.toString();
        }
        return inline.isEmpty() ? "none" : "sluice.policies.inline";
    }

    @Override
    public String toString() {
        return "SluicePolicySource[" + description() + "]";
    }
}
