package dev.sluice.server;

import dev.sluice.server.replay.LogReader;
import dev.sluice.server.replay.Replay;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/** {@code replay}: a request log run through a configuration on a virtual clock ({@link Replay}). */
final class ReplayCommand {
    static final String HELP =
            """
            Usage: java -jar sluice-server.jar replay --config PATH --log FILE [options]

            Runs every request of a log through the configuration, as the service would decide it at the request's
            time (in memory, on a virtual clock), and reports per rule and key: requests, allowed, denied (would
            deny for dry-run rules), the peak per window against the limit, and for every refused key the smallest
            limit that would have refused it nothing.

            The log: JSON lines, each a POST /json request body plus "time" (epoch milliseconds or ISO-8601 with a
            zone); or CSV (--csv-input, or a name ending .csv or .csv.gz) with a header naming a time column, one
            column per descriptor key in entry order, and optionally domain and hits columns. Gzip is read directly;
            '-' reads standard input.

            Options:
              --config PATH           a YAML file or a directory of them, as serve --config takes
              --log FILE              the log; '-' for standard input
              --csv                   print domain,rule,key,requests,allowed,denied rows instead of the summary
              --report FILE.html      also write a page of charts (self-contained: no network)
              --sweep RULE=L1,L2,...  try the rule's limit at each candidate: keys and requests refused per candidate;
                                      RULE as /rlconfig names it (domain.path) or its path alone
              --csv-input             the log is CSV whatever its name
              --domain D              the domain of a CSV log without a domain column
              --strict                stop at the first bad line, exit status 1
              --reorder-window D      how far out of time order a line may be and still be replayed in order;
                                      default 5s; 0ms: the log must be in order
              --top N                 keys shown per rule; default 10
              --threads N             decide on up to N threads; default: one per processor but one (the log's
                                      reader's). The requests are split by a descriptor key every limited rule
                                      counts per value (client_id, say), so the answer is the one-thread answer;
                                      when no key is, or a request names two threads' keys, the log is decided on
                                      one thread (the summary says which)

            Bad lines (malformed, no time, an unknown domain, out of order beyond the window) are counted and the
            first few printed on standard error with their line numbers. A progress bar is drawn on standard error
            when it is a terminal. Exit status: 0 done, 1 a configuration error or a bad line under --strict,
            2 a bad command line, 3 the log cannot be read.
            """;

    private ReplayCommand() {}

    static int run(List<String> args, InputStream stdin, PrintStream out, PrintStream err, boolean terminal) {
        Options o = Options.parse(
                "replay",
                args,
                Set.of("config", "log", "report", "sweep", "domain", "reorder-window", "top", "threads"),
                Set.of("help", "csv", "csv-input", "strict"));
        if (o.flag("help")) {
            out.print(HELP);
            return 0;
        }
        if (!o.operands().isEmpty()) {
            throw new UsageException(
                    "replay: unexpected argument '" + o.operands().get(0) + "'");
        }
        String config = o.string("config");
        String log = o.string("log");
        if (config == null || log == null) {
            throw new UsageException("replay: give --config PATH and --log FILE (see: sluice-server replay --help)");
        }
        if (!java.nio.file.Files.exists(Path.of(config))) {
            throw o.bad("config", config, "an existing file or directory");
        }
        String report = o.string("report");
        String sweep = o.string("sweep");
        if (sweep != null && o.flag("csv") && report == null) {
            throw new UsageException("replay: --sweep prints its table in the summary or the report: with --csv,"
                    + " give --report FILE.html too");
        }
        String window = o.string("reorder-window");
        Duration reorder = window == null
                ? LogReader.DEFAULT_REORDER_WINDOW
                : window.equals("0") || window.equals("0ms") || window.equals("0s")
                        ? Duration.ZERO
                        : o.duration("reorder-window");
        try {
            Replay.Settings s = new Replay.Settings(
                    Path.of(config),
                    log,
                    o.string("domain"),
                    o.flag("csv-input"),
                    reorder == null ? LogReader.DEFAULT_REORDER_WINDOW : reorder,
                    o.flag("strict"),
                    o.flag("csv"),
                    report == null ? null : Path.of(report),
                    sweep,
                    o.intBetween("top", 10, 1, 1_000_000),
                    terminal,
                    o.intBetween("threads", Replay.defaultThreads(), 1, 1024));
            return Replay.run(s, stdin, out, err);
        } catch (IllegalArgumentException e) {
            throw new UsageException("replay: " + e.getMessage());
        }
    }
}
