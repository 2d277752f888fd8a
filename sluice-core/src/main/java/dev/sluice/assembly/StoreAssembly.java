package dev.sluice.assembly;

import dev.sluice.lease.LeasedStore;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterStoreBuilder;
import dev.sluice.spi.Durations;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.SharedStoreBuilder;
import dev.sluice.spi.StoreConnection;
import dev.sluice.spi.StoreProvider;
import dev.sluice.sync.SynchronizedStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Builds the store of a mode: from a store URI ({@link #open(String)}, the rate-limit service's {@code --store}), or
 * step by step on a connection an application gives ({@link #exactStore}, {@link #counterStore},
 * {@link #onCounters}, as the Spring Boot starter does with its beans). Every front door assembles its store here, so
 * a mode means the same everywhere. Immutable and thread-safe.
 *
 * <pre>{@code
 * try (AssembledStore s = StoreAssembly.builder()
 *         .mode(StoreMode.LEASED)
 *         .interval(Duration.ofMillis(100))
 *         .timeout(Duration.ofMillis(15))
 *         .passwordFile(Path.of("/etc/sluice/store-password"))   // as a Kubernetes secret is mounted
 *         .build()
 *         .open("redis://redis.internal:6379")) {
 *     PolicyLimiter limiter = PolicyLimiter.builder(policies).store(s.store()).build();
 * }
 * }</pre>
 *
 * <ul>
 *   <li><b>URIs</b>: {@code memory:} (this process only), and whatever the store modules on the class or module path
 *       provide ({@link StoreProvider}): {@code redis://}, {@code rediss://}, {@code redis-cluster://} (sluice-redis),
 *       {@code postgresql://} (sluice-postgres, with HikariCP), {@code mongodb://}, {@code mongodb+srv://}
 *       (sluice-mongodb).
 *   <li><b>Modes</b> ({@link StoreMode}): every shared store serves all three; the in-memory store, which has no
 *       counter store, serves exact mode only ({@link StoreModeException}).
 *   <li><b>Timeout</b>: in exact mode it bounds every call (the store's default, 250 ms, when not set); in leased mode
 *       the claims a request makes on its own thread (the same default); synchronized mode's calls run in the
 *       background and keep the counter store's own default (1 s).
 *   <li><b>Over-limit cache</b> ({@link Builder#overLimitCache(int)}): exact mode on a shared store only.
 *   <li><b>Interval</b>: synchronized mode's flush interval, leased mode's round interval; default
 *       {@value #DEFAULT_INTERVAL_MILLIS} ms.
 *   <li><b>Password</b>: in the URI, or apart from it ({@link Builder#password}, {@link Builder#passwordFile}) so that
 *       it need not be on a command line; never both. {@link #redact(String)} is what every message and description
 *       prints of a URI.
 * </ul>
 */
public final class StoreAssembly {

    /** The default {@link Builder#interval(Duration)}, in milliseconds. */
    public static final long DEFAULT_INTERVAL_MILLIS = 100;

    private static final String MEMORY = "memory:";

    private final StoreMode mode;
    private final Duration interval;
    private final @Nullable Duration timeout;
    private final @Nullable String password;
    private final @Nullable Path passwordFile;
    private final int memoryMaxKeys;
    private final int overLimitCache;

    private StoreAssembly(Builder b) {
        this.mode = b.mode;
        this.interval = b.interval;
        this.timeout = b.timeout;
        this.password = b.password;
        this.passwordFile = b.passwordFile;
        this.memoryMaxKeys = b.memoryMaxKeys;
        this.overLimitCache = b.overLimitCache;
    }

    /** A builder of exact mode, the default interval, the stores' default timeouts and no password apart. */
    public static Builder builder() {
        return new Builder();
    }

    /** The mode. */
    public StoreMode mode() {
        return mode;
    }

    /** The interval of synchronized and leased mode. */
    public Duration interval() {
        return interval;
    }

    /**
     * Why an over-limit cache of {@code entries} would have no effect on a store in {@code mode}, or null when it has
     * one or none is asked for: only exact mode on a shared store keeps one ({@link Builder#overLimitCache(int)}).
     * Each front door says so in its own words (the service on standard error, the starter in its log).
     *
     * @param inMemory whether the store is the in-memory one
     */
    public static @Nullable String unusedOverLimitCache(StoreMode mode, boolean inMemory, int entries) {
        if (entries == 0) {
            return null;
        }
        if (mode != StoreMode.EXACT) {
            return "in " + mode.name().toLowerCase(Locale.ROOT) + " mode, which decides locally already";
        }
        return inMemory ? "on the in-memory store, which makes no store calls" : null;
    }

    /**
     * Opens the store {@code uri} names in this assembly's mode.
     *
     * @throws StoreUriException   if no store module on the path opens the URI's scheme, the URI is malformed, or a
     *                             password is given both in it and apart
     * @throws StoreModeException  if the store cannot serve the mode
     * @throws UncheckedIOException if the password file cannot be read
     */
    public AssembledStore open(String uri) {
        Objects.requireNonNull(uri, "uri must not be null");
        String shown = redact(uri);
        if (scheme(uri).equals("memory")) {
            requireNoPassword(shown);
            return new AssembledStore(memoryStore(), MEMORY, false, () -> {});
        }
        StoreConnection connection = connect(uri);
        try {
            return assemble(connection, shown);
        } catch (RuntimeException e) {
            try {
                connection.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * A connection on the shared store {@code uri} names, with the password given apart put in it; closing it closes
     * the client it opened. For building the mode's store step by step ({@link #exactStore}, {@link #counterStore}).
     *
     * @throws StoreUriException    if no store module on the path opens the URI's scheme (or it is {@code memory:}),
     *                              the URI is malformed, or a password is given both in it and apart
     * @throws UncheckedIOException if the password file cannot be read
     */
    public StoreConnection connect(String uri) {
        Objects.requireNonNull(uri, "uri must not be null");
        String shown = redact(uri);
        StoreProvider provider = provider(scheme(uri));
        if (provider == null) {
            throw new StoreUriException(
                    shown,
                    "expected memory:, redis://…, redis-cluster://…, postgresql://user:password@host:port/database"
                            + " or mongodb://host:port/database (the schemes of the store modules on the class path)");
        }
        String full = withPassword(uri, shown);
        try {
            return provider.connect(full);
        } catch (StoreUriException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new StoreUriException(shown, scrub(String.valueOf(e.getMessage()), full));
        }
    }

    private static String scheme(String uri) {
        return uri.contains(":") ? uri.substring(0, uri.indexOf(':')).toLowerCase(Locale.ROOT) : uri;
    }

    private void requireNoPassword(String shown) {
        if (password != null || passwordFile != null) {
            throw new StoreUriException(shown, "the in-memory store takes no password");
        }
    }

    private AssembledStore assemble(StoreConnection connection, String shown) {
        requireMode(connection.counterStoreBuilder() != null, shown);
        switch (mode) {
            case EXACT -> {
                RateLimitStore store = exactStore(connection);
                return new AssembledStore(store, shown, true, inOrder(store, connection));
            }
            case SYNCHRONIZED -> {
                CounterStore counters = counterStore(connection);
                SynchronizedStore store = synchronizedStore(counters);
                String how = " (synchronized every " + Durations.format(interval) + ")";
                return new AssembledStore(store, shown + how, false, inOrder(store, counters, connection));
            }
            case LEASED -> {
                CounterStore counters = counterStore(connection);
                LeasedStore store = leasedStore(counters);
                String how = " (leased, a round every " + Durations.format(interval) + ")";
                return new AssembledStore(store, shown + how, true, inOrder(store, counters, connection));
            }
            default -> throw new IllegalStateException("unknown mode " + mode);
        }
    }

    /** The store × mode rule: a store without a counter store (the in-memory one) serves exact mode only. */
    private void requireMode(boolean shared, String store) {
        if (!shared && mode != StoreMode.EXACT) {
            throw new StoreModeException(mode, store);
        }
    }

    /**
     * The exact-mode store on {@code connection}, bounded by the timeout, with the over-limit cache asked for.
     *
     * @throws StoreModeException if this assembly's mode is not exact: the mode's store is built on a counter store
     */
    public RateLimitStore exactStore(StoreConnection connection) {
        if (mode != StoreMode.EXACT) {
            throw new StoreModeException(mode, "an exact-mode store");
        }
        return connection.exactStore(timeout, overLimitCache);
    }

    /**
     * The in-memory store.
     *
     * @throws StoreModeException if the mode is not exact: the in-memory store has no counter store to share
     */
    public RateLimitStore memoryStore() {
        requireMode(false, MEMORY);
        return InMemoryStore.builder().maximumKeys(memoryMaxKeys).build();
    }

    /**
     * The counter store of synchronized or leased mode on {@code connection}: in leased mode bounded by the timeout (a
     * claim runs on a request's thread), in synchronized mode by the counter store's own default.
     *
     * @throws StoreModeException if the store has no counter store
     */
    public CounterStore counterStore(StoreConnection connection) {
        CounterStoreBuilder<?> builder = connection.counterStoreBuilder();
        if (builder == null) {
            throw new StoreModeException(mode, MEMORY);
        }
        if (mode == StoreMode.LEASED) {
            builder.timeout(timeout != null ? timeout : SharedStoreBuilder.DEFAULT_TIMEOUT);
        }
        return builder.build();
    }

    /** Synchronized mode's store on {@code counters}, flushing every interval. */
    public SynchronizedStore synchronizedStore(CounterStore counters) {
        return SynchronizedStore.builder(counters).interval(interval).build();
    }

    /** Leased mode's store on {@code counters}, a round every interval. */
    public LeasedStore leasedStore(CounterStore counters) {
        return LeasedStore.builder(counters).interval(interval).build();
    }

    /**
     * The store of this assembly's mode on {@code counters}: synchronized or leased.
     *
     * @throws StoreModeException in exact mode, which has no counter store
     */
    public RateLimitStore onCounters(CounterStore counters) {
        return switch (mode) {
            case SYNCHRONIZED -> synchronizedStore(counters);
            case LEASED -> leasedStore(counters);
            case EXACT -> throw new StoreModeException(mode, "a counter store");
        };
    }

    private static @Nullable StoreProvider provider(String scheme) {
        for (StoreProvider p : ServiceLoader.load(StoreProvider.class, StoreAssembly.class.getClassLoader())) {
            if (p.schemes().contains(scheme)) {
                return p;
            }
        }
        return null;
    }

    /** Closes each of {@code parts} that is closeable, in their order: a store before what it writes through. */
    private static AutoCloseable inOrder(Object... parts) {
        return () -> {
            for (Object o : parts) {
                if (o instanceof AutoCloseable c) {
                    c.close();
                }
            }
        };
    }

    /** The URI with the password given apart put in its user info, URL-encoded. */
    private String withPassword(String uri, String shown) {
        String secret = password;
        if (passwordFile != null) {
            try {
                secret = Files.readString(passwordFile, StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the store password file " + passwordFile + ": " + e, e);
            }
            if (secret.isEmpty()) {
                throw new StoreUriException(shown, "the password file " + passwordFile + " is empty");
            }
        }
        if (secret == null) {
            return uri;
        }
        int start = uri.indexOf("//");
        if (start < 0) {
            throw new StoreUriException(shown, "a password given apart needs a URI of the form scheme://host…");
        }
        int hostStart = start + 2;
        int at = userInfoEnd(uri, hostStart);
        String user = "";
        if (at >= 0) {
            String info = uri.substring(hostStart, at);
            if (info.contains(":")) {
                throw new StoreUriException(shown, "the URI carries a password and one is given apart too: give one");
            }
            user = info;
            hostStart = at + 1;
        }
        return uri.substring(0, start + 2) + user + ":" + URLEncoder.encode(secret, StandardCharsets.UTF_8) + "@"
                + uri.substring(hostStart);
    }

    /** The index of the {@code @} that ends the user info of the URI's authority from {@code from}; -1 if none. */
    private static int userInfoEnd(String uri, int from) {
        int end = uri.length();
        int q = uri.indexOf('?', from);
        if (q >= 0) {
            end = q;
        }
        int at = uri.lastIndexOf('@', end - 1);
        return at >= from ? at : -1;
    }

    private static final Pattern SECRET_PARAMETER = Pattern.compile(
            "(?i)([?&;](?:[a-z_.-]*password|pass|pwd|[a-z_.-]*secret|[a-z_.-]*token|[a-z_.-]*key)=)[^&;#]*");

    /**
     * {@code uri} as it may be printed: the password of its user info (or the whole user info when it has no
     * {@code :}, as Redis reads {@code redis://password@host}) and the values of query parameters that name a
     * password, secret, token or key replaced by {@code ***}. {@code postgresql://app:s3cret@db/limits} →
     * {@code postgresql://app:***@db/limits}.
     */
    public static String redact(String uri) {
        String s = uri;
        int start = s.indexOf("//");
        if (start >= 0) {
            int at = userInfoEnd(s, start + 2);
            if (at >= 0) {
                String info = s.substring(start + 2, at);
                int colon = info.indexOf(':');
                String shown = colon >= 0 ? info.substring(0, colon) + ":***" : "***";
                s = s.substring(0, start + 2) + shown + s.substring(at);
            }
        }
        return SECRET_PARAMETER.matcher(s).replaceAll("$1***");
    }

    /** {@code message} without any secret of {@code uri}, raw or URL-decoded: for a driver's message on a URI. */
    private static String scrub(String message, String uri) {
        String m = message.replace(uri, redact(uri));
        int start = uri.indexOf("//");
        int at = start < 0 ? -1 : userInfoEnd(uri, start + 2);
        if (at >= 0) {
            String info = uri.substring(start + 2, at);
            String secret = info.contains(":") ? info.substring(info.indexOf(':') + 1) : info;
            if (!secret.isEmpty()) {
                m = m.replace(secret, "***");
                m = m.replace(URLDecoder.decode(secret, StandardCharsets.UTF_8), "***");
            }
        }
        return m;
    }

    /** Builds a {@link StoreAssembly}. Not thread-safe; setters validate at once. */
    public static final class Builder {

        private StoreMode mode = StoreMode.EXACT;
        private Duration interval = Duration.ofMillis(DEFAULT_INTERVAL_MILLIS);
        private @Nullable Duration timeout;
        private @Nullable String password;
        private @Nullable Path passwordFile;
        private int memoryMaxKeys = Integer.MAX_VALUE;
        private int overLimitCache;

        private Builder() {}

        /**
         * The over-limit cache of an exact-mode shared store
         * ({@link dev.sluice.spi.SharedStoreBuilder#overLimitCache(int)}): up to {@code maxEntries} of the store's refusals kept in this process until their retry instant;
         * default 0, none. No effect on the in-memory store (it decides in this process already) or in synchronized and
         * leased mode (they decide from memory, and their round trips do not follow the requests).
         *
         * @throws IllegalArgumentException if negative
         */
        public Builder overLimitCache(int maxEntries) {
            if (maxEntries < 0) {
                // named as both front doors name it (--over-limit-cache, sluice.store.over-limit-cache)
                throw new IllegalArgumentException("over-limit-cache must be >= 0 entries, was " + maxEntries);
            }
            this.overLimitCache = maxEntries;
            return this;
        }

        /**
         * The in-memory store's bound on keys per limit ({@link InMemoryStore.Builder#maximumKeys(int)}); default none.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder memoryMaxKeys(int memoryMaxKeys) {
            if (memoryMaxKeys <= 0) {
                throw new IllegalArgumentException("memoryMaxKeys must be > 0, was " + memoryMaxKeys);
            }
            this.memoryMaxKeys = memoryMaxKeys;
            return this;
        }

        /** The mode; default {@link StoreMode#EXACT}. */
        public Builder mode(StoreMode mode) {
            this.mode = Objects.requireNonNull(mode, "mode must not be null");
            return this;
        }

        /**
         * Synchronized mode's flush interval, leased mode's round interval; default 100 ms.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder interval(Duration interval) {
            Objects.requireNonNull(interval, "interval must not be null");
            if (interval.isNegative() || interval.isZero()) {
                throw new IllegalArgumentException("interval must be > 0, was " + Durations.format(interval));
            }
            this.interval = interval;
            return this;
        }

        /**
         * How long a decision waits for the store: every call in exact mode, a claim in leased mode. Default (null):
         * the store's own, 250 ms.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder timeout(@Nullable Duration timeout) {
            if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
                throw new IllegalArgumentException("timeout must be > 0, was " + Durations.format(timeout));
            }
            this.timeout = timeout;
            return this;
        }

        /**
         * The store's password, given apart from the URI (from the environment, say); null for none.
         *
         * @throws IllegalArgumentException if empty
         */
        public Builder password(@Nullable String password) {
            if (password != null && password.isEmpty()) {
                throw new IllegalArgumentException("password must not be empty");
            }
            this.password = password;
            return this;
        }

        /**
         * A file holding the store's password (as Kubernetes mounts a secret), read when the store is opened; leading
         * and trailing white space is dropped. Null for none. Wins over {@link #password(String)}.
         */
        public Builder passwordFile(@Nullable Path passwordFile) {
            this.passwordFile = passwordFile;
            return this;
        }

        /** The assembly. */
        public StoreAssembly build() {
            return new StoreAssembly(this);
        }
    }
}
