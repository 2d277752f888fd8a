package dev.sluice.server.replay;

import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyError;
import dev.sluice.policy.PolicyException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * {@code replay}: a request log run through a configuration on a virtual clock, reported per rule and key. See
 * {@link Partitions} for how the requests are split between threads without changing an answer, {@link Replayer} for
 * what is counted, {@link Summary} and {@link CsvRows} for what is printed, {@link HtmlReport} for
 * the report page and {@code docs/rollout.md} for how to use it.
 */
public final class Replay {
    private Replay() {}

    /**
     * What to replay and how.
     *
     * @param config        the configuration: a YAML file or a directory of them
     * @param log           the log file, or {@code -} for standard input
     * @param domain        the domain of a CSV log's lines when it has no {@code domain} column
     * @param csvInput      the log is CSV whatever its name
     * @param reorderWindow how far out of time order a line may be and still be replayed in order
     * @param strict        stop at the first bad line, exit status 1
     * @param csv           print {@code domain,rule,key,requests,allowed,denied} rows instead of the summary
     * @param report        where to write the report page; null: none
     * @param sweep         {@code RULE=L1,L2,…}; null: no sweep
     * @param top           keys shown per rule in the summary and the report
     * @param progress      draw a progress bar on the error stream (which should be a terminal)
     * @param threads       the most threads to decide on ({@link Partitions}); 1: in order on one thread
     */
    public record Settings(
            Path config,
            String log,
            @Nullable String domain,
            boolean csvInput,
            Duration reorderWindow,
            boolean strict,
            boolean csv,
            @Nullable Path report,
            @Nullable String sweep,
            int top,
            boolean progress,
            int threads) {
        /** Checks the settings that can be checked before reading anything. */
        public Settings {
            Objects.requireNonNull(config, "config must not be null");
            Objects.requireNonNull(log, "log must not be null");
            Objects.requireNonNull(reorderWindow, "reorderWindow must not be null");
            if (top < 1) {
                throw new IllegalArgumentException("top must be >= 1, was " + top);
            }
            if (threads < 1) {
                throw new IllegalArgumentException("threads must be >= 1, was " + threads);
            }
        }
    }

    /**
     * Whether standard error is a terminal, where {@code replay} draws its progress bar: on Linux, where
     * {@code /proc/self/fd/2} leads; false elsewhere.
     */
    public static boolean stderrIsTerminal() {
        return Progress.stderrIsTerminal();
    }

    /**
     * The default {@link Settings#threads()}: a processor each but one, which the log's reading and routing thread
     * keeps busy, up to {@value Partitions#MAX}; one on two processors, where a second deciding thread has no core of
     * its own and is slower than one.
     */
    public static int defaultThreads() {
        return Math.max(1, Math.min(Partitions.MAX, Runtime.getRuntime().availableProcessors() - 1));
    }

    /** A bad line under {@code --strict}: the replay stops. */
    private static final class Stop extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient BadLine line;

