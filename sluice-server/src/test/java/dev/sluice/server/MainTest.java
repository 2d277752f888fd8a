package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** What {@code Main} sets before a command runs, and what it answers without one. */
class MainTest {

    @Test
    void grpcNettysLeakDetectorIsOffUnlessTheCommandLineGivesItsLevel() {
        Properties none = new Properties();
        Main.grpcLeakDetectionOffUnlessGiven(none);
        assertEquals("disabled", none.getProperty("io.grpc.netty.shaded.io.netty.leakDetection.level"));
        assertEquals(1, none.size(), "the HTTP side's Netty keeps its default: " + none);

        Properties given = new Properties();
        given.setProperty("io.grpc.netty.shaded.io.netty.leakDetection.level", "paranoid");
        Main.grpcLeakDetectionOffUnlessGiven(given);
        assertEquals("paranoid", given.getProperty("io.grpc.netty.shaded.io.netty.leakDetection.level"));
    }

    @Test
    void versionPrintsTheBuildsVersionAndJava() {
        for (String asked : List.of("--version", "version")) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int status = Main.run(
                    List.of(asked),
                    new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8));
            String printed = out.toString(StandardCharsets.UTF_8);
            assertEquals(0, status, asked + ": " + err);
            // from the build's classes, not its jar: the manifest that names the version is the jar's
            assertEquals(
                    "sluice-server unknown (Java " + System.getProperty("java.version") + ")" + System.lineSeparator(),
                    printed,
                    asked);
            assertEquals("", err.toString(StandardCharsets.UTF_8), asked);
        }
        assertTrue(Main.USAGE.contains("--version"), Main.USAGE);
    }
}
