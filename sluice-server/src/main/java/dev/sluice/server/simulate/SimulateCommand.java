package dev.sluice.server.simulate;

import dev.sluice.Algorithm;
import dev.sluice.server.Options;
import dev.sluice.server.UsageException;
import dev.sluice.server.simulate.Simulation.Mode;
import dev.sluice.server.simulate.Simulation.Result;
import dev.sluice.server.simulate.Simulation.Setup;
import dev.sluice.server.simulate.Simulation.Traffic;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * {@code simulate}: runs {@link Simulation} for one setup, or for every combination of the values listed, and prints
 * what each admitted against the limit, window by window (one setup) or run by run (several).
 */
public final class SimulateCommand {
    static final String HELP =
            """
            Usage: java -jar sluice-server.jar simulate [options]

            Many instances of the service in one process on a virtual clock, deciding with the library's own
            limiters over one shared in-memory store, as fast as the machine runs them: what a mode, a round
            interval and an instance count do to a limit, for a traffic. It answers "which interval, for my
            traffic, with N instances". The same options always give the same output.

            The fleet (a comma-separated list, e.g. --instances 2,10,30, runs every combination):
              --mode M          exact (every decision on the shared store), synchronized or leased;
                                default synchronized
              --instances N     instances sharing the limit; default 10
              --interval D      how often each instance runs a round (synchronized: flush, then refresh;
                                leased: refresh); default 100ms (exact mode has no rounds: the interval
                                only counts store calls per instance per interval)
              --algorithm A     fixed_window, sliding_window_counter (10 sub-windows) or sliding_tail;
                                in exact mode also sliding_log, token_bucket or leaky_bucket (synchronized
                                and leased mode do not keep them: such a combination is left out, and
                                said so on standard error); default sliding_tail
              --limit L         requests per window on each key; default 50
              --traffic T       how requests reach the instances: even (in turn), random, skewed (one
                                instance takes 80%, the others share the rest), cold-flood (at random, on
                                keys no instance holds yet: give a high --rate), instance-dies (at random;
                                the last instance dies at --dies-at, its unshared state lost); default random
              --rate R          requests per second offered, over all keys; default 500

            The rest:
              --window D        the limit's window; default 1s
              --keys K          keys the requests go to in turn, each with its own limit; default 1
              --duration D      virtual time to run; default 20s
              --seed S          the seed of the random choices; default 1
              --dies-at D       instance-dies: when the last instance dies; default half the duration

            Traffic from a request log, as replay reads it (in place of --traffic, --rate, --keys, --duration):
              --log FILE        JSON lines of /json request bodies with a "time", or CSV with time and
                                domain columns (a name ending .csv or .csv.gz); gzip read directly. Each descriptor of a request is one request
                                on its own key, at the line's time after the first line's; the log is held in
                                memory (16 bytes a descriptor). Lines that are not requests are counted and
                                the first few printed on standard error.
              --spread S        how the log's requests reach the instances: random (default), or by=KEY:
                                by the value of the descriptor key KEY, each value always to one instance
                                (a request without KEY to one at random)

            Output:
              --csv             CSV on standard output instead of the report: a header, then one row per
                                window of every run
              --chart FILE.png  a chart of what each run admitted per window against the limit: one panel
                                per algorithm and limit, a line per run (at most 8 a panel)
              --report FILE.html  a page (self-contained: no network) with the runs' table and, per algorithm
                                and limit, what each run admitted and the peak of M per window against the
                                limit

            Durations are like 50ms, 1s, 5m. For each window the report gives the requests offered and admitted,
            the share of the limit used (admitted over the limit of every key offered a request), the peak of
            the algorithm's own measure M of what was admitted on a key (the window's count, the sliding tail's
            estimate, the live sub-windows' sum) and how far it went over the limit, and the counter store calls
            per instance per interval. Several runs print one row each. Exit status 0, or 2 on a bad option.
            """;

    private static final Set<String> VALUED = Set.of(
            "mode",
            "instances",
            "interval",
            "algorithm",
            "limit",
            "traffic",
            "rate",
            "window",
            "keys",
            "duration",
            "seed",
            "dies-at",
            "chart",
            "report",
            "log",
            "spread");

    /** The traffic {@code --traffic} names: all but a log's. */
    private static final Traffic[] GENERATED = {
        Traffic.EVEN, Traffic.RANDOM, Traffic.SKEWED, Traffic.COLD_FLOOD, Traffic.INSTANCE_DIES
    };

    private SimulateCommand() {}

