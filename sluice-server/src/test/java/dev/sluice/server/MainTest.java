package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Properties;
import org.junit.jupiter.api.Test;

/** What {@code Main} sets before a command runs. */
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
}
