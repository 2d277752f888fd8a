package dev.sluice.policy;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.common.Anchor;
import org.snakeyaml.engine.v2.composer.Composer;
import org.snakeyaml.engine.v2.events.AliasEvent;
import org.snakeyaml.engine.v2.events.Event;
import org.snakeyaml.engine.v2.events.NodeEvent;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.nodes.Tag;
import org.snakeyaml.engine.v2.parser.Parser;
import org.snakeyaml.engine.v2.parser.ParserImpl;
import org.snakeyaml.engine.v2.scanner.StreamReader;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * One file's text to a {@link DomainPolicy}: parse, then validate, then build.
 *
 * <p>The YAML is composed to a node tree, which keeps each node's line and column, and walked once. Every problem is
 * recorded with its position and the walk goes on, so that one load reports all the problems of a file; the model
 * is built only when there were none. What is refused is what envoyproxy/ratelimit refuses (a duplicate descriptor,
 * a bad unit, an unknown field, an empty key, a non-string field name, {@code unlimited} with a unit, a
 * {@code replaces} of itself or of nothing, bad YAML, no domain) plus misuse of the extensions, and one thing it lets
 * pass: a known field in the wrong place (a {@code unit} beside {@code key}), which it silently ignores.
 */
final class PolicyParser {

    private static final Set<String> ROOT_FIELDS = Set.of("domain", "descriptors", "algorithm", "on_store_failure");
    private static final Set<String> DESCRIPTOR_FIELDS = Set.of(
            "key",
            "value",
            "descriptors",
            "rate_limit",
            "rate_limits",
            "shadow_mode",
            "quota_mode",
            "detailed_metric",
            "value_to_metric",
            "share_threshold",
            "metadata",
            "mode",
            "algorithm");
    private static final Set<String> RATE_LIMIT_FIELDS =
            Set.of("unit", "window", "requests_per_unit", "unlimited", "name", "replaces", "algorithm");
    private static final Set<String> RATE_LIMITS_FIELDS =
            Set.of("unit", "window", "requests_per_unit", "name", "replaces", "algorithm");
    private static final Set<String> REPLACES_FIELDS = Set.of("name");
    private static final Set<String> ALL_FIELDS;

    static {
        java.util.HashSet<String> all = new java.util.HashSet<>(ROOT_FIELDS);
        all.addAll(DESCRIPTOR_FIELDS);
        all.addAll(RATE_LIMIT_FIELDS);
        ALL_FIELDS = Set.copyOf(all);
    }

    /** envoyproxy/ratelimit's units and their length in seconds. */
    private static final Map<String, Long> UNITS = Map.of(
            "second",
            1L,
            "minute",
            60L,
            "hour",
            3_600L,
            "day",
            86_400L,
            "week",
            604_800L,
            "month",
            2_592_000L,
            "year",
            31_536_000L);

    private static final String UNIT_LIST = "second, minute, hour, day, week, month or year";
    private static final Pattern WINDOW = Pattern.compile("([0-9]{1,12})(ms|s|m|h|d)");
    private static final long UINT32_MAX = 4_294_967_295L;
    /** SnakeYAML's own default, kept; counted here as well, so that the refusal has a line and column. */
    private static final int MAX_COLLECTION_ALIASES = 50;
    /** The most errors reported of one file; the rest are counted in one last error. */
    private static final int MAX_ERRORS = 100;

    private final String file;
    private final List<PolicyError> errors = new ArrayList<>();
    /** Errors past {@link #MAX_ERRORS}, counted only. */
    private int errorsNotShown;

    private String domain = "";
    /** The {@code domain} value; null until read, and when the file has none. */
    private @Nullable Node domainNode;

    private PolicyParser(String file) {
        this.file = file;
    }

