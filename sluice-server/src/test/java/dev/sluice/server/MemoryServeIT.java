package dev.sluice.server;

import dev.sluice.testkit.Await;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * envoyproxy/ratelimit's scenarios on the in-memory store, with {@code --over-limit-cache}, which has no effect on it
 * and says so at start.
 */
class MemoryServeIT extends ServeScenarios {
    @Override
    List<String> storeArgs() {
        return List.of("--over-limit-cache", "100");
    }

    @Test
    void theOverLimitCacheOnTheInMemoryStoreIsSaidToHaveNoEffect() {
        String line = "sluice: --over-limit-cache has no effect on the in-memory store, which makes no store calls";
        Await.until("the line " + line, Await.GENEROUS, () -> server.stderr().contains(line));
    }
}
