package dev.sluice.server.replay;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * Runs one {@code replay --threads 1 --csv} in this JVM and prints the CPU time of the thread that decides the log
 * (which also loads the configuration, finds the needed limits and prints), its wall clock and the collections: the
 * deciding thread's share of a replay, which a busy machine disturbs far less than the wall clock of the whole run.
 * Not a test.
 *
 * <p>{@code java -Xmx256m -cp sluice-server/target/test-classes:sluice-server/target/sluice-server.jar
 * dev.sluice.server.replay.ReplayCpu CONFIG LOG CSV-OUT}
 */
public final class ReplayCpu {
    private ReplayCpu() {}

    public static void main(String[] args) throws IOException {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long cpu = threads.getCurrentThreadCpuTime();
        long wall = System.nanoTime();
        Replay.Settings s = new Replay.Settings(
                Path.of(args[0]), args[1], null, false, Duration.ofSeconds(5), false, true, null, null, 10, false, 1);
        int status;
        try (PrintStream out = new PrintStream(new FileOutputStream(args[2]), false, StandardCharsets.UTF_8)) {
            status = Replay.run(s, System.in, out, System.err);
        }
        StringBuilder gc = new StringBuilder();
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            gc.append(", ").append(b.getName()).append(' ').append(b.getCollectionCount());
        }
        System.out.printf(
                Locale.ROOT,
                "status %d, deciding thread %.2f s CPU, %.2f s wall%s%n",
                status,
                (threads.getCurrentThreadCpuTime() - cpu) / 1e9,
                (System.nanoTime() - wall) / 1e9,
                gc);
    }
}