    /**
     * The result of one file: its model, or the problems that keep it from having one.
     *
     * @param policy     the domain, or null when there are errors
     * @param errors     every problem found
     * @param domainLine line of the {@code domain} value, for a duplicate found across files
     * @param domainColumn its column
     */
    record Result(@Nullable DomainPolicy policy, List<PolicyError> errors, int domainLine, int domainColumn) {}

    static Result parse(String file, String text) {
        PolicyParser p = new PolicyParser(file);
        DomainPolicy policy = p.run(text);
        if (p.errorsNotShown > 0) {
            p.errors.add(new PolicyError(
                    file, 0, 0, "", "and " + p.errorsNotShown + " more error(s), not shown: fix these first"));
        }
        int line = p.domainNode == null ? 1 : line(p.domainNode);
        int column = p.domainNode == null ? 1 : column(p.domainNode);
        return new Result(p.errors.isEmpty() ? policy : null, List.copyOf(p.errors), line, column);
    }

    private @Nullable DomainPolicy run(String text) {
        if (text.length() > Policies.MAX_FILE_BYTES) {
            errors.add(new PolicyError(
                    file, 1, 1, "", Policies.tooLarge("the text is " + text.length() + " characters long")));
            return null;
        }
        LoadSettings settings = LoadSettings.builder()
                .setLabel(file)
                .setSchema(new CoreSchema())
                .setAllowDuplicateKeys(true)
                .setCodePointLimit((int) Policies.MAX_FILE_BYTES)
                .setMaxAliasesForCollections(MAX_COLLECTION_ALIASES)
                .build();
        Optional<Node> composed;
        try {
            LimitedParser parser = new LimitedParser(new ParserImpl(settings, new StreamReader(settings, text)));
            composed = new Composer(settings, parser).getSingleNode();
        } catch (LimitExceeded e) {
            Optional<Mark> mark = e.event.getStartMark();
            errors.add(new PolicyError(
                    file,
                    mark.map(m -> m.getLine() + 1).orElse(1),
                    mark.map(m -> m.getColumn() + 1).orElse(1),
                    "",
                    e.problem));
            return null;
        } catch (MarkedYamlEngineException e) {
            Optional<Mark> mark = e.getProblemMark().isPresent() ? e.getProblemMark() : e.getContextMark();
            int line = mark.map(m -> m.getLine() + 1).orElse(0);
            int column = mark.map(m -> m.getColumn() + 1).orElse(0);
            String what = e.getProblem() == null ? String.valueOf(e.getMessage()) : e.getProblem();
            errors.add(new PolicyError(
                    file,
                    line,
                    column,
                    "",
                    "bad YAML: " + (e.getContext() == null ? "" : e.getContext() + ", ") + what));
            return null;
        } catch (YamlEngineException e) {
            errors.add(new PolicyError(file, 1, 1, "", "bad YAML: " + e.getMessage()));
            return null;
        }
        if (composed.isEmpty() || isNull(composed.get())) {
            errors.add(new PolicyError(
                    file,
                    1,
                    1,
                    "domain",
                    "missing: a file is a mapping with `domain: <name>` "
                            + "and `descriptors:`, and this one is empty"));
            return null;
        }
        Node root = composed.get();
        if (!(root instanceof MappingNode)) {
            error(root, "", "expected a mapping with `domain` and `descriptors`, was " + describe(root));
            return null;
        }
        Fields f = fields((MappingNode) root, ROOT_FIELDS, "");
        domainNode = f.value("domain");
        String name = string(domainNode, "domain");
        if (name == null || name.isEmpty()) {
            error(
                    domainNode != null ? domainNode : root,
                    "domain",
                    "missing or empty: every file names its domain " + "(`domain: <name>`), unique across files");
        } else {
            domain = name;
        }
        Algorithm fileAlgorithm = algorithm(f.value("algorithm"), "algorithm", Algorithm.FIXED_WINDOW);
        DomainPolicy.Level top = level(f.value("descriptors"), "descriptors", "", fileAlgorithm);
        OnStoreFailure onStoreFailure = onStoreFailure(f.value("on_store_failure"));
        return new DomainPolicy(domain, file, top == null ? new DomainPolicy.Level() : top, onStoreFailure);
    }

