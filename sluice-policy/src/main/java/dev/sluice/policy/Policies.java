package dev.sluice.policy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * A loaded, validated set of rate limit policies: one domain per file, in envoyproxy/ratelimit's YAML format with
 * Sluice's extensions (see {@code docs/policies.md}). Immutable and thread-safe; give it to
 * {@link PolicyLimiter#builder(Policies)} to enforce it.
 *
 * <pre>{@code
 * Policies policies = Policies.load(Path.of("/etc/ratelimit"));   // a directory of *.yaml, or one file
 * policies.match("oauth-token", Descriptor.of("client_id", "abc"));  // the rule that applies, if any
 * }</pre>
 */
public final class Policies {

    private static final Policies EMPTY = new Policies(Map.of());

    private final Map<String, DomainPolicy> domains;

    private Policies(Map<String, DomainPolicy> domains) {
        this.domains = domains;
    }

    /** No domain at all: every request is allowed with no limit. */
    public static Policies empty() {
        return EMPTY;
    }

    /**
     * Loads {@code path}: one file, or every {@code *.yaml} and {@code *.yml} file of a directory (not its
     * subdirectories, not files whose name starts with a dot), one domain each. Symbolic links are followed, so a
     * Kubernetes ConfigMap mount loads as its files.
     *
     * @throws PolicyException with every problem of every file, each with its file, line, column and field: a file
     *                         that cannot be read, bad YAML, a field that is unknown or of the wrong type, a missing
     *                         domain, a domain defined in two files, …
     */
    public static Policies load(Path path) {
        Objects.requireNonNull(path, "path must not be null");
        List<Path> files = new ArrayList<>();
        List<PolicyError> errors = new ArrayList<>();
        if (Files.isDirectory(path)) {
            try (Stream<Path> list = Files.list(path)) {
                list.filter(Policies::isPolicyFile).sorted().forEach(files::add);
            } catch (IOException e) {
                throw new PolicyException(
                        List.of(new PolicyError(path.toString(), 0, 0, "", "cannot list the directory: " + e)));
            }
        } else {
            files.add(path);
        }
        Map<String, String> texts = new LinkedHashMap<>();
        for (Path file : files) {
            try {
                texts.put(file.toString(), Files.readString(file, StandardCharsets.UTF_8));
            } catch (IOException e) {
                errors.add(new PolicyError(file.toString(), 0, 0, "", "cannot read the file: " + e));
            }
        }
        return build(texts, errors);
    }

    /**
     * Policies from texts already read: file (or source) name to its YAML, one domain each.
     *
     * @throws PolicyException as {@link #load(Path)}
     */
    public static Policies parse(Map<String, String> sources) {
        return build(new LinkedHashMap<>(sources), new ArrayList<>());
    }

    /**
     * The policy of one file's text.
     *
     * @throws PolicyException as {@link #load(Path)}
     */
    public static Policies parse(String sourceName, String yaml) {
        return parse(Map.of(sourceName, yaml));
    }

    static boolean isPolicyFile(Path p) {
        String name = p.getFileName().toString();
        return !name.startsWith(".") && (name.endsWith(".yaml") || name.endsWith(".yml")) && Files.isRegularFile(p);
    }

    private static Policies build(Map<String, String> texts, List<PolicyError> errors) {
        Map<String, DomainPolicy> domains = new LinkedHashMap<>();
        for (Map.Entry<String, String> source : texts.entrySet()) {
            PolicyParser.Result r = PolicyParser.parse(source.getKey(), source.getValue());
            errors.addAll(r.errors());
            DomainPolicy p = r.policy();
            if (p == null) {
                continue;
            }
            DomainPolicy first = domains.putIfAbsent(p.domain(), p);
            if (first != null) {
                errors.add(new PolicyError(
                        p.file(),
                        r.domainLine(),
                        r.domainColumn(),
                        "domain",
                        "duplicate domain '" + p.domain() + "' in config file: already defined in " + first.file()
                                + "; one file per domain"));
            }
        }
        if (!errors.isEmpty()) {
            throw new PolicyException(errors);
        }
        return domains.isEmpty() ? EMPTY : new Policies(Map.copyOf(domains));
    }

    /** The domains defined. */
    public Set<String> domains() {
        return domains.keySet();
    }

    /**
     * The rule that applies to {@code descriptor} in {@code domain}, as envoyproxy/ratelimit matches it; empty when
     * the domain is unknown, nothing matches, or the entry that matches has no limit (a value let through).
     */
    public Optional<Rule> match(String domain, Descriptor descriptor) {
        DomainPolicy.Match m = matchFull(domain, descriptor);
        return m == null ? Optional.empty() : Optional.of(m.rule());
    }

    /** Every rule with limits of {@code domain}, depth first in file order; empty for an unknown domain. */
    public List<Rule> rules(String domain) {
        DomainPolicy p = domains.get(domain);
        return p == null ? List.of() : p.rules();
    }

    @Nullable
    DomainPolicy domainPolicy(String domain) {
        return domains.get(domain);
    }

    /** The {@code on_store_failure} of {@code domain}; {@link OnStoreFailure#ALLOW} for an unknown domain. */
    public OnStoreFailure onStoreFailure(String domain) {
        DomainPolicy p = domains.get(Objects.requireNonNull(domain, "domain must not be null"));
        return p == null ? OnStoreFailure.ALLOW : p.onStoreFailure();
    }

    DomainPolicy.@Nullable Match matchFull(String domain, Descriptor descriptor) {
        Objects.requireNonNull(descriptor, "descriptor must not be null");
        DomainPolicy p = domains.get(Objects.requireNonNull(domain, "domain must not be null"));
        return p == null ? null : p.match(descriptor);
    }

    @Override
    public String toString() {
        return "Policies" + new java.util.TreeSet<>(domains.keySet());
    }
}
