package dev.sluice.server;

import dev.sluice.assembly.AssembledStore;
import dev.sluice.assembly.StoreAssembly;
import dev.sluice.assembly.StoreMode;
import dev.sluice.assembly.StoreModeException;
import dev.sluice.assembly.StoreUriException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
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
     * @param interval the interval of synchronized and leased mode's rounds; null in exact mode, or for the
     *                 assembly's default
     * @param askedBy  the options that asked for the mode, as a message names them
     */
    record Sharing(StoreMode mode, @Nullable Duration interval, String askedBy) {
        static final Sharing EXACT = new Sharing(StoreMode.EXACT, null);

        /** {@code mode} as its deprecated option ({@code --sync-interval}, {@code --lease-interval}) asks for it. */
        Sharing(StoreMode mode, @Nullable Duration interval) {
            this(mode, interval, deprecatedOption(mode));
        }

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

        /**
         * The sharing of {@code --store-mode} and {@code --store-interval}, or of their deprecated forms
         * {@code --sync-interval D} ({@code --store-mode synchronized --store-interval D}) and
         * {@code --lease-interval D} ({@code --store-mode leased --store-interval D}), which print a warning on
         * {@code err}.
         *
         * @throws UsageException if the mode is unknown, the interval is given in exact mode, or both forms are given
         */
        static Sharing parse(Options o, PrintStream err) {
            String mode = o.string("store-mode");
            Duration interval = o.duration("store-interval");
            Duration sync = o.duration("sync-interval");
            Duration lease = o.duration("lease-interval");
            if (sync != null || lease != null) {
                String old = sync != null ? "--sync-interval" : "--lease-interval";
                if (mode != null || interval != null) {
                    throw new UsageException(
                            "serve: give " + old + " (deprecated) or --store-mode and" + " --store-interval, not both");
                }
                Sharing s = of(sync, lease);
                err.println("sluice: warning: " + old + " is deprecated and goes in the next release: use --store-mode "
                        + s.mode().name().toLowerCase(Locale.ROOT) + " --store-interval "
                        + o.string(sync != null ? "sync-interval" : "lease-interval"));
                return s;
            }
            StoreMode m = mode == null ? StoreMode.EXACT : parseMode(o, mode);
            if (m == StoreMode.EXACT) {
                if (interval != null) {
                    throw new UsageException(
                            "serve: --store-interval applies to --store-mode synchronized or leased," + " not exact");
                }
                return EXACT;
            }
            return new Sharing(m, interval, "--store-mode " + mode);
        }

        private static StoreMode parseMode(Options o, String mode) {
            for (StoreMode m : StoreMode.values()) {
                if (m.name().toLowerCase(Locale.ROOT).equals(mode)) {
                    return m;
                }
            }
            throw o.bad("store-mode", mode, "exact, synchronized or leased");
        }
    }

    /** The deprecated option that asks for {@code mode}. */
    static String deprecatedOption(StoreMode mode) {
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
        return open(uri, sharing, timeout, memoryMaxKeys, 0, password, passwordFile);
    }

    /**
     * {@link #open(String, Sharing, Duration, int, String, Path)} with an over-limit cache of {@code overLimitCache}
     * entries ({@code --over-limit-cache}; 0 for none), which only exact mode on a shared store keeps.
     */
    static AssembledStore open(
            String uri,
            Sharing sharing,
            Duration timeout,
            int memoryMaxKeys,
            int overLimitCache,
            @Nullable String password,
            @Nullable Path passwordFile) {
        StoreAssembly.Builder b = StoreAssembly.builder()
                .mode(sharing.mode())
                .timeout(timeout)
                .memoryMaxKeys(memoryMaxKeys)
                .overLimitCache(overLimitCache)
                .password(password);
        if (sharing.interval() != null) {
            b.interval(sharing.interval());
        }
        try {
            return b.passwordFile(passwordFile).build().open(uri);
        } catch (StoreUriException e) {
            throw new UsageException("serve: --store '" + e.redactedUri() + "' is not valid: " + e.reason());
        } catch (StoreModeException e) {
            throw new UsageException("serve: " + sharing.askedBy() + " needs a shared store, not " + e.store());
        } catch (java.io.UncheckedIOException e) {
            throw new UsageException("serve: --store-password-file: " + e.getMessage());
        }
    }
}