    /** A list of descriptors; null when absent or empty. */
    private DomainPolicy.@Nullable Level level(
            @Nullable Node list, String field, String parentPath, Algorithm fileAlgorithm) {
        if (list == null || isNull(list)) {
            return null;
        }
        if (!(list instanceof SequenceNode)) {
            error(list, field, "expected a list of descriptors (each `- key: …`), was " + describe(list));
            return null;
        }
        DomainPolicy.Level level = new DomainPolicy.Level();
        Map<String, Integer> firstLine = new HashMap<>();
        List<Node> items = ((SequenceNode) list).getValue();
        for (int i = 0; i < items.size(); i++) {
            Node item = items.get(i);
            String itemField = field + "[" + i + "]";
            if (!(item instanceof MappingNode)) {
                error(
                        item,
                        itemField,
                        "expected a descriptor, a mapping with `key` and optionally `value`, "
                                + "`rate_limit`, `descriptors`, was " + describe(item));
                continue;
            }
            DomainPolicy.Node node = descriptor((MappingNode) item, itemField, parentPath, fileAlgorithm);
            if (node == null) {
                continue;
            }
            String id = node.key + (node.value == null ? "" : "\u0000" + node.value);
            if (!level.add(node)) {
                error(
                        item,
                        itemField,
                        "duplicate descriptor: key '" + node.key + "'"
                                + (node.value == null ? " without value" : " value '" + node.value + "'")
                                + " is already defined at this level, line " + firstLine.get(id)
                                + " (composite key '" + domain + "." + path(parentPath, node.key, node.value) + "')");
            } else {
                firstLine.put(id, line(item));
            }
        }
        return level;
    }

    private static String path(String parentPath, String key, @Nullable String value) {
        String here = value == null ? key : key + "_" + value;
        return parentPath.isEmpty() ? here : parentPath + "." + here;
    }

