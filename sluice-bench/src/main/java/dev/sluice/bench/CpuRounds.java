package dev.sluice.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * What the thread-CPU-time harnesses ({@link CpuPerDecision}, {@link PolicyCost}) share: timing rounds of work by
 * the CPU time of the thread that runs them, and running each subject in a JVM of its own.
 */
final class CpuRounds {

    private CpuRounds() {}

    /**
     * Runs {@code round} {@code warm} times untimed, then {@code rounds} times timed by the thread's CPU time, and
     * answers the CPU nanoseconds per operation of each timed round, sorted: the first is the best, the middle one the
     * median.
     */
    static double[] nanosPerOperation(Runnable round, int warm, int rounds, int operationsPerRound) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double[] ns = new double[rounds];
        for (int r = -warm; r < rounds; r++) {
            long start = threads.getCurrentThreadCpuTime();
            round.run();
            long cpu = threads.getCurrentThreadCpuTime() - start;
            if (r >= 0) {
                ns[r] = cpu / (double) operationsPerRound;
            }
        }
        Arrays.sort(ns);
        return ns;
    }

    /**
     * Runs {@code main} with {@code args} in a new JVM on this one's class path, with a 1 GiB heap touched up front,
     * handing each line it prints to {@code lines}; throws if it exits with an error.
     */
    static void inNewJvm(Class<?> main, List<String> args, Consumer<String> lines)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xms1g",
                "-Xmx1g",
                "-XX:+AlwaysPreTouch",
                "-cp",
                System.getProperty("java.class.path"),
                main.getName()));
        command.addAll(args);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                lines.accept(line);
            }
        }
        if (p.waitFor() != 0) {
            throw new IllegalStateException(main.getSimpleName() + " " + args + " failed: exit " + p.exitValue());
        }
    }
}
