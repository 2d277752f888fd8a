package dev.sluice.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.jspecify.annotations.Nullable;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.composer.Composer;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.parser.ParserImpl;
import org.snakeyaml.engine.v2.scanner.StreamReader;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * A statsd_exporter mapping file, as envoyproxy/ratelimit's Prometheus sink applies one to its StatsD-style names
 * ({@code PROMETHEUS_MAPPER_YAML}, {@code --prometheus-mapper}), or its embedded default mapping. Immutable and
 * thread-safe.
 *
 * <p>The subset of statsd_exporter's mapper (v0.26, the one envoyproxy/ratelimit builds with) that Sluice implements:
 * {@code mappings} with {@code match} (a glob whose {@code *} is one whole dot-separated component, or a regular
 * expression with {@code match_type: regex}, found anywhere in the name), {@code name}, {@code labels} (both with
 * {@code $n} and {@code ${n}} substitutions), {@code help}, {@code match_metric_type} ({@code counter}, {@code gauge},
 * {@code observer}), {@code action} ({@code map}, {@code drop}), {@code observer_type} or its older {@code timer_type}
 * ({@code histogram}; {@code summary}, statsd_exporter's default, with its default quantiles), {@code buckets} or
 * {@code histogram_options.buckets}, {@code scale} and {@code honor_labels} (no effect: Sluice's events carry no
 * labels); and {@code defaults} with {@code match_type}, {@code observer_type}/{@code timer_type} and the buckets.
 * Any other field statsd_exporter knows ({@code ttl}, {@code quantiles}, {@code summary_options}, native histograms,
 * {@code glob_disable_ordering}) is refused at load, naming the field and its {@code file:line}, as is any field it does
 * not know.
 *
 * <p>A name is mapped as statsd_exporter maps it: the first glob mapping in file order that matches it and its type,
 * else the first regular expression that does; a name no mapping matches keeps its StatsD name with every character
 * outside {@code [a-zA-Z0-9_]} made {@code _} ({@link #escape}). Regular expressions are Java's, which read the RE2
 * syntax statsd_exporter's Go uses alike for what mapping files use (groups, classes, anchors, {@code (?P<name>…)}).
 */
final class StatsdMapper {
    /** The type of a StatsD event: what {@code match_metric_type} filters on. */
    enum Type {
        COUNTER,
        GAUGE,
        OBSERVER
    }

    /** How an observed value (a timer) is exported. */
    enum Observer {
        HISTOGRAM,
        SUMMARY
    }

    /** The Prometheus client's default buckets, statsd_exporter's default for histograms. */
    static final List<Double> DEFAULT_BUCKETS = List.of(.005, .01, .025, .05, .1, .25, .5, 1.0, 2.5, 5.0, 10.0);

    /** The fields statsd_exporter knows that this mapper does not implement. */
    private static final Set<String> NOT_IMPLEMENTED = Set.of(
            "ttl",
            "quantiles",
            "summary_options",
            "glob_disable_ordering",
            "native_histogram_bucket_factor",
            "native_histogram_max_buckets");

    private static final Pattern GLOB =
            Pattern.compile("^(\\*|[a-zA-Z_][a-zA-Z0-9_\\-]*)(\\.\\*|\\.[a-zA-Z0-9_][a-zA-Z0-9_\\-]*)*$");
    private static final String TEMPLATE = "(\\$\\{?\\d+\\}?)";
    private static final Pattern METRIC_NAME =
            Pattern.compile("^([a-zA-Z_]|" + TEMPLATE + ")([a-zA-Z0-9_]|" + TEMPLATE + ")*$");
    private static final Pattern LABEL_NAME = Pattern.compile("^[a-zA-Z_][a-zA-Z0-9_]+$");
    private static final Pattern GLOB_REFERENCE = Pattern.compile("\\$\\{?([a-zA-Z0-9_$]+)\\}?");

    /**
     * One mapping of the file.
     *
     * @param glob     the glob's components, or null for a regular expression
     * @param regex    the regular expression, or null for a glob
     * @param type     the event type it is limited to, or null for any
     * @param observer how it exports observed values, or null for the defaults'
     * @param buckets  its histogram's buckets, or null for the defaults'
     * @param scale    what values are multiplied by, or NaN for none
     * @param line     its line in the file, from 1
     */
    private record Mapping(
            String match,
            @Nullable List<String> glob,
            @Nullable Pattern regex,
            String name,
            SortedMap<String, String> labels,
            String help,
            @Nullable Type type,
            boolean drop,
            @Nullable Observer observer,
            @Nullable List<Double> buckets,
            double scale,
            int line) {}

    /**
     * What a StatsD name becomes.
     *
     * @param name     the Prometheus name, escaped; empty when a mapping made an empty name (the event is dropped)
     * @param labels   its labels, by name
     * @param help     its help text
     * @param drop     whether the event is dropped ({@code action: drop})
     * @param observer how an observed value is exported
     * @param buckets  a histogram's upper bounds, ascending
     * @param scale    what values are multiplied by, or NaN for none
     * @param mapped   whether a mapping matched (else the name is the StatsD name escaped)
     */
    record Result(
            String name,
            SortedMap<String, String> labels,
            String help,
            boolean drop,
            Observer observer,
            List<Double> buckets,
            double scale,
            boolean mapped) {}

    /** A mapping file that cannot be used: the message names the file and line. */
    static final class MapperException extends Exception {
        private static final long serialVersionUID = 1L;

        MapperException(String message) {
            super(message);
        }
    }

    private final String source;
    private final List<Mapping> globs;
    private final List<Mapping> regexes;
    private final Observer defaultObserver;
    private final List<Double> defaultBuckets;

    private StatsdMapper(
            String source, List<Mapping> globs, List<Mapping> regexes, Observer observer, List<Double> buckets) {
        this.source = source;
        this.globs = globs;
        this.regexes = regexes;
        this.defaultObserver = observer;
        this.defaultBuckets = buckets;
    }

    /** Where the mapping came from: a file's path, or the default mapping's name. */
    String source() {
        return source;
    }

    /**
     * envoyproxy/ratelimit's embedded default mapping ({@code src/stats/prom/default_mapper.yaml}): response time in
     * seconds ({@code scale: 0.001}), or in milliseconds as its {@code PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS} asks.
     */
    static StatsdMapper defaults(boolean responseTimeInMillis) {
        String text;
        try (var in = StatsdMapper.class.getResourceAsStream("envoy-ratelimit-default-mapper.yaml")) {
            if (in == null) {
                throw new IllegalStateException("the default mapping is missing from the jar");
            }
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("the default mapping cannot be read from the jar", e);
        }
        if (responseTimeInMillis) {
            text = text.replace("    scale: 0.001\n", "");
        }
        try {
            return parse(DEFAULT_SOURCE, text);
        } catch (MapperException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    static final String DEFAULT_SOURCE = "envoyproxy/ratelimit's default mapping";

    /** Reads a mapping file. */
    static StatsdMapper read(Path file) throws IOException, MapperException {
        return parse(file.toString(), Files.readString(file, StandardCharsets.UTF_8));
    }

    /**
     * Parses a mapping; {@code source} names it in errors.
     *
     * @throws MapperException naming {@code source:line} and what is wrong or not implemented
     */
    static StatsdMapper parse(String source, String text) throws MapperException {
        LoadSettings settings = LoadSettings.builder()
                .setLabel(source)
                .setSchema(new CoreSchema())
                .setCodePointLimit(1 << 20)
                .build();
        Optional<Node> root;
        try {
            root = new Composer(settings, new ParserImpl(settings, new StreamReader(settings, text))).getSingleNode();
        } catch (MarkedYamlEngineException e) {
            Optional<Mark> mark = e.getProblemMark().isPresent() ? e.getProblemMark() : e.getContextMark();
            throw new MapperException(
                    source + ":" + mark.map(m -> m.getLine() + 1).orElse(1) + ": bad YAML: "
                            + (e.getProblem() == null ? e.getMessage() : e.getProblem()));
        } catch (YamlEngineException e) {
            throw new MapperException(source + ":1: bad YAML: " + e.getMessage());
        }
        Reader r = new Reader(source);
        if (root.isEmpty()) {
            return new StatsdMapper(source, List.of(), List.of(), Observer.SUMMARY, DEFAULT_BUCKETS);
        }
        MappingNode top = r.mapping(root.get(), "the file");
        boolean regexDefault = false;
        Observer observer = null;
        List<Double> buckets = null;
        List<Mapping> globs = new ArrayList<>();
        List<Mapping> regexes = new ArrayList<>();
        Node mappings = null;
        for (NodeTuple t : top.getValue()) {
            String key = r.key(t);
            switch (key) {
                case "mappings" -> mappings = t.getValueNode();
                case "defaults" -> {
                    for (NodeTuple d : r.mapping(t.getValueNode(), "defaults").getValue()) {
                        String k = r.key(d);
                        switch (k) {
                            case "match_type" -> regexDefault = r.regex(d.getValueNode());
                            case "observer_type" -> observer = r.observer(d.getValueNode());
                            case "timer_type" -> observer = observer != null ? observer : r.observer(d.getValueNode());
                            case "buckets" -> buckets = buckets != null ? buckets : r.buckets(d.getValueNode());
                            case "histogram_options" -> buckets = r.histogramOptions(d.getValueNode());
                            default -> throw r.unknown(d, "defaults");
                        }
                    }
                }
                default -> throw r.unknown(t, "the file");
            }
        }
        Observer defaultObserver = observer == null ? Observer.SUMMARY : observer;
        List<Double> defaultBuckets = buckets == null ? DEFAULT_BUCKETS : buckets;
        if (mappings != null
                && !(mappings instanceof ScalarNode s && s.getValue().isEmpty())) {
            if (!(mappings instanceof SequenceNode list)) {
                throw r.error(mappings, "'mappings' must be a list");
            }
            for (Node n : list.getValue()) {
                Mapping m = r.mapping(n, regexDefault);
                (m.glob() != null ? globs : regexes).add(m);
            }
        }
        return new StatsdMapper(source, List.copyOf(globs), List.copyOf(regexes), defaultObserver, defaultBuckets);
    }

    /** What {@code statsdName}, an event of {@code type}, becomes. */
    Result map(String statsdName, Type type) {
        for (Mapping m : globs) {
            if (m.type() != null && m.type() != type) {
                continue;
            }
            List<String> glob = m.glob();
            String[] captures = glob == null ? null : globMatch(glob, statsdName);
            if (captures != null) {
                SortedMap<String, String> labels = new TreeMap<>();
                for (Map.Entry<String, String> l : m.labels().entrySet()) {
                    labels.put(l.getKey(), globFormat(l.getValue(), captures));
                }
                return result(m, globFormat(m.name(), captures), labels);
            }
        }
        for (Mapping m : regexes) {
            Pattern regex = m.regex();
            Matcher found = regex == null ? null : regex.matcher(statsdName);
            if (found == null || !found.find() || (m.type() != null && m.type() != type)) {
                continue;
            }
            SortedMap<String, String> labels = new TreeMap<>();
            for (Map.Entry<String, String> l : m.labels().entrySet()) {
                labels.put(l.getKey(), expand(l.getValue(), found));
            }
            return result(m, expand(m.name(), found), labels);
        }
        return new Result(
                escape(statsdName),
                new TreeMap<>(),
                DEFAULT_HELP,
                false,
                defaultObserver,
                defaultBuckets,
                Double.NaN,
                false);
    }

    static final String DEFAULT_HELP = "Metric autogenerated by statsd_exporter.";

    private Result result(Mapping m, String name, SortedMap<String, String> labels) {
        return new Result(
                escape(name),
                labels,
                m.help().isEmpty() ? DEFAULT_HELP : m.help(),
                m.drop(),
                m.observer() != null ? m.observer() : defaultObserver,
                m.buckets() != null ? m.buckets() : defaultBuckets,
                m.scale(),
                true);
    }

    /** The captures of {@code glob} in {@code name}, one per {@code *}, or null if it does not match. */
    static String @Nullable [] globMatch(List<String> glob, String name) {
        String[] fields = name.split("\\.", -1);
        if (fields.length != glob.size()) {
            return null;
        }
        List<String> captures = new ArrayList<>();
        for (int i = 0; i < fields.length; i++) {
            if (glob.get(i).equals("*")) {
                captures.add(fields[i]);
            } else if (!glob.get(i).equals(fields[i])) {
                return null;
            }
        }
        return captures.toArray(String[]::new);
    }

    /** A glob mapping's template: {@code $n} or {@code ${n}} is capture n; a reference to no capture is dropped. */
    static String globFormat(String template, String[] captures) {
        Matcher m = GLOB_REFERENCE.matcher(template);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String value = "";
            String ref = m.group(1);
            if (ref.chars().allMatch(Character::isDigit) && ref.length() < 10) {
                int i = Integer.parseInt(ref);
                value = i >= 1 && i <= captures.length ? captures[i - 1] : "";
            }
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        m.appendTail(out);
        return out.toString();
    }

    /**
     * A regular expression mapping's template, as Go's {@code Regexp.Expand} reads it: {@code $$} is {@code $};
     * {@code $name} or {@code ${name}} (the longest run of letters, digits and {@code _}) is the group of that number
     * or name, empty if there is none or it did not take part; a {@code $} followed by neither stays as it is.
     */
    static String expand(String template, Matcher found) {
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < template.length()) {
            char c = template.charAt(i);
            if (c != '$') {
                out.append(c);
                i++;
                continue;
            }
            if (i + 1 < template.length() && template.charAt(i + 1) == '$') {
                out.append('$');
                i += 2;
                continue;
            }
            boolean braced = i + 1 < template.length() && template.charAt(i + 1) == '{';
            int start = braced ? i + 2 : i + 1;
            int end = start;
            while (end < template.length() && isNameChar(template.charAt(end))) {
                end++;
            }
            if (end == start || (braced && (end >= template.length() || template.charAt(end) != '}'))) {
                out.append('$');
                i++;
                continue;
            }
            out.append(group(found, template.substring(start, end)));
            i = braced ? end + 1 : end;
        }
        return out.toString();
    }

    private static boolean isNameChar(char c) {
        return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }

    private static String group(Matcher found, String name) {
        String value = null;
        if (name.chars().allMatch(Character::isDigit)) {
            if (name.length() < 10) {
                int n = Integer.parseInt(name);
                value = n <= found.groupCount() ? found.group(n) : null;
            }
        } else {
            try {
                value = found.group(name);
            } catch (IllegalArgumentException e) {
                value = null; // no group of that name
            }
        }
        return value == null ? "" : value;
    }

    /**
     * A name as statsd_exporter escapes it: every character outside {@code [a-zA-Z0-9_]} becomes {@code _} (a run of
     * {@code -} one {@code _}), and a leading digit is preceded by {@code _}.
     */
    static String escape(String name) {
        if (name.isEmpty()) {
            return name;
        }
        StringBuilder out = new StringBuilder(name.length() + 1);
        if (name.charAt(0) >= '0' && name.charAt(0) <= '9') {
            out.append('_');
        }
        int previous = 0;
        for (int i = 0; i < name.length(); ) {
            int c = name.codePointAt(i);
            i += Character.charCount(c);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') {
                out.appendCodePoint(c);
            } else if (c == '-' && previous == '-') {
                continue; // a run of dashes is one '_'
            } else {
                out.append('_');
            }
            previous = c;
        }
        return out.toString();
    }

    /** Reads the nodes of one file, each error naming its line. */
    private static final class Reader {
        private final String source;

        Reader(String source) {
            this.source = source;
        }

        MapperException error(Node at, String message) {
            int line = at.getStartMark().map(m -> m.getLine() + 1).orElse(1);
            return new MapperException(source + ":" + line + ": " + message);
        }

        MapperException unknown(NodeTuple t, String where) {
            String key = key(t);
            if (NOT_IMPLEMENTED.contains(key)) {
                return error(
                        t.getKeyNode(),
                        "'" + key + "' is a statsd_exporter feature Sluice does not implement (docs/envoy-ratelimit.md"
                                + " lists what it does)");
            }
            return error(t.getKeyNode(), "unknown field '" + key + "' in " + where);
        }

        /** A key of a mapping {@link #mapping(Node, String)} has checked. */
        String key(NodeTuple t) {
            return ((ScalarNode) t.getKeyNode()).getValue();
        }

        String text(Node n, String field) throws MapperException {
            if (!(n instanceof ScalarNode s)) {
                throw error(n, "'" + field + "' must be a string");
            }
            return s.getValue();
        }

        MappingNode mapping(Node n, String what) throws MapperException {
            if (!(n instanceof MappingNode m)) {
                throw error(n, what + " must be a mapping of fields");
            }
            for (NodeTuple t : m.getValue()) {
                if (!(t.getKeyNode() instanceof ScalarNode)) {
                    throw error(t.getKeyNode(), "a key must be a string");
                }
            }
            return m;
        }

        boolean regex(Node n) throws MapperException {
            String v = text(n, "match_type");
            return switch (v) {
                case "regex" -> true;
                case "glob", "" -> false;
                default -> throw error(n, "invalid match_type '" + v + "': expected glob or regex");
            };
        }

        Observer observer(Node n) throws MapperException {
            String v = text(n, "observer_type");
            return switch (v) {
                case "histogram" -> Observer.HISTOGRAM;
                case "summary", "" -> Observer.SUMMARY;
                default -> throw error(n, "invalid observer_type '" + v + "': expected histogram or summary");
            };
        }

        List<Double> buckets(Node n) throws MapperException {
            if (!(n instanceof SequenceNode list) || list.getValue().isEmpty()) {
                throw error(n, "'buckets' must be a list of numbers");
            }
            List<Double> b = new ArrayList<>();
            for (Node v : list.getValue()) {
                b.add(number(v, "buckets"));
            }
            b.sort(null);
            return List.copyOf(b);
        }

        List<Double> histogramOptions(Node n) throws MapperException {
            List<Double> buckets = null;
            for (NodeTuple t : mapping(n, "histogram_options").getValue()) {
                if (key(t).equals("buckets")) {
                    buckets = buckets(t.getValueNode());
                } else {
                    throw unknown(t, "histogram_options");
                }
            }
            if (buckets == null) {
                throw error(n, "histogram_options without buckets");
            }
            return buckets;
        }

        double number(Node n, String field) throws MapperException {
            String v = text(n, field);
            try {
                return Double.parseDouble(v);
            } catch (NumberFormatException e) {
                throw error(n, "'" + field + "' must be a number, was '" + v + "'");
            }
        }

        Mapping mapping(Node n, boolean regexDefault) throws MapperException {
            MappingNode fields = mapping(n, "a mapping");
            String match = null;
            String name = null;
            SortedMap<String, String> labels = new TreeMap<>();
            String help = "";
            Boolean regex = null;
            Type type = null;
            boolean drop = false;
            Observer observer = null;
            Observer timer = null;
            List<Double> buckets = null;
            List<Double> legacyBuckets = null;
            double scale = Double.NaN;
            Node matchNode = n;
            for (NodeTuple t : fields.getValue()) {
                Node v = t.getValueNode();
                switch (key(t)) {
                    case "match" -> {
                        match = text(v, "match");
                        matchNode = v;
                    }
                    case "name" -> name = text(v, "name");
                    case "help" -> help = text(v, "help");
                    case "labels" -> {
                        for (NodeTuple l : mapping(v, "labels").getValue()) {
                            String label = key(l);
                            if (!LABEL_NAME.matcher(label).matches()) {
                                throw error(l.getKeyNode(), "invalid label key: " + label);
                            }
                            labels.put(label, text(l.getValueNode(), "labels." + label));
                        }
                    }
                    case "match_type" -> regex = regex(v);
                    case "match_metric_type" -> {
                        String s = text(v, "match_metric_type");
                        type = switch (s) {
                            case "counter" -> Type.COUNTER;
                            case "gauge" -> Type.GAUGE;
                            case "observer", "timer" -> Type.OBSERVER;
                            default -> throw error(
                                    v, "invalid match_metric_type '" + s + "': expected counter, gauge or observer");
                        };
                    }
                    case "action" -> {
                        String s = text(v, "action");
                        drop = switch (s) {
                            case "drop" -> true;
                            case "map", "" -> false;
                            default -> throw error(v, "invalid action '" + s + "': expected map or drop");
                        };
                    }
                    case "observer_type" -> observer = observer(v);
                    case "timer_type" -> timer = observer(v);
                    case "buckets" -> legacyBuckets = buckets(v);
                    case "histogram_options" -> buckets = histogramOptions(v);
                    case "scale" -> scale = number(v, "scale");
                    case "honor_labels" -> text(v, "honor_labels");
                    default -> throw unknown(t, "a mapping");
                }
            }
            if (match == null) {
                throw error(n, "a mapping without 'match'");
            }
            if (name == null || name.isEmpty()) {
                throw error(n, "metric mapping didn't set a metric name");
            }
            if (!METRIC_NAME.matcher(name).matches()) {
                throw error(n, "metric name '" + name + "' doesn't match regex '" + METRIC_NAME.pattern() + "'");
            }
            if (buckets != null && legacyBuckets != null) {
                throw error(n, "cannot use buckets in both the top level and histogram options at the same time");
            }
            boolean isRegex = regex != null ? regex : regexDefault;
            List<String> glob = null;
            Pattern pattern = null;
            if (isRegex) {
                try {
                    pattern = Pattern.compile(match.replace("(?P<", "(?<"));
                } catch (PatternSyntaxException e) {
                    throw error(matchNode, "invalid regex " + match + " in mapping: " + e.getDescription());
                }
            } else {
                if (!GLOB.matcher(match).matches()) {
                    throw error(matchNode, "invalid match: " + match);
                }
                glob = List.of(match.split("\\.", -1));
            }
            return new Mapping(
                    match,
                    glob,
                    pattern,
                    name,
                    labels,
                    help,
                    type,
                    drop,
                    observer != null ? observer : timer,
                    buckets != null ? buckets : legacyBuckets,
                    scale,
                    n.getStartMark().map(m -> m.getLine() + 1).orElse(1));
        }
    }

    @Override
    public String toString() {
        return source + " (" + (globs.size() + regexes.size()) + " mappings)";
    }
}