    private DomainPolicy.@Nullable Node descriptor(
            MappingNode map, String field, String parentPath, Algorithm fileAlgorithm) {
        Fields f = fields(map, DESCRIPTOR_FIELDS, field);
        Node keyNode = f.value("key");
        String key = string(keyNode, field + ".key");
        if (key == null || key.isEmpty()) {
            error(
                    keyNode != null ? keyNode : map,
                    field + ".key",
                    "missing or empty: every descriptor has a " + "non-empty key");
        }
        String value = string(f.value("value"), field + ".value");
        if (value != null && value.isEmpty()) {
            value = null;
        }
        String path = path(parentPath, key == null ? "" : key, value);
        boolean shadow = bool(f.value("shadow_mode"), field + ".shadow_mode");
        boolean quota = bool(f.value("quota_mode"), field + ".quota_mode");
        boolean detailed = bool(f.value("detailed_metric"), field + ".detailed_metric");
        bool(f.value("value_to_metric"), field + ".value_to_metric");
        Node shareNode = f.value("share_threshold");
        boolean share = bool(shareNode, field + ".share_threshold");
        if (share && (value == null || value.indexOf('*') < 0)) {
            Objects.requireNonNull(shareNode, "share_threshold: true was read from it");
            error(
                    shareNode,
                    field + ".share_threshold",
                    "applies to a wildcard value (one with " + "'*') only, and the value here is "
                            + (value == null ? "absent" : "'" + value + "'"));
        }
        Mode mode = shadow ? Mode.DRY_RUN : quota ? Mode.QUOTA : Mode.ENFORCE;
        Node modeNode = f.value("mode");
        String modeText = string(modeNode, field + ".mode");
        if (modeText != null) {
            Objects.requireNonNull(modeNode, "the mode was read from it");
            Mode given = null;
            for (Mode m : Mode.values()) {
                if (m.configName().equals(modeText)) {
                    given = m;
                }
            }
            if (given == null) {
                error(
                        modeNode,
                        field + ".mode",
                        "expected enforce, dry_run, shadow_ban or quota, was '" + modeText + "'");
            } else if (shadow && given != Mode.DRY_RUN) {
                error(
                        modeNode,
                        field + ".mode",
                        "shadow_mode: true means dry_run, which contradicts mode: " + modeText + "; keep one");
            } else if (quota && !shadow && given != Mode.QUOTA) {
                error(
                        modeNode,
                        field + ".mode",
                        "quota_mode: true means quota, which contradicts mode: " + modeText + "; keep one");
            } else {
                mode = given;
            }
        }
        Algorithm ruleAlgorithm = algorithm(f.value("algorithm"), field + ".algorithm", fileAlgorithm);

        List<Limit> limits = new ArrayList<>();
        Node one = f.value("rate_limit");
        Node many = f.value("rate_limits");
        if (one != null && !isNull(one) && many != null) {
            Node manyKey = Objects.requireNonNull(f.key("rate_limits"), "a field with a value has a key");
            error(manyKey, field + ".rate_limits", "give either rate_limit or rate_limits, not both");
        } else if (one != null && !isNull(one)) {
            if (one instanceof MappingNode) {
                Limit l = limit((MappingNode) one, field + ".rate_limit", ruleAlgorithm, true);
                if (l != null) {
                    limits.add(l);
                }
            } else {
                error(
                        one,
                        field + ".rate_limit",
                        "expected a mapping with unit and requests_per_unit, was " + describe(one));
            }
        } else if (many != null) {
            if (!(many instanceof SequenceNode)
                    || ((SequenceNode) many).getValue().isEmpty()) {
                error(
                        many,
                        field + ".rate_limits",
                        "expected a list of one or more limits, each with unit (or "
                                + "window) and requests_per_unit, was " + describe(many));
            } else {
                List<Node> items = ((SequenceNode) many).getValue();
                for (int j = 0; j < items.size(); j++) {
                    Node item = items.get(j);
                    String itemField = field + ".rate_limits[" + j + "]";
                    if (item instanceof MappingNode) {
                        Limit l = limit((MappingNode) item, itemField, ruleAlgorithm, false);
                        if (l != null) {
                            limits.add(l);
                        }
                    } else {
                        error(
                                item,
                                itemField,
                                "expected a limit, a mapping with unit (or window) and " + "requests_per_unit, was "
                                        + describe(item));
                    }
                }
            }
        }
        DomainPolicy.Level children = level(f.value("descriptors"), field + ".descriptors", path, fileAlgorithm);
        if (key == null || key.isEmpty()) {
            return null;
        }
        Rule rule =
                limits.isEmpty() ? null : new Rule(domain, path, limits, mode, detailed, file, line(map), column(map));
        return new DomainPolicy.Node(key, value, share, rule, children);
    }

