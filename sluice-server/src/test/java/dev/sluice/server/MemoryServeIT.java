package dev.sluice.server;

import java.util.List;

/** envoyproxy/ratelimit's scenarios on the in-memory store. */
class MemoryServeIT extends ServeScenarios {
    @Override
    List<String> storeArgs() {
        return List.of();
    }
}
