package dev.sluice.spring.boot;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code sluice.*} properties of an application: where the policies come from, the store, the filter and the
 * metrics. Every property has a default; an application with none gets no limit until it names policies.
 *
 * <pre>{@code
 * sluice:
 *   policies:
 *     location: config/ratelimit.yaml     # or a directory of *.yaml; watched, reloaded on change
 *   dry-run: true                         # roll out first: nothing refused, "would deny" counted
 *   filter:
 *     url-patterns: [/oauth2/token]
 * }</pre>
 */
@ConfigurationProperties("sluice")
public class SluiceProperties {

    /** Whether Sluice is configured at all. */
    private boolean enabled = true;

    /**
     * Global dry run: every limit is evaluated as mode dry_run, whatever its rule says. Nothing is refused; what would
     * have been refused is counted (sluice.policy.requests{outcome=would_deny}).
     */
    private boolean dryRun;

    private final Policies policies = new Policies();
    private final Store store = new Store();
    private final Filter filter = new Filter();
    private final Metrics metrics = new Metrics();

    /** The defaults; Spring binds the application's properties over them. */
    public SluiceProperties() {}

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isDryRun() {
        return dryRun;
    }

    public void setDryRun(boolean dryRun) {
        this.dryRun = dryRun;
    }

    public Policies getPolicies() {
        return policies;
    }

    public Store getStore() {
        return store;
    }

    public Filter getFilter() {
        return filter;
    }

    public Metrics getMetrics() {
        return metrics;
    }

    /** Where the policies come from: a file or directory, or YAML text in the application's properties. */
    public static class Policies {

        /** The defaults. */
        public Policies() {}

        /**
         * A policy file, or a directory of *.yaml and *.yml files with one domain each (envoyproxy/ratelimit's format
         * with Sluice's extensions). Watched: a change is put in force without restart, a file that does not load is
         * refused and the last good policies stay.
         */
        private @Nullable Path location;

        /** Policies as YAML text, one domain per entry; used when no location is given. Not watched. */
        private List<String> inline = new ArrayList<>();

        /** Whether the location is watched and reloaded on change. */
        private boolean watch = true;

        /**
         * The longest time between two checks of the location, however quiet the file system; a write is usually
         * seen at once.
         */
        private Duration watchInterval = Duration.ofSeconds(10);

        public @Nullable Path getLocation() {
            return location;
        }

        public void setLocation(@Nullable Path location) {
            this.location = location;
        }

        public List<String> getInline() {
            return inline;
        }

        public void setInline(List<String> inline) {
            this.inline = inline;
        }

        public boolean isWatch() {
            return watch;
        }

        public void setWatch(boolean watch) {
            this.watch = watch;
        }

        public Duration getWatchInterval() {
            return watchInterval;
        }

        public void setWatchInterval(Duration watchInterval) {
            this.watchInterval = watchInterval;
        }
    }

    /** Where the counts live. An application's own {@code RateLimitStore} bean replaces all of this. */
    public static class Store {

        /** The defaults. */
        public Store() {}

        /**
         * The store: memory (this instance only), or a store shared by every instance: redis (needs sluice-redis and
         * sluice.store.uri), postgresql (sluice-postgres and the application's DataSource), mongodb (sluice-mongodb
         * and the application's MongoClient).
         */
        private StoreType type = StoreType.MEMORY;

        /**
         * The store's URI: redis://localhost:6379 (required for the redis store unless the application has its own
         * RedisClient), redis-cluster://host:port,host:port, postgresql://user@host:5432/database (HikariCP on the
         * class path), mongodb://host:27017/database; when set, the postgresql and mongodb stores use it instead of
         * the application's DataSource or MongoClient. Printed with its password as ***.
         */
        private @Nullable String uri;

        /**
         * The store's password, apart from the URI: from the environment (SLUICE_STORE_PASSWORD) or a secret store,
         * so that it is not written in a properties file. Put into the URI's user info; not with a URI that has one.
         */
        private @Nullable String password;

        /**
         * A file holding the store's password (a mounted Kubernetes secret), read at start, white space around it
         * dropped; wins over sluice.store.password.
         */
        private @Nullable Path passwordFile;

        /** The MongoDB database of the mongodb store on the application's MongoClient (a URI names its own). */
        private String database = "sluice";

        /**
         * How decisions use the shared store: exact (each decision is one call to it), synchronized (decided in
         * memory, counts flushed every sluice.store.interval; the instances together may pass a limit by what the
         * others admit in one interval) or leased (decided in memory within slices of each limit claimed from the
         * store; never over the limit). Synchronized and leased mode keep fixed_window, sliding_window_counter and
         * sliding_tail limits only.
         */
        private StoreMode mode = StoreMode.EXACT;

        /** The flush interval of synchronized mode, the interval of leased mode's rounds. */
        private Duration interval = Duration.ofMillis(100);

        /**
         * How long a decision waits for a shared store before the store's failure policy answers (by default the
         * request passes): every call in exact mode, a claim of a slice in leased mode. The store's default (250 ms)
         * when not set. Synchronized mode's calls run in the background and keep the counter store's default (1 s).
         */
        private @Nullable Duration timeout;

        /**
         * Exact mode on a shared store: keep up to this many of the store's refusals in this instance until their
         * retry instant, so that a key over its limit is refused without a store call (exact: it refuses only what the
         * store would). 0, the default, keeps none. No effect on the memory store or in synchronized and leased mode.
         */
        private int overLimitCache;

