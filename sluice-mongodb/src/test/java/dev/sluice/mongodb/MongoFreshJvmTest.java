package dev.sluice.mongodb;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.testkit.Await;
import dev.sluice.testkit.FreshJvm;
import dev.sluice.testkit.server.MongoServers;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Service instances starting as a deploy starts them: a new JVM builds the store as its class comment shows and at
 * once makes six calls together on a new key limited to 5 an hour. The store's build waits for the server, so no
 * decision is the failure policy's answer to a connection still being made: exactly five pass, in every run.
 */
class MongoFreshJvmTest {

    private static final int RUNS = 5;
    /** As in the class comment; not the other tests' database, where they check which indexes exist. */
    private static final String DATABASE = "app";

    @Test
    void sixCallsRightAfterBuildInANewJvmAdmitExactlyFiveAndNoneFails() {
        String connectionString = MongoServers.connectionString();
        for (int run = 1; run <= RUNS; run++) {
            String key = "fresh-jvm:" + UUID.randomUUID();
            List<String> out = FreshJvm.start(SixCalls.class, connectionString, DATABASE, key)
                    .await(Await.GENEROUS);
            assertEquals(6, out.size(), "run " + run + ": one line per call: " + out);
            assertEquals(0, out.stream().filter(l -> l.contains("failed=true")).count(), "run " + run + ": " + out);
            assertEquals(
                    5, out.stream().filter(l -> l.startsWith("allowed=true")).count(), "run " + run + ": " + out);
        }
    }
}