    private @Nullable Limit limit(MappingNode map, String field, Algorithm algorithm, boolean allowUnlimited) {
        Fields f = fields(map, allowUnlimited ? RATE_LIMIT_FIELDS : RATE_LIMITS_FIELDS, field);
        int before = errors.size();
        boolean unlimited = bool(f.value("unlimited"), field + ".unlimited");
        Node unitNode = f.value("unit");
        String unit = string(unitNode, field + ".unit");
        Node windowNode = f.value("window");
        String window = string(windowNode, field + ".window");
        long requests = uint(f.value("requests_per_unit"), field + ".requests_per_unit");
        String name = string(f.value("name"), field + ".name");
        name = name == null ? "" : name;
        Algorithm a = algorithm(f.value("algorithm"), field + ".algorithm", algorithm);
        List<String> replaces = replaces(f.value("replaces"), field + ".replaces", name);
        if (unlimited) {
            if (unit != null) {
                Objects.requireNonNull(unitNode, "the unit was read from it");
                error(
                        unitNode,
                        field + ".unit",
                        "should not specify rate limit unit when unlimited: remove unit, " + "or unlimited: true");
            }
            if (window != null) {
                Objects.requireNonNull(windowNode, "the window was read from it");
                error(
                        windowNode,
                        field + ".window",
                        "should not specify a window when unlimited: remove window, " + "or unlimited: true");
            }
            return errors.size() > before ? null : new Limit(name, replaces, true, 0, null, null, null);
        }
        Duration length = null;
        String unitName = null;
        if (unit != null && window != null) {
            Objects.requireNonNull(windowNode, "the window was read from it");
            error(windowNode, field + ".window", "give either unit or window, not both");
        } else if (window != null) {
            Objects.requireNonNull(windowNode, "the window was read from it");
            length = window(windowNode, window, field + ".window");
        } else if (unit == null) {
            error(
                    unitNode != null ? unitNode : map,
                    field + ".unit",
                    "missing: expected " + UNIT_LIST + " (or a window such as 10s)");
        } else {
            Long seconds = UNITS.get(unit.toLowerCase(Locale.ROOT));
            if (seconds == null) {
                Objects.requireNonNull(unitNode, "the unit was read from it");
                error(unitNode, field + ".unit", "invalid rate limit unit '" + unit + "': expected " + UNIT_LIST);
            } else {
                unitName = unit.toLowerCase(Locale.ROOT);
                length = Duration.ofSeconds(seconds);
            }
        }
        return errors.size() > before || length == null
                ? null
                : new Limit(name, replaces, false, requests, length, unitName, a);
    }

    private List<String> replaces(@Nullable Node node, String field, String ownName) {
        if (node == null || isNull(node)) {
            return List.of();
        }
        if (!(node instanceof SequenceNode)) {
            error(node, field, "expected a list of `- name: <limit name>`, was " + describe(node));
            return List.of();
        }
        List<String> names = new ArrayList<>();
        List<Node> items = ((SequenceNode) node).getValue();
        for (int k = 0; k < items.size(); k++) {
            Node item = items.get(k);
            String itemField = field + "[" + k + "]";
            if (!(item instanceof MappingNode)) {
                error(item, itemField, "expected `name: <limit name>`, was " + describe(item));
                continue;
            }
            Fields f = fields((MappingNode) item, REPLACES_FIELDS, itemField);
            Node nameNode = f.value("name");
            String name = string(nameNode, itemField + ".name");
            if (name == null || name.isEmpty()) {
                error(
                        nameNode != null && !isNull(nameNode) ? nameNode : f.key("name") != null ? f.key("name") : item,
                        itemField + ".name",
                        "should not have an empty replaces " + "entry: name the limit to replace");
            } else if (name.equals(ownName)) {
                Objects.requireNonNull(nameNode, "the name was read from it");
                error(
                        nameNode,
                        itemField + ".name",
                        "replaces should not contain name of same descriptor ('" + name
                                + "'): a limit cannot replace itself");
            } else {
                names.add(name);
            }
        }
        return names;
    }

    private @Nullable Duration window(Node node, String text, String field) {
        Matcher m = WINDOW.matcher(text);
        if (!m.matches()) {
            error(
                    node,
                    field,
                    "expected a duration: a whole number and ms, s, m, h or d (500ms, 10s, 5m, 6h, 1d), " + "was '"
                            + text + "'");
            return null;
        }
        long n = Long.parseLong(m.group(1));
        Duration d;
        switch (m.group(2)) {
            case "ms":
                d = Duration.ofMillis(n);
                break;
            case "s":
                d = Duration.ofSeconds(n);
                break;
            case "m":
                d = Duration.ofMinutes(n);
                break;
            case "h":
                d = Duration.ofHours(n);
                break;
            default:
                d = Duration.ofDays(n);
        }
        if (d.isZero() || d.compareTo(LimiterConfig.MAX_WINDOW) > 0) {
            error(
                    node,
                    field,
                    "expected a window above zero and at most " + LimiterConfig.MAX_WINDOW.toDays() + "d, was '" + text
                            + "'");
            return null;
        }
        return d;
    }