    /** Runs the command: status 0, or throws {@link UsageException} on a bad command line. */
    public static int run(List<String> args, PrintStream out, PrintStream err) {
        Options o = Options.parse("simulate", args, VALUED, Set.of("help", "csv"));
        if (o.flag("help")) {
            out.print(HELP);
            return 0;
        }
        if (!o.operands().isEmpty()) {
            throw new UsageException(
                    "simulate: unexpected argument '" + o.operands().get(0) + "' (see: sluice-server simulate --help)");
        }
        String logFile = o.string("log");
        LogTraffic log = null;
        if (logFile != null) {
            log = readLog(o, logFile, err);
            if (log.size() == 0) {
                err.println("simulate: the log " + logFile + " holds no request");
                return 1;
            }
        }
        List<String> leftOut = new ArrayList<>();
        List<Setup> setups = setups(o, log, leftOut);
        for (String why : leftOut) {
            err.println("simulate: left out, " + why);
        }
        List<Result> results = new ArrayList<>();
        for (Setup s : setups) {
            results.add(log == null ? Simulation.run(s) : Simulation.run(s, log));
        }
        if (o.flag("csv")) {
            SimulationReport.csv(results, out);
        } else if (results.size() == 1) {
            SimulationReport.windows(results.get(0), out);
        } else {
            SimulationReport.table(results, out);
        }
        String chart = o.string("chart");
        if (chart != null) {
            try {
                SimulationReport.chart(results, new File(chart));
            } catch (IOException e) {
                err.println("simulate: cannot write the chart to " + chart + ": " + e.getMessage());
                return 1;
            }
            err.println("simulate: chart written to " + chart);
        }
        String report = o.string("report");
        if (report != null) {
            try {
                SimulationReport.page(results, leftOut, Path.of(report));
            } catch (IOException e) {
                err.println("simulate: cannot write the report to " + report + ": " + e.getMessage());
                return 1;
            }
            err.println("simulate: report written to " + report);
        }
        return 0;
    }

    private static LogTraffic readLog(Options o, String file, PrintStream err) {
        for (String generated : List.of("traffic", "rate", "keys", "duration", "dies-at")) {
            if (o.string(generated) != null) {
                throw new UsageException("simulate: --" + generated + " cannot go with --log, which gives the traffic");
            }
        }
        String spread = o.string("spread", "random");
        String by = null;
        if (spread.startsWith("by=") && spread.length() > 3) {
            by = spread.substring(3);
        } else if (!spread.equals("random")) {
            throw bad("spread", spread, "random or by=KEY, such as by=client_id");
        }
        Path path = Path.of(file);
        if (!Files.isReadable(path)) {
            throw bad("log", file, "a readable file");
        }
        int[] shown = {0};
        try {
            LogTraffic log = LogTraffic.read(path, by, line -> {
                if (shown[0]++ < 5) {
                    err.println("simulate: " + file + ": " + line);
                }
            });
            if (log.badLines() > 0) {
                err.println("simulate: " + file + ": " + log.badLines()
                        + (log.badLines() == 1 ? " line that is not a request" : " lines that are not requests")
                        + ", left out");
            }
            return log;
        } catch (IOException e) {
            throw new UsageException("simulate: cannot read the log " + file + ": " + e.getMessage());
        }
    }

