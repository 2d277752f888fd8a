package dev.sluice.server;

import dev.sluice.memory.InMemoryStore;
import dev.sluice.spi.RateLimitStore;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** The store a {@code --store} URI names, opened, with what must be closed after it. */
final class Stores {
    private Stores() {}

    /** An open store and how to close it and its clients. */
    record Opened(RateLimitStore store, String description, AutoCloseable closer) {
        void close() {
            try {
                closer.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing " + description + " failed: " + e, e);
            }
        }
    }

    /**
     * Opens the store of {@code uri}.
     *
     * @throws UsageException if the URI names no store this service knows
     */
    static Opened open(String uri, @Nullable Duration syncInterval, Duration timeout) {
        if (uri.equals("memory:") || uri.equals("memory")) {
            if (syncInterval != null) {
                throw new UsageException("serve: --sync-interval needs a shared store, not memory:");
            }
            return new Opened(InMemoryStore.create(), "memory:", () -> {});
        }
        throw new UsageException("serve: --store '" + uri + "' is not valid: expected memory:, redis://…,"
                + " redis-cluster://…, postgresql://… or mongodb://…/database");
    }
}