    private Algorithm algorithm(@Nullable Node node, String field, Algorithm otherwise) {
        String text = string(node, field);
        if (text == null) {
            return otherwise;
        }
        for (Algorithm a : Algorithm.values()) {
            if (a.name().toLowerCase(Locale.ROOT).equals(text)) {
                return a;
            }
        }
        Objects.requireNonNull(node, "the algorithm was read from it");
        error(
                node,
                field,
                "unknown algorithm '" + text + "': expected fixed_window, sliding_log, "
                        + "sliding_window_counter, sliding_tail, token_bucket or leaky_bucket");
        return otherwise;
    }

    private OnStoreFailure onStoreFailure(@Nullable Node node) {
        String text = string(node, "on_store_failure");
        if (text == null) {
            return OnStoreFailure.ALLOW;
        }
        for (OnStoreFailure o : OnStoreFailure.values()) {
            if (o.configName().equals(text)) {
                return o;
            }
        }
        error(
                Objects.requireNonNull(node, "the value was read from it"),
                "on_store_failure",
                "unknown on_store_failure '" + text + "': expected allow or deny");
        return OnStoreFailure.ALLOW;
    }

    // ---- scalars ----

    private @Nullable String string(@Nullable Node node, String field) {
        if (node == null || isNull(node)) {
            return null;
        }
        if (!(node instanceof ScalarNode)) {
            error(node, field, "expected a string, was " + describe(node));
            return null;
        }
        return ((ScalarNode) node).getValue();
    }

    private boolean bool(@Nullable Node node, String field) {
        if (node == null || isNull(node)) {
            return false;
        }
        if (node instanceof ScalarNode && node.getTag().equals(Tag.BOOL)) {
            return Boolean.parseBoolean(((ScalarNode) node).getValue().toLowerCase(Locale.ROOT));
        }
        error(node, field, "expected true or false, was " + describe(node));
        return false;
    }

    /** A whole number in [0, 2^32 - 1] (envoyproxy/ratelimit's uint32); 0 when absent. */
    private long uint(@Nullable Node node, String field) {
        if (node == null || isNull(node)) {
            return 0;
        }
        if (node instanceof ScalarNode && node.getTag().equals(Tag.INT)) {
            String text = ((ScalarNode) node).getValue();
            BigInteger n;
            if (text.startsWith("0x")) {
                n = new BigInteger(text.substring(2), 16);
            } else if (text.startsWith("0o")) {
                n = new BigInteger(text.substring(2), 8);
            } else {
                n = new BigInteger(text);
            }
            if (n.signum() >= 0 && n.compareTo(BigInteger.valueOf(UINT32_MAX)) <= 0) {
                return n.longValue();
            }
        }
        error(node, field, "expected a whole number from 0 to " + UINT32_MAX + ", was " + describe(node));
        return 0;
    }

    // ---- mappings ----

    /** The fields of a mapping by name, each checked: a string name, known here, given once. */
    private Fields fields(MappingNode map, Set<String> known, String prefix) {
        Fields f = new Fields();
        for (NodeTuple t : map.getValue()) {
            Node k = t.getKeyNode();
            String at = prefix.isEmpty() ? "" : prefix + ".";
            if (!(k instanceof ScalarNode) || !k.getTag().equals(Tag.STR)) {
                error(
                        k,
                        prefix,
                        "config error, key is not of type string: " + scalarText(k)
                                + "; field names are strings such as "
                                + String.join(", ", new java.util.TreeSet<>(known)));
                continue;
            }
            String name = ((ScalarNode) k).getValue();
            if (!known.contains(name)) {
                error(
                        k,
                        at + name,
                        "unknown field '" + name + "'" + suggestion(name, known) + "; expected one of "
                                + String.join(", ", new java.util.TreeSet<>(known)));
                continue;
            }
            if (f.values.containsKey(name)) {
                Node first = Objects.requireNonNull(f.key(name), "put with its value");
                error(k, at + name, "field '" + name + "' given twice; first at line " + line(first));
                continue;
            }
            f.values.put(name, t.getValueNode());
            f.keys.put(name, k);
        }
        return f;
    }

