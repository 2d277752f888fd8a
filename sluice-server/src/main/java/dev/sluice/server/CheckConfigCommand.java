package dev.sluice.server;

import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyError;
import dev.sluice.policy.PolicyException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * {@code check-config PATH…}: loads each path as {@code serve --config} would, prints every error as
 * {@code file:line:column: message}, and exits 1 if there was any; otherwise prints a summary and exits 0.
 */
final class CheckConfigCommand {
    static final String HELP =
            """
            Usage: java -jar sluice-server.jar check-config PATH...

            Validates rate limit configuration files (a YAML file, or a directory of them, as serve --config takes).
            Prints every error as file:line:column: field: message and exits 1 if there is any; otherwise prints
            what each path defines and exits 0.
            """;

    private CheckConfigCommand() {}

    static int run(List<String> args, PrintStream out, PrintStream err) {
        Options o = Options.parse("check-config", args, Set.of(), Set.of("help"));
        if (o.flag("help")) {
            out.print(HELP);
            return 0;
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
                int rules = 0;
                for (String d : p.domains()) {
                    rules += p.rules(d).size();
                }
                out.println(arg + ": OK, " + p.domains().size() + " domain(s) " + p.domains() + ", " + rules
                        + " rule(s) with limits");
            } catch (PolicyException e) {
                for (PolicyError error : e.errors()) {
                    err.println(error);
                }
                errors += e.errors().size();
            }
        }
        if (errors > 0) {
            err.println(errors + " error(s)");
            return 1;
        }
        return 0;
    }
}
