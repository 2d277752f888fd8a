package dev.sluice.server;

import dev.sluice.assembly.AssembledStore;
import dev.sluice.assembly.StoreAssembly;
import dev.sluice.assembly.StoreMode;
import dev.sluice.assembly.StoreModeException;
import dev.sluice.assembly.StoreUriException;
import java.nio.file.Path;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The store of {@code --store} in the mode of {@code --sync-interval} or {@code --lease-interval}, opened by the
 * {@link StoreAssembly} every front door uses; this class only turns the options into it and its errors into the
 * options' words.
 */
final class Stores {

    private Stores() {}

    /**
     * How the service shares its limits on a shared store.
     *
     * @param interval the flush interval of synchronized mode, the round's of leased mode; null in exact mode
     */
    record Sharing(StoreMode mode, @Nullable Duration interval) {
        static final Sharing EXACT = new Sharing(StoreMode.EXACT, null);

        /**
         * The sharing that {@code --sync-interval} and {@code --lease-interval} ask for (each null when not given):
         * exact mode when neither is.
         *
         * @throws UsageException if both are given
         */
        static Sharing of(@Nullable Duration syncInterval, @Nullable Duration leaseInterval) {
            if (syncInterval != null && leaseInterval != null) {
                throw new UsageException("serve: give --sync-interval (synchronized mode) or --lease-interval (leased"
                        + " mode), not both");
            }
            return syncInterval != null
                    ? new Sharing(StoreMode.SYNCHRONIZED, syncInterval)
                    : leaseInterval != null ? new Sharing(StoreMode.LEASED, leaseInterval) : EXACT;
        }
    }

    /** The option that asks for {@code mode}. */
    static String option(StoreMode mode) {
        return switch (mode) {
            case EXACT -> "--store";
            case SYNCHRONIZED -> "--sync-interval";
            case LEASED -> "--lease-interval";
        };
    }

    /** Opens the store of {@code uri} with the password in it, if any. */
    static AssembledStore open(String uri, Sharing sharing, Duration timeout) {
        return open(uri, sharing, timeout, Integer.MAX_VALUE, null, null);
    }

    /** Opens the store of {@code uri} with the password in it, if any, and the in-memory store's bound on keys. */
    static AssembledStore open(String uri, Sharing sharing, Duration timeout, int memoryMaxKeys) {
        return open(uri, sharing, timeout, memoryMaxKeys, null, null);
    }

    /**
     * Opens the store of {@code uri}, with the in-memory store's bound on keys per limit ({@code --memory-max-keys}) and
     * a password given apart ({@code SLUICE_STORE_PASSWORD}) or in a file
     * ({@code --store-password-file}) if not null.
     *
     * @throws UsageException if the URI names no store this service knows, or is malformed, or names the in-memory
     *                        store with a sharing other than exact; never with the password in its message
     */
    static AssembledStore open(
            String uri,
            Sharing sharing,
            Duration timeout,
            int memoryMaxKeys,
            @Nullable String password,
            @Nullable Path passwordFile) {
        StoreAssembly.Builder b = StoreAssembly.builder()
                .mode(sharing.mode())
                .timeout(timeout)
                .memoryMaxKeys(memoryMaxKeys)
                .password(password);
        if (sharing.interval() != null) {
            b.interval(sharing.interval());
        }
        try {
            return b.passwordFile(passwordFile).build().open(uri);
        } catch (StoreUriException e) {
            throw new UsageException("serve: --store '" + e.redactedUri() + "' is not valid: " + e.reason());
        } catch (StoreModeException e) {
            throw new UsageException("serve: " + option(e.mode()) + " needs a shared store, not " + e.store());
        } catch (java.io.UncheckedIOException e) {
            throw new UsageException("serve: --store-password-file: " + e.getMessage());
        }
    }
}