        public StoreType getType() {
            return type;
        }

        public void setType(StoreType type) {
            this.type = type;
        }

        public @Nullable String getUri() {
            return uri;
        }

        public void setUri(@Nullable String uri) {
            this.uri = uri;
        }

        public @Nullable String getPassword() {
            return password;
        }

        public void setPassword(@Nullable String password) {
            this.password = password;
        }

        public @Nullable Path getPasswordFile() {
            return passwordFile;
        }

        public void setPasswordFile(@Nullable Path passwordFile) {
            this.passwordFile = passwordFile;
        }

        public String getDatabase() {
            return database;
        }

        public void setDatabase(String database) {
            this.database = database;
        }

        public StoreMode getMode() {
            return mode;
        }

        public void setMode(StoreMode mode) {
            this.mode = mode;
        }

        public Duration getInterval() {
            return interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }

        public @Nullable Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(@Nullable Duration timeout) {
            this.timeout = timeout;
        }

        public int getOverLimitCache() {
            return overLimitCache;
        }

        public void setOverLimitCache(int overLimitCache) {
            this.overLimitCache = overLimitCache;
        }
    }

    /** The kinds of store the starter can set up from properties. */
    public enum StoreType {
        /** In this instance's memory: limits are per instance. */
        MEMORY,
        /** Redis, through Lettuce (sluice-redis). */
        REDIS,
        /** PostgreSQL, through the application's DataSource (sluice-postgres). */
        POSTGRESQL,
        /** MongoDB, through the application's MongoClient (sluice-mongodb). */
        MONGODB
    }

    /** How decisions use a shared store. */
    public enum StoreMode {
        /** Every decision is one call to the store. */
        EXACT,
        /** Decided in memory; counts flushed to the store in bulk every interval ({@code SynchronizedStore}). */
        SYNCHRONIZED,
        /** Decided in memory within slices of each limit claimed from the store ({@code LeasedStore}). */
        LEASED
    }

    /** The servlet filter that limits requests. */
    public static class Filter {

        /** The defaults. */
        public Filter() {}

        /** Whether the servlet filter is registered. */
        private boolean enabled = true;

        /**
         * The policy domain the filter checks requests under; by default the only domain loaded (required when the
         * policies define several).
         */
        private @Nullable String domain;

        /** The URL patterns the filter is mapped to (servlet patterns: /oauth2/token, /api/*). */
        private List<String> urlPatterns = new ArrayList<>(List.of("/oauth2/token"));

        /**
         * Whether the filter is registered with the servlet container on url-patterns. When false it is built but not
         * registered (sluiceFilterRegistration.getFilter()), for the application to place itself, such as in a Spring
         * Security chain after client authentication.
         */
        private boolean register = true;

        /**
         * The descriptors a request is checked under, each a list of entries (a descriptor key and its source:
         * remote-address, header, principal, path or value), as Envoy's rate-limit actions build them. None (the
         * default): the OAuth token request's, [client_id] or [client_id, username].
         */
        private List<SluiceDescriptorProperties> descriptors = new ArrayList<>();

        /**
         * The filter's order. By default just before Spring Security's filter chain (-100), so a refused request costs
         * no client authentication.
         */
        private int order = -110;

        /** Also send X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset. */
        private boolean legacyHeaders;

        /**
         * Advertise dry-run limits in the RateLimit-Policy and RateLimit fields, with their real counts; by default a
         * dry run changes nothing a client can see.
         */
        private boolean advertiseDryRun;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public @Nullable String getDomain() {
            return domain;
        }

        public void setDomain(@Nullable String domain) {
            this.domain = domain;
        }

        public List<String> getUrlPatterns() {
            return urlPatterns;
        }

        public void setUrlPatterns(List<String> urlPatterns) {
            this.urlPatterns = urlPatterns;
        }

        public boolean isRegister() {
            return register;
        }

        public void setRegister(boolean register) {
            this.register = register;
        }

        public List<SluiceDescriptorProperties> getDescriptors() {
            return descriptors;
        }

        public void setDescriptors(List<SluiceDescriptorProperties> descriptors) {
            this.descriptors = descriptors;
        }

        public int getOrder() {
            return order;
        }

        public void setOrder(int order) {
            this.order = order;
        }

        public boolean isLegacyHeaders() {
            return legacyHeaders;
        }

        public void setLegacyHeaders(boolean legacyHeaders) {
            this.legacyHeaders = legacyHeaders;
        }

        public boolean isAdvertiseDryRun() {
            return advertiseDryRun;
        }

        public void setAdvertiseDryRun(boolean advertiseDryRun) {
            this.advertiseDryRun = advertiseDryRun;
        }
    }

    /** The metrics, on the application's MeterRegistry when it has one. */
    public static class Metrics {

        /** The defaults. */
        public Metrics() {}

        /**
         * The most distinct descriptor values (client ids) that the metrics of detailed_metric rules tag; later ones
         * are counted under value=other.
         */
        private int maxDetailedValues = 1000;

        public int getMaxDetailedValues() {
            return maxDetailedValues;
        }

        public void setMaxDetailedValues(int maxDetailedValues) {
            this.maxDetailedValues = maxDetailedValues;
        }
    }
}
