package dev.sluice.policy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
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

    /**
     * The largest policy file loaded: 4 MiB. A larger file is
     * refused before it is read, at its line 1, column 1; so is a longer text given to {@link #parse(String, String)}.
     */
    public static final long MAX_FILE_BYTES = 4L << 20;

    /**
     * The most levels of mappings and lists nested in a policy file: 50, SnakeYAML's default for its own loader (each
     * level of {@code descriptors} takes two, so a rule may be 20 levels deep). A deeper file is refused at the line
     * and column where it passes the limit, before anything recurses that deep; an alias counts the levels it brings.
     */
    public static final int MAX_DEPTH = 50;

    /**
     * The most nodes (scalars, mappings, lists) of a policy file once its aliases are expanded: 1,000,000. A small
     * file whose aliases refer to aliases ("billion laughs") is refused at the alias that passes it.
     */
    public static final int MAX_NODES = 1_000_000;

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
     * Kubernetes ConfigMap mount loads as its files; a link that leads nowhere (a ConfigMap update half done) is an
     * error, never a file skipped. A directory with no policy file loads as {@link #empty()}.
     *
     * @throws PolicyException with every problem of every file, each with its file, line, column and field: a file
     *                         that cannot be read, is larger than {@link #MAX_FILE_BYTES} or nested deeper than
     *                         {@link #MAX_DEPTH}, bad YAML, a field that is unknown or of the wrong type, a missing
     *                         domain, a domain defined in two files, …
     */
    public static Policies load(Path path) {
        Objects.requireNonNull(path, "path must not be null");
        List<Path> files;
        List<PolicyError> errors = new ArrayList<>();
        if (Files.isDirectory(path)) {
            try {
                files = files(path);
            } catch (IOException e) {
                throw new PolicyException(
                        List.of(new PolicyError(path.toString(), 0, 0, "", "cannot list the directory: " + e)));
            }
        } else {
            files = List.of(path);
        }
        Map<String, String> texts = new LinkedHashMap<>();
        for (Path file : files) {
            try {
                texts.put(file.toString(), read(file));
            } catch (PolicyException e) {
                errors.addAll(e.errors());
            }
        }
        return build(texts, errors);
    }

    /**
     * The policy files of a directory, by name: each entry named {@code *.yaml} or {@code *.yml}, not starting with a
     * dot, that is a regular file, or a symbolic link to one or to nothing (which {@link #read} refuses). A
     * subdirectory, or a link to one, is skipped, as are special files.
     */
    static List<Path> files(Path directory) throws IOException {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> list = Files.list(directory)) {
            list.filter(p -> {
                        String name = p.getFileName().toString();
                        return !name.startsWith(".") && (name.endsWith(".yaml") || name.endsWith(".yml"));
                    })
                    .filter(p -> Files.isRegularFile(p) || dangling(p))
                    .sorted()
                    .forEach(files::add);
        }
        return files;
    }

    /** Whether {@code p} is a symbolic link that leads to nothing. */
    static boolean dangling(Path p) {
        return Files.isSymbolicLink(p) && !Files.exists(p);
    }

    /**
     * The text of a policy file, refused without reading it whole if it is larger than {@link #MAX_FILE_BYTES}.
     *
     * @throws PolicyException with one error: the file is missing, a dangling link, not a regular file, too large,
     *                         not UTF-8, or cannot be read
     */
    static String read(Path file) {
        String name = file.toString();
        if (dangling(file)) {
            String target;
            try {
                target = String.valueOf(Files.readSymbolicLink(file));
            } catch (IOException e) {
                target = "?";
            }
            throw error(
                    name,
                    0,
                    0,
                    "a symbolic link to " + target + ", which does not exist (a ConfigMap update "
                            + "half done?): refused, not skipped; remove the link to remove its domain");
        }
        if (!Files.exists(file)) {
            throw error(name, 0, 0, "no such file");
        }
        if (!Files.isRegularFile(file)) {
            throw error(name, 0, 0, "not a regular file");
        }
        byte[] bytes;
        try {
            long size = Files.size(file);
            if (size > MAX_FILE_BYTES) {
                throw error(name, 1, 1, tooLarge("the file is " + size + " bytes long"));
            }
            bytes = readAtMost(file, MAX_FILE_BYTES + 1);
        } catch (IOException e) {
            throw error(name, 0, 0, "cannot read the file: " + e);
        }
        if (bytes.length > MAX_FILE_BYTES) { // it grew since its size was read
            throw error(name, 1, 1, tooLarge("the file grew as it was read"));
        }
        CharsetDecoder decoder = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        CoderResult result = decoder.decode(in, out, true);
        if (result.isError()) {
            // the position of the first byte that is not UTF-8, as an editor shows it: line, then column in characters
            out.flip();
            int line = 1;
            int column = 1;
            while (out.hasRemaining()) {
                char c = out.get();
                if (c == '\n') {
                    line++;
                    column = 1;
                } else if (!Character.isLowSurrogate(c)) {
                    column++;
                }
            }
            throw error(
                    name,
                    line,
                    column,
                    "not UTF-8 text: a malformed byte sequence at byte " + in.position() + " (0x"
                            + HexFormat.of().toHexDigits(bytes[in.position()]) + ")");
        }
        decoder.flush(out);
        return out.flip().toString();
    }

    /** The first {@code max} bytes of {@code file}, or all of them if fewer. */
    static byte[] readAtMost(Path file, long max) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return in.readNBytes((int) Math.min(max, Integer.MAX_VALUE - 8));
        }
    }

    /** The message of a file or text over {@link #MAX_FILE_BYTES}; {@code what} says how large it is. */
    static String tooLarge(String what) {
        return what + ", over the limit of " + MAX_FILE_BYTES + " bytes (4 MiB) for one policy file: refused unread";
    }

    private static PolicyException error(String file, int line, int column, String message) {
        return new PolicyException(List.of(new PolicyError(file, line, column, "", message)));
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
        Objects.requireNonNull(descriptor, "descriptor must not be null");
        DomainPolicy p = domains.get(Objects.requireNonNull(domain, "domain must not be null"));
        DomainPolicy.Node n = p == null ? null : p.match(descriptor);
        return n == null ? Optional.empty() : Optional.ofNullable(n.rule);
    }

    /** Every rule with limits of {@code domain}, depth first in file order; empty for an unknown domain. */
    public List<Rule> rules(String domain) {
        DomainPolicy p = domains.get(domain);
        return p == null ? List.of() : p.rules();
    }

    /**
     * The descriptor keys of {@code domain} whose value every counter of the domain is kept per: each is on the path
     * of every rule with a limit that is not unlimited, at an entry that counts each value apart (a key alone, a
     * value, or a wildcard without {@code share_threshold}), and only once. Two requests whose descriptors give such a key different
     * values never count against one counter, so they can be decided apart. In the order of the first such rule's
     * path; empty when no key is on every such rule's path (a limit shared across values, such as one global limit),
     * and when the domain has no such rule or is unknown.
     */
    public List<String> keysOfEveryCounter(String domain) {
        DomainPolicy p = domains.get(Objects.requireNonNull(domain, "domain must not be null"));
        if (p == null) {
            return List.of();
        }
        List<List<String>> paths = new ArrayList<>();
        countedPaths(p.top(), new ArrayList<>(), paths);
        if (paths.isEmpty()) {
            return List.of();
        }
        List<String> common = new ArrayList<>(paths.get(0));
        for (List<String> path : paths) {
            common.retainAll(path);
        }
        return List.copyOf(new LinkedHashSet<>(common));
    }

    /**
     * Adds, per rule under {@code level} with a counted limit, the keys of its path (ancestors {@code path}) that are
     * on it once, at an entry that counts each value apart.
     */
    private static void countedPaths(DomainPolicy.Level level, List<DomainPolicy.Node> path, List<List<String>> out) {
        for (DomainPolicy.Node n : level.nodes()) {
            path.add(n);
            Rule rule = n.rule;
            if (rule != null && !rule.limits().stream().allMatch(Limit::unlimited)) {
                List<String> keys = new ArrayList<>();
                for (DomainPolicy.Node at : path) {
                    boolean once =
                            path.stream().filter(x -> x.key.equals(at.key)).count() == 1;
                    if (once && (at.pattern == null || !at.shareThreshold)) {
                        keys.add(at.key);
                    }
                }
                out.add(keys);
            }
            DomainPolicy.Level children = n.children;
            if (children != null) {
                countedPaths(children, path, out);
            }
            path.remove(path.size() - 1);
        }
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

    @Override
    public String toString() {
        return "Policies" + new java.util.TreeSet<>(domains.keySet());
    }
}
