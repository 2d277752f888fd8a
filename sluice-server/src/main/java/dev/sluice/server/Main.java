package dev.sluice.server;

import dev.sluice.server.replay.Replay;
import dev.sluice.server.simulate.SimulateCommand;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;

/**
 * {@code java -jar sluice-server.jar <command> [options]}: {@code serve}, {@code check-config}, {@code check},
 * {@code load}, {@code replay}, {@code simulate}; {@code --version} prints the build's version.
 *
 * <p>Exit status: 0 done; 1 the command ran and found a problem (a configuration error, an {@code OVER_LIMIT}
 * answer); 2 a bad command line; 3 the service could not be started or reached.
 */
public final class Main {
    static final String USAGE =
            """
            Usage: java -jar sluice-server.jar <command> [options]

            Commands:
              serve          run the rate limit service (Envoy's gRPC ShouldRateLimit and HTTP /json)
              check-config   validate configuration files, printing every error as file:line:column: message
              check          ask a running service about one request, from a shell
              load           a benchmarking aid: fire ShouldRateLimit at a service, report checks/s and latency
              replay         run a request log through a configuration: who would be denied, what limit would do
              simulate       many instances on a virtual clock in exact, synchronized or leased mode: what an
                             interval and an instance count do to a limit's accuracy, for a traffic

            'java -jar sluice-server.jar <command> --help' describes a command's options;
            'java -jar sluice-server.jar --version' prints the version.
            """;

    /**
     * The level of Netty's leak detector in grpc-java's shaded copy of Netty, which the gRPC side runs on; off unless
     * given on the command line. The detector samples one buffer in 128 and records a stack trace, on the event loop,
     * for it and for every buffer sliced from it: a cost on every gRPC call's path for a check of grpc-java's own
     * buffers, none of which this code handles (docs/benchmarks.md, "Netty's leak detector off on the gRPC side").
     * The HTTP side's Netty, whose buffers this code does handle, keeps Netty's default.
     */
    static final String GRPC_LEAK_DETECTION = "io.grpc.netty.shaded.io.netty.leakDetection.level";

    private Main() {}

    /**
     * The version of this build, from the manifest of the jar it runs from ({@code Implementation-Version}); {@code
     * unknown} when its classes do not come from that jar (a build's classes directory).
     */
    static String version() {
        String v = Main.class.getPackage().getImplementationVersion();
        return v == null || v.isBlank() ? "unknown" : v;
    }

    /**
     * Sets {@link #GRPC_LEAK_DETECTION} in {@code properties} to {@code disabled} unless they have it already (given on
     * the command line): before any of gRPC's Netty classes is loaded, which read it once.
     */
    static void grpcLeakDetectionOffUnlessGiven(Properties properties) {
        properties.putIfAbsent(GRPC_LEAK_DETECTION, "disabled");
    }

    /** Runs a command; exits with its status unless it serves until stopped. */
    public static void main(String[] args) {
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tFT%1$tT.%1$tL %4$s %3$s: %5$s%6$s%n");
        grpcLeakDetectionOffUnlessGiven(System.getProperties());
        int status = run(Arrays.asList(args), System.out, System.err);
        System.exit(status);
    }

    static int run(List<String> args, PrintStream out, PrintStream err) {
        if (args.isEmpty()
                || args.get(0).equals("--help")
                || args.get(0).equals("-h")
                || args.get(0).equals("help")) {
            (args.isEmpty() ? err : out).print(USAGE);
            return args.isEmpty() ? 2 : 0;
        }
        if (args.size() == 1 && (args.get(0).equals("--version") || args.get(0).equals("version"))) {
            out.println("sluice-server " + version() + " (Java " + System.getProperty("java.version") + ")");
            return 0;
        }
        String command = args.get(0);
        List<String> rest = args.subList(1, args.size());
        try {
            return switch (command) {
                case "serve" -> ServeCommand.run(rest, out, err);
                case "check-config" -> CheckConfigCommand.run(rest, out, err);
                case "check" -> CheckCommand.run(rest, out, err);
                case "load" -> LoadCommand.run(rest, out, err);
                case "replay" -> ReplayCommand.run(
                        rest, System.in, out, err, err == System.err && Replay.stderrIsTerminal());
                case "simulate" -> SimulateCommand.run(rest, out, err);
                default -> throw new UsageException("unknown command '" + command + "'\n\n" + USAGE);
            };
        } catch (UsageException e) {
            err.println("sluice-server " + e.getMessage());
            return 2;
        }
    }
}