        Stop(BadLine line) {
            super(line.toString(), null, false, false);
            this.line = line;
        }
    }

    /**
     * Runs a replay, printing the result on {@code out} and problems on {@code err}.
     *
     * @param stdin read when the log is {@code -}
     * @return the exit status: 0 done (bad lines, if any, reported), 1 the configuration does not load or a bad line
     *     under {@code --strict}, 3 the log cannot be read
     * @throws IllegalArgumentException if the settings name something that is not there (a sweep's rule, a log file),
     *                                  naming it
     */
    public static int run(Settings s, InputStream stdin, PrintStream out, PrintStream err) {
        Policies policies;
        try {
            policies = Policies.load(s.config());
        } catch (PolicyException e) {
            for (PolicyError error : e.errors()) {
                err.println(error);
            }
            err.println("replay: the configuration has " + e.errors().size() + " error(s)");
            return 1;
        }
        if (policies.domains().isEmpty()) {
            err.println("replay: " + s.config() + " defines no domain: nothing would be limited");
            return 1;
        }
        Sweep.Spec spec = null;
        Sweep.Found swept = null;
        String sweepText = s.sweep();
        if (sweepText != null) {
            spec = Sweep.Spec.parse(sweepText);
            swept = Sweep.find(policies, spec.rule());
        }
        long[] candidates = spec == null
                ? new long[0]
                : spec.limits().stream().mapToLong(Long::longValue).toArray();
        if (!s.log().equals("-") && !Files.isReadable(Path.of(s.log()))) {
            throw new IllegalArgumentException("--log '" + s.log() + "': no such file, or not readable");
        }
        long start = System.nanoTime();
        Partitions partitions = Partitions.of(policies, s.threads(), s.log().equals("-"));
        Replayed replayed;
        try {
            try {
                replayed = decide(s, stdin, err, policies, partitions);
            } catch (Deciders.Joined joined) {
                replayed = decide(s, stdin, err, policies, Partitions.one(String.valueOf(joined.getMessage())));
            }
        } catch (Stop stop) {
            err.println("replay: " + stop.line);
            err.println("replay: stopped at the first bad line (--strict)");
            return 1;
        } catch (IOException e) {
            err.println("replay: cannot read " + s.log() + ": " + e.getMessage());
            return 3;
        }
        try {
            Sweep sweep = swept == null ? null : Sweep.run(replayed, swept, candidates);
            long nanos = System.nanoTime() - start;
            if (replayed.badLines() > 0) {
                Summary.badLines(replayed, err);
            }
            if (s.csv()) {
                CsvRows.print(replayed, out);
            } else {
                Summary.print(replayed, s, sweep, nanos, out);
            }
            Path report = s.report();
            if (report != null) {
                HtmlReport.write(replayed, s, sweep, report);
            }
            out.flush();
            return 0;
        } catch (IOException e) {
            err.println("replay: cannot read the replay's temporary file: " + e.getMessage());
            return 3;
        } finally {
            close(replayed.parts(), err);
        }
    }

    /**
     * Decides the log in {@code partitions}, each part by its own {@link Replayer}, and finds the limits each refused
     * key needed when the output shows them; the parts are closed if this throws, else by the caller.
     */
    private static Replayed decide(
            Settings s, InputStream stdin, PrintStream err, Policies policies, Partitions partitions)
            throws IOException {
        List<Replayer> parts = new ArrayList<>();
        boolean done = false;
        try {
            long logBytes = s.log().equals("-") ? -1 : Files.size(Path.of(s.log()));
            int slots = Replayer.resolutionSlots(logBytes, partitions.count());
            boolean neededLimits = showsNeededLimits(s);
            boolean keepRequests = neededLimits || s.sweep() != null;
            for (int i = 0; i < partitions.count(); i++) {
                parts.add(new Replayer(policies, slots, keepRequests));
            }
            Replayer first = parts.get(0); // counts the bad lines, on the thread that reads the log
            LogReader.Builder b =
                    s.log().equals("-") ? LogReader.builder(stdin, "-") : LogReader.builder(Path.of(s.log()));
            if (s.csvInput()) {
                b.format(LogReader.Format.CSV);
            }
            b.domain(s.domain())
                    .reorderWindow(s.reorderWindow())
                    .knownDomains(policies.domains()::contains)
                    .onBadLine(bad -> {
                        first.bad(bad);
                        if (s.strict()) {
                            throw new Stop(bad);
                        }
                    });
            long lines;
            try (LogReader log = b.open();
                    Progress progress = s.progress() ? Progress.start(err, log.size()) : null) {
                if (parts.size() == 1) {
                    try (ReadAhead ahead = new ReadAhead(log, progress)) {
                        for (TimedRequest r; (r = ahead.next()) != null; ) {
                            first.replay(r);
                        }
                    }
                } else {
                    Deciders.run(log, progress, partitions, parts);
                }
                lines = log.linesRead();
            }
            if (neededLimits) {
                findNeededLimits(parts);
            }
            done = true;
            return new Replayed(policies, parts, lines, partitions.description());
        } finally {
            if (!done) {
                close(parts, err);
            }
        }
    }

    /**
     * Whether the output shows the limit each refused key needed: the summary and the report do, {@code --csv} alone
     * does not (nor are its requests kept, without a sweep).
     */
    private static boolean showsNeededLimits(Settings s) {
        return !s.csv() || s.report() != null;
    }

    /** Each part's needed limits, the parts on threads of their own when there are several. */
    private static void findNeededLimits(List<Replayer> parts) throws IOException {
        if (parts.size() == 1) {
            parts.get(0).findNeededLimits();
            return;
        }
        List<java.util.concurrent.CompletableFuture<Void>> running = new ArrayList<>();
        for (Replayer p : parts) {
            running.add(java.util.concurrent.CompletableFuture.runAsync(
                    () -> {
                        try {
                            p.findNeededLimits();
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    },
                    Replay::daemon));
        }
        joinAll(running);
    }

    /** Waits for every task; throws what the first to fail threw, an {@link IOException} unwrapped. */
    static void joinAll(List<java.util.concurrent.CompletableFuture<Void>> running) throws IOException {
        try {
            for (var f : running) {
                f.join();
            }
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof java.io.UncheckedIOException io) {
                throw io.getCause();
            }
            throw e;
        }
    }

    /** Runs {@code task} on a daemon thread of its own. */
    static void daemon(Runnable task) {
        Thread t = new Thread(task, "sluice-replay-worker");
        t.setDaemon(true);
        t.start();
    }

    private static void close(List<Replayer> parts, PrintStream err) {
        for (Replayer p : parts) {
            try {
                p.close();
            } catch (IOException e) {
                err.println("replay: cannot delete a temporary file: " + e.getMessage());
            }
        }
    }
}