    private static String suggestion(String name, Set<String> known) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : known) {
            int d = distance(name.toLowerCase(Locale.ROOT), candidate);
            if (d < bestDistance) {
                bestDistance = d;
                best = candidate;
            }
        }
        if (best != null && bestDistance <= Math.max(2, name.length() / 4)) {
            return " (did you mean '" + best + "'?)";
        }
        if (ALL_FIELDS.contains(name)) {
            return " (it belongs at another level)";
        }
        return "";
    }

    private static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    private static final class Fields {
        final Map<String, Node> values = new LinkedHashMap<>();
        final Map<String, Node> keys = new HashMap<>();

        @Nullable
        Node value(String name) {
            return values.get(name);
        }

        @Nullable
        Node key(String name) {
            return keys.get(name);
        }
    }

    // ---- positions ----

    private void error(Node node, String field, String message) {
        if (errors.size() >= MAX_ERRORS) {
            errorsNotShown++;
            return;
        }
        errors.add(new PolicyError(file, line(node), column(node), field, message));
    }

    private static int line(Node node) {
        return node.getStartMark().map(m -> m.getLine() + 1).orElse(0);
    }

    private static int column(Node node) {
        return node.getStartMark().map(m -> m.getColumn() + 1).orElse(0);
    }

    private static boolean isNull(Node node) {
        return node instanceof ScalarNode && node.getTag().equals(Tag.NULL);
    }

    private static String scalarText(Node node) {
        return node instanceof ScalarNode ? ((ScalarNode) node).getValue() : describe(node);
    }

    private static String describe(Node node) {
        if (node instanceof MappingNode) {
            return "a mapping";
        }
        if (node instanceof SequenceNode) {
            return "a list";
        }
        if (isNull(node)) {
            return "empty";
        }
        return "'" + ((ScalarNode) node).getValue() + "'";
    }

    // ---- limits ----

    /** A file over one of the limits of {@link LimitedParser}, at the event where it went over. */
    private static final class LimitExceeded extends RuntimeException {
        private static final long serialVersionUID = 1L;

        @SuppressWarnings("serial") // never serialized: caught in this class
        final transient Event event;

        final String problem;

        LimitExceeded(Event event, String problem) {
            super(problem, null, false, false);
            this.event = event;
            this.problem = problem;
        }
    }

    /**
     * SnakeYAML's events, each counted as the composer takes it, so that a file past a limit is refused at the event
     * that passes it, before the composer's recursion (one Java frame per level) or this class's walk of an expanded
     * tree can meet it. The limits: {@link Policies#MAX_DEPTH} levels of mappings and lists, counting those an alias
     * brings where it stands; {@link Policies#MAX_NODES} nodes with every alias expanded (a "billion laughs" file is
     * small but expands without end); {@link #MAX_COLLECTION_ALIASES} aliases to mappings and lists; and no alias
     * inside the node it names.
     */
    private static final class LimitedParser implements Parser {

        /** A mapping or list not yet ended. */
        private static final class Open {
            final @Nullable String anchor;
            /** Its depth: 1 for the root collection. */
            final int depth;
            /** Nodes in it, itself included, aliases expanded. */
            long nodes = 1;
            /** The deepest level reached inside it, aliases expanded. */
            int deepest;

            Open(@Nullable String anchor, int depth) {
                this.anchor = anchor;
                this.depth = depth;
                this.deepest = depth;
            }
        }

        /** What an anchor names: its nodes, aliases expanded, and its height in levels of collections (0: a scalar). */
        private record Anchored(long nodes, int height) {}

        private final Parser parser;
        private final ArrayDeque<Open> open = new ArrayDeque<>();
        private final Map<String, Anchored> anchors = new HashMap<>();
        private long nodes;
        private int collectionAliases;

        LimitedParser(Parser parser) {
            this.parser = parser;
        }

        @Override
        public boolean checkEvent(Event.ID id) {
            return parser.checkEvent(id);
        }

        @Override
        public Event peekEvent() {
            return parser.peekEvent();
        }

        @Override
        public boolean hasNext() {
            return parser.hasNext();
        }

        @Override
        public Event next() {
            Event e = parser.next();
            switch (e.getEventId()) {
                case MappingStart, SequenceStart -> {
                    int depth = open.size() + 1;
                    if (depth > Policies.MAX_DEPTH) {
                        throw new LimitExceeded(e, tooDeep());
                    }
                    String anchor = anchor(e);
                    if (anchor != null) {
                        anchors.remove(anchor); // redefined: an alias to it inside is recursive, and is refused
                    }
                    add(e, 1);
                    open.addLast(new Open(anchor, depth));
                }
                case MappingEnd, SequenceEnd -> {
                    Open o = open.removeLast();
                    if (o.anchor != null) {
                        anchors.put(o.anchor, new Anchored(o.nodes, o.deepest - o.depth + 1));
                    }
                    Open parent = open.peekLast();
                    if (parent != null) {
                        parent.nodes += o.nodes;
                        parent.deepest = Math.max(parent.deepest, o.deepest);
                    }
                }
                case Scalar -> {
                    String anchor = anchor(e);
                    if (anchor != null) {
                        anchors.put(anchor, new Anchored(1, 0));
                    }
                    add(e, 1);
                    Open top = open.peekLast();
                    if (top != null) {
                        top.nodes++;
                    }
                }
                case Alias -> alias((AliasEvent) e);
                default -> {}
            }
            return e;
        }

        private void alias(AliasEvent e) {
            String name = e.getAlias().getValue();
            for (Open o : open) {
                if (name.equals(o.anchor)) {
                    throw new LimitExceeded(
                            e, "recursive alias '*" + name + "': it stands inside the node '&" + name + "' it names");
                }
            }
            Anchored a = anchors.get(name);
            if (a == null) {
                return; // an undefined alias: the composer says so
            }
            if (a.height > 0 && ++collectionAliases > MAX_COLLECTION_ALIASES) {
                throw new LimitExceeded(
                        e,
                        "more than " + MAX_COLLECTION_ALIASES + " aliases to mappings or lists, the limit for a "
                                + "policy file");
            }
            int reached = open.size() + a.height;
            if (reached > Policies.MAX_DEPTH) {
                throw new LimitExceeded(e, tooDeep() + " once alias '*" + name + "' is expanded here");
            }
            add(e, a.nodes);
            Open top = open.peekLast();
            if (top != null) {
                top.nodes += a.nodes;
                top.deepest = Math.max(top.deepest, reached);
            }
        }

        private void add(Event e, long n) {
            nodes += n;
            if (nodes > Policies.MAX_NODES) {
                throw new LimitExceeded(
                        e,
                        "more than " + Policies.MAX_NODES + " nodes with its aliases expanded, the limit for a "
                                + "policy file");
            }
        }

        private static String tooDeep() {
            return "nested too deeply: more than " + Policies.MAX_DEPTH + " levels of mappings and lists, the limit "
                    + "for a policy file";
        }

        private static @Nullable String anchor(Event e) {
            return ((NodeEvent) e).getAnchor().map(Anchor::getValue).orElse(null);
        }
    }
}
