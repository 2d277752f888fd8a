package dev.sluice.server;

import dev.sluice.Algorithm;
import dev.sluice.lease.LeasedStore;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyError;
import dev.sluice.policy.PolicyException;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.sync.SynchronizedStore;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@code check-config [--mode M] PATH…}: loads each path as {@code serve --config} would, prints every error as
 * {@code file:line:column: message}, and exits 1 if there was any (a directory with no domain is one); otherwise prints
 * a summary and exits 0. With {@code --mode synchronized} or {@code --mode leased} it also builds the limiters on a
 * store of that mode (in memory, nothing written anywhere), so that a limit the mode cannot keep is an error here, as
 * it would stop {@code serve --store-mode synchronized} or {@code serve --store-mode leased}.
 */
final class CheckConfigCommand {
    static final String HELP =
            """
            Usage: java -jar sluice-server.jar check-config [--mode M] PATH...

            Validates rate limit configuration files (a YAML file, or a directory of them, as serve --config takes).
            Prints every error as file:line:column: field: message and exits 1 if there is any; otherwise prints
            what each path defines and exits 0. A directory with no policy file (*.yaml, *.yml) is an error.

            Options:
              --mode M    exact (default), synchronized or leased: the mode the service will run the files in;
                          synchronized mode keeps %s limits only, leased mode
                          %s, and any other limit is reported at its rule
            """;

    private CheckConfigCommand() {}

    static int run(List<String> args, PrintStream out, PrintStream err) {
        Options o = Options.parse("check-config", args, Set.of("mode"), Set.of("help"));
        if (o.flag("help")) {
            out.print(HELP.formatted(kept("synchronized"), kept("leased")));
            return 0;
        }
        String mode = o.string("mode", "exact");
        if (!Set.of("exact", "synchronized", "leased").contains(mode)) {
            throw o.bad("mode", mode, "exact, synchronized or leased");
        }
        if (o.operands().isEmpty()) {
            throw new UsageException("check-config: give at least one file or directory");
        }
        int errors = 0;
        for (String arg : o.operands()) {
            Path path = Path.of(arg);
            if (!Files.exists(path)) {
                err.println(arg + ":0:0: no such file or directory");
                errors++;
                continue;
            }
            try {
                Policies p = Policies.load(path);
                if (p.domains().isEmpty()) {
                    err.println(arg + ":0:0: no domain: the directory holds no policy file (*.yaml, *.yml), so "
                            + "nothing would be limited");
                    errors++;
                    continue;
                }
                keptBy(mode, p);
                int rules = 0;
                for (String d : p.domains()) {
                    rules += p.rules(d).size();
                }
                out.println(arg + ": OK, " + p.domains().size() + " domain(s) " + p.domains() + ", " + rules
                        + " rule(s) with limits" + (mode.equals("exact") ? "" : ", all kept in " + mode + " mode"));
            } catch (PolicyException e) {
                for (PolicyError error : e.errors()) {
                    err.println(error);
                }
                errors += e.errors().size();
            } catch (RuntimeException | StackOverflowError e) {
                // a defect of the loader, not of the file: reported as one error all the same, without a stack trace
                err.println(arg + ":0:0: cannot be loaded: " + e);
                errors++;
            }
        }
        if (errors > 0) {
            err.println(errors + " error(s)");
            return 1;
        }
        return 0;
    }

    /**
     * Builds the limiters of {@code policies} on a store of {@code mode} over an in-memory counter store, and closes
     * them: nothing for exact mode, where every store keeps every algorithm.
     *
     * @throws PolicyException with one error per limit the mode cannot keep, at its rule
     */
    private static void keptBy(String mode, Policies policies) {
        if (mode.equals("synchronized")) {
            try (SynchronizedStore store = synchronizedStore()) {
                PolicyLimiter.builder(policies).store(store).build().close(); // built: every limit is kept
            }
        } else if (mode.equals("leased")) {
            try (LeasedStore store = leasedStore()) {
                PolicyLimiter.builder(policies).store(store).build().close(); // built: every limit is kept
            }
        }
    }

    private static SynchronizedStore synchronizedStore() {
        return SynchronizedStore.builder(InMemoryCounterStore.create())
                .manualRounds()
                .build();
    }

    private static LeasedStore leasedStore() {
        return LeasedStore.builder(InMemoryCounterStore.create()).manualRounds().build();
    }

    /** The algorithms the store of {@code mode} keeps, as a configuration names them. */
    private static String kept(String mode) {
        Set<Algorithm> algorithms;
        if (mode.equals("synchronized")) {
            try (SynchronizedStore store = synchronizedStore()) {
                algorithms = store.algorithms();
            }
        } else {
            try (LeasedStore store = leasedStore()) {
                algorithms = store.algorithms();
            }
        }
        return algorithms.stream().map(a -> a.name().toLowerCase(Locale.ROOT)).collect(Collectors.joining(", "));
    }
}