    /**
     * Every combination of the values listed, in the order of the options' lists (mode outermost), but those whose
     * mode does not run the algorithm: why each such mode and algorithm is left out is added to {@code leftOut}.
     *
     * @throws UsageException if every combination is left out
     */
    static List<Setup> setups(Options o, @Nullable LogTraffic log, List<String> leftOut) {
        List<Mode> modes = list(
                o,
                "mode",
                "synchronized",
                v -> named(Mode.values(), Names::of, "mode", v, "exact, synchronized or leased"));
        List<Long> instances = list(o, "instances", "10", v -> whole("instances", v, 1, 100_000));
        List<Duration> intervals = list(o, "interval", "100ms", v -> duration("interval", v));
        List<Algorithm> algorithms = list(
                o,
                "algorithm",
                "sliding_tail",
                v -> named(
                        Algorithm.values(),
                        Names::of,
                        "algorithm",
                        v,
                        "fixed_window, sliding_window_counter, sliding_tail, sliding_log, token_bucket or"
                                + " leaky_bucket"));
        List<Long> limits = list(o, "limit", "50", v -> whole("limit", v, 1, Long.MAX_VALUE / 2));
        List<Traffic> traffics = list(
                o,
                "traffic",
                "random",
                v -> named(GENERATED, Names::of, "traffic", v, "even, random, skewed, cold-flood or instance-dies"));
        List<Long> rates = list(o, "rate", "500", v -> whole("rate", v, 1, 1_000_000_000));
        Duration window = single(o, "window", "1s", v -> duration("window", v));
        long keys = single(o, "keys", "1", v -> whole("keys", v, 1, 10_000_000));
        Duration duration = single(o, "duration", "20s", v -> duration("duration", v));
        if (log != null) {
            long w = window.toNanos();
            long windows = Math.max(1, (log.spanNanos() + w - 1) / w);
            duration = window.multipliedBy(windows);
            keys = log.keys();
            double seconds = Math.max(1, log.spanNanos()) / 1e9;
            traffics = List.of(Traffic.LOG);
            rates = List.of(Math.max(1, Math.min(1_000_000_000L, Math.round(log.size() / seconds))));
        }
        long seed = single(o, "seed", "1", v -> whole("seed", v, Long.MIN_VALUE, Long.MAX_VALUE));
        String diesAt = o.string("dies-at");
        Duration dieAt = diesAt == null ? null : duration("dies-at", diesAt);
        if (duration.compareTo(window) < 0) {
            throw new UsageException("simulate: --duration '" + Names.of(duration)
                    + "' is not valid: expected at least the window, " + Names.of(window));
        }
        if (dieAt != null && dieAt.compareTo(duration) >= 0) {
            throw new UsageException("simulate: --dies-at '" + diesAt + "' is not valid: expected a time within the"
                    + " run's " + Names.of(duration));
        }
        List<Setup> setups = new ArrayList<>();
        String firstRefusal = null;
        for (Mode m : modes) {
            for (Algorithm a : algorithms) {
                String refusal = Simulation.refusal(m, a);
                if (refusal != null) {
                    leftOut.add(refusal);
                    if (firstRefusal == null) {
                        firstRefusal = "--algorithm '" + Names.of(a) + "' is not valid with --mode " + Names.of(m)
                                + ": " + refusal;
                    }
                }
            }
            for (long n : instances) {
                for (Duration interval : intervals) {
                    for (Algorithm a : algorithms) {
                        if (Simulation.refusal(m, a) != null) {
                            continue;
                        }
                        for (long limit : limits) {
                            for (Traffic t : traffics) {
                                for (long rate : rates) {
                                    setups.add(setup(
                                            m, a, n, interval, limit, window, t, rate, keys, duration, seed, dieAt));
                                }
                            }
                        }
                    }
                }
            }
        }
        if (setups.isEmpty() && firstRefusal != null) {
            throw new UsageException("simulate: " + firstRefusal);
        }
        return setups;
    }

    private static Setup setup(
            Mode mode,
            Algorithm algorithm,
            long instances,
            Duration interval,
            long limit,
            Duration window,
            Traffic traffic,
            long rate,
            long keys,
            Duration duration,
            long seed,
            @Nullable Duration dieAt) {
        if (traffic == Traffic.INSTANCE_DIES && instances < 2) {
            throw new UsageException(
                    "simulate: --traffic instance-dies needs --instances of at least 2, was " + instances);
        }
        try {
            return new Setup(
                    mode,
                    algorithm,
                    (int) instances,
                    interval,
                    limit,
                    window,
                    traffic,
                    (int) rate,
                    (int) keys,
                    duration,
                    seed,
                    dieAt);
        } catch (IllegalArgumentException e) {
            throw new UsageException("simulate: " + e.getMessage());
        }
    }

    private static <T> List<T> list(Options o, String name, String defaultValue, Function<String, T> parse) {
        Map<String, T> values = new LinkedHashMap<>();
        for (String v : o.string(name, defaultValue).split(",", -1)) {
            values.putIfAbsent(v.trim(), parse.apply(v.trim()));
        }
        return new ArrayList<>(values.values());
    }

    private static <T> T single(Options o, String name, String defaultValue, Function<String, T> parse) {
        String v = o.string(name, defaultValue);
        if (v.contains(",")) {
            throw new UsageException("simulate: --" + name + " '" + v + "' is not valid: expected one value (lists"
                    + " are for --mode, --instances, --interval, --algorithm, --limit, --traffic and --rate)");
        }
        return parse.apply(v);
    }

    private static <T> T named(T[] values, Function<T, String> name, String option, String v, String expected) {
        for (T t : values) {
            if (name.apply(t).equals(v)) {
                return t;
            }
        }
        throw bad(option, v, expected);
    }

    private static long whole(String option, String v, long min, long max) {
        try {
            long n = Long.parseLong(v);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw bad(option, v, min == Long.MIN_VALUE ? "a whole number" : "a whole number from " + min + " to " + max);
    }

    private static Duration duration(String option, String v) {
        Duration d = Options.parse("simulate", List.of("--" + option, v), Set.of(option), Set.of())
                .duration(option);
        if (d == null) {
            throw bad(option, v, "a positive duration such as 100ms, 1s or 5m");
        }
        return d;
    }

    private static UsageException bad(String option, String value, String expected) {
        return new UsageException("simulate: --" + option + " '" + value + "' is not valid: expected " + expected);
    }

    static String percent(double share) {
        return String.format(Locale.ROOT, "%.0f%%", 100 * share);
    }
}
