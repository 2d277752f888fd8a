package dev.sluice.policy;

import dev.sluice.RateLimitListener;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * The policy limiter's meters (names in {@code docs/policies.md}), and the listener of its limiters for store
 * errors and latency.
 *
 * <p>Cardinality is bounded by the configuration, never by the traffic: {@code domain} and {@code rule} tags come
 * from the loaded rules (a request for an unknown domain is tagged {@code domain=unknown}), and the {@code value}
 * tag of {@code detailed_metric} rules takes at most {@code maxValues} distinct values across the limiter; every
 * value after those is counted as {@code value=other}. The set of values admitted is the bound itself: a million new
 * client ids leave the registry, and this class, as large as the first {@code maxValues} made them. The length of a
 * {@code value} tag is bounded too: a value longer than {@value #MAX_VALUE_LENGTH} characters is tagged with its
 * start and a hash ({@link #label}), so a megabyte-long client id costs a tag of 82 characters. Each rule keeps the
 * counters of at most {@code maxValues} short descriptors it has seen, so that it finds them without building an id.
 */
final class PolicyMetrics implements RateLimitListener {

    static final String REQUESTS = "sluice.policy.requests";
    static final String REQUESTS_DETAILED = "sluice.policy.requests.detailed";
    static final String NEAR_LIMIT = "sluice.policy.near.limit";
    static final String CHECK = "sluice.policy.check";
    static final String STORE_ERRORS = "sluice.policy.store.errors";
    static final String STORE_FAILURES = "sluice.policy.store.failures";
    static final String STORE_CALLS = "sluice.policy.store.calls";
    static final String CONFIG_LOADS = "sluice.policy.config.loads";
    static final String CONFIG_VERSION = "sluice.policy.config.version";
    static final String UNMATCHED = "sluice.policy.unmatched";
    static final String OVER_LIMIT_CACHE_HITS = "sluice.over.limit.cache.hits";
    static final String UNKNOWN = "unknown";
    /** The longest domain a log line names as it was sent; longer ones are cut. */
    private static final int LOGGED_CHARS = 100;

    private static final long LOG_EVERY_NANOS = 60_000_000_000L;
    private static final System.Logger LOG = System.getLogger(PolicyLimiter.class.getName());
    static final String OTHER = "other";
    /** The longest {@code value} tag; a longer value is shortened ({@link #label}). */
    static final int MAX_VALUE_LENGTH = 128;
    /** How much of a value longer than {@link #MAX_VALUE_LENGTH} its tag keeps. */
    static final int KEPT_PREFIX = 64;

    private static final double NEAR = 0.8;

    private final MeterRegistry registry;
    private final int maxValues;
    private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();
    /**
     * The meters of each rule in force, by the rule itself (identity: {@link Rule} has no {@code equals}), so a check
     * finds them without building a meter id; emptied on each load, filled again as rules are checked.
     */
    private final ConcurrentHashMap<Rule, RuleMeters> byRule = new ConcurrentHashMap<>();
    /** Detailed values admitted so far; never more than {@code maxValues}. */
    private final ConcurrentHashMap<String, Boolean> values = new ConcurrentHashMap<>();

    private final AtomicInteger valueCount = new AtomicInteger();
    private final Counter storeErrors;
    private final Timer storeCalls;
    private final Counter loads;
    private final Counter loadFailures;
    private final AtomicLong version = new AtomicLong();
    /** When a request of an unknown domain, and one with an unmatched descriptor, were last logged. */
    private final AtomicLong unknownLogged = new AtomicLong(System.nanoTime() - LOG_EVERY_NANOS);

    private final AtomicLong unmatchedLogged = new AtomicLong(System.nanoTime() - LOG_EVERY_NANOS);

    /** When a request answered by {@code on_store_failure} was last logged, for logging at most one a second. */
    private final AtomicLong storeFailureLogged = new AtomicLong(System.nanoTime() - STORE_FAILURE_LOG_EVERY_NANOS);

    private static final long STORE_FAILURE_LOG_EVERY_NANOS = 1_000_000_000L;

    PolicyMetrics(MeterRegistry registry, int maxValues) {
        this.registry = registry;
        this.maxValues = maxValues;
        this.storeErrors = Counter.builder(STORE_ERRORS)
                .description("Store calls that failed or timed out")
                .register(registry);
        this.storeCalls = Timer.builder(STORE_CALLS)
                .description("Time of each call to the store")
                .register(registry);
        this.loads = Counter.builder(CONFIG_LOADS)
                .tag("result", "success")
                .description("Configurations put in force")
                .register(registry);
        this.loadFailures = Counter.builder(CONFIG_LOADS)
                .tag("result", "failure")
                .description("Configurations refused; the previous one stayed in force")
                .register(registry);
        Gauge.builder(CONFIG_VERSION, version, AtomicLong::doubleValue)
                .description("Version of the configuration in force: 1 at start, +1 per reload")
                .register(registry);
    }

    void loaded(long v) {
        loads.increment();
        version.set(v);
        byRule.clear(); // the rules replaced are not asked for again; the meters stay in the registry
    }

    void loadFailed() {
        loadFailures.increment();
    }

    void record(String domain, boolean knownDomain, Verdict verdict, long nanos) {
        String domainTag = knownDomain ? domain : UNKNOWN;
        Timer timer = timers.get(domainTag);
        if (timer == null) {
            timer = timers.computeIfAbsent(domainTag, d -> Timer.builder(CHECK)
                    .tag("domain", d)
                    .description("Time to decide a request")
                    .register(registry));
        }
        timer.record(nanos, TimeUnit.NANOSECONDS);
        if (!knownDomain) {
            unknownDomain(domain);
        }
        int cached = verdict.cachedRefusals();
        if (cached > 0) {
            overLimitCacheHits(domain).increment(cached);
        }
        OnStoreFailure answer = verdict.storeFailure().orElse(null);
        if (answer != null) {
            storeFailure(domain, verdict.storeTimedOut() ? "timeout" : "failed", answer);
        }
        List<DescriptorVerdict> descriptors = verdict.descriptors();
        for (int i = 0; i < descriptors.size(); i++) {
            DescriptorVerdict d = descriptors.get(i);
            Rule rule = d.ruleOrNull();
            if (rule == null) {
                unmatched(domainTag).increment();
                if (knownDomain) {
                    logAtMostOnceAMinute(
                            unmatchedLogged,
                            () -> "no rule of domain '" + domain + "' matches a descriptor of keys "
                                    + shown(keys(d.descriptor())) + ": allowed with no limit (counted in " + UNMATCHED
                                    + "; logged at most once a minute)");
                }
                continue;
            }
            RuleMeters meters = byRule.get(rule);
            if (meters == null) {
                meters = byRule.computeIfAbsent(rule, r -> new RuleMeters());
            }
            Outcome o = d.outcome();
            meters.requests(domain, rule, o).increment();
            if (rule.detailedMetric()) {
                meters.detailed(domain, rule, d.descriptor(), o).increment();
            }
            if (o == Outcome.ALLOWED && nearLimit(d.limits())) {
                meters.nearLimit(domain, rule).increment();
            }
        }
    }

    /**
     * The descriptors no rule matched, per domain; {@code domain=unknown} for a domain the configuration does not
     * define, which is logged (not tagged: it comes from the traffic).
     */
    private Counter unmatched(String domainTag) {
        Counter c = counters.get(UNMATCHED + '\0' + domainTag);
        if (c == null) {
            c = counters.computeIfAbsent(UNMATCHED + '\0' + domainTag, k -> Counter.builder(UNMATCHED)
                    .tag("domain", domainTag)
                    .description("Descriptors allowed with no limit: no rule matched, or the domain is unknown")
                    .register(registry));
        }
        return c;
    }

    /** The limits the store's over-limit cache refused without a store call, per domain (a known one: it has limits). */
    private Counter overLimitCacheHits(String domain) {
        String id = OVER_LIMIT_CACHE_HITS + '\0' + domain;
        Counter c = counters.get(id);
        if (c == null) {
            c = counters.computeIfAbsent(id, k -> Counter.builder(OVER_LIMIT_CACHE_HITS)
                    .tag("domain", domain)
                    .description("Limits refused by the store's over-limit cache, without a store call; each is"
                            + " counted as a refusal too")
                    .register(registry));
        }
        return c;
    }

    /**
     * Counts a request the store could not decide, answered by its domain's {@code on_store_failure}, and logs it at
     * most once a second with its cause. The domain is one of the configuration's: only a known domain has limits.
     */
    private void storeFailure(String domain, String cause, OnStoreFailure answer) {
        String id = STORE_FAILURES + '\0' + domain + '\0' + cause + '\0' + answer.configName();
        Counter c = counters.get(id);
        if (c == null) {
            c = counters.computeIfAbsent(id, k -> Counter.builder(STORE_FAILURES)
                    .tag("domain", domain)
                    .tag("cause", cause)
                    .tag("answer", answer.configName())
                    .description("Requests the store could not decide, answered by on_store_failure")
                    .register(registry));
        }
        c.increment();
        long now = System.nanoTime();
        long last = storeFailureLogged.get();
        if (now - last >= STORE_FAILURE_LOG_EVERY_NANOS && storeFailureLogged.compareAndSet(last, now)) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "the store " + (cause.equals("timeout") ? "did not answer in time" : "failed") + " for domain '"
                            + domain + "': answered by on_store_failure: " + answer.configName() + " (counted in "
                            + STORE_FAILURES + "; logged at most once a second)");
        }
    }

    /** Logs a request of a domain no configuration defines, at most once a minute. */
    void unknownDomain(String domain) {
        logAtMostOnceAMinute(
                unknownLogged,
                () -> "no configuration defines domain '" + shown(domain) + "': its requests are allowed with no limit"
                        + " (counted in " + UNMATCHED + "{domain=unknown}; logged at most once a minute)");
    }

    private static void logAtMostOnceAMinute(AtomicLong last, java.util.function.Supplier<String> message) {
        long now = System.nanoTime();
        long then = last.get();
        if (now - then >= LOG_EVERY_NANOS && last.compareAndSet(then, now)) {
            LOG.log(System.Logger.Level.WARNING, message);
        }
    }

    private static String keys(Descriptor d) {
        StringBuilder sb = new StringBuilder("[");
        for (Descriptor.Entry e : d.entries()) {
            sb.append(sb.length() > 1 ? ", " : "").append(e.key());
        }
        return sb.append(']').toString();
    }

    private static String shown(String s) {
        return s.length() <= LOGGED_CHARS ? s : s.substring(0, LOGGED_CHARS) + "… (" + s.length() + " characters)";
    }

    /** One rule's meters, registered as they are first needed. */
    @SuppressWarnings("EnumOrdinal") // a slot per outcome, in memory only: the ordinal is never stored or sent
    private final class RuleMeters {
        private final AtomicReferenceArray<Counter> requests = new AtomicReferenceArray<>(Outcome.values().length);
        private volatile @Nullable Counter nearLimit;
        /**
         * The detailed counters of the descriptors seen, by outcome, so that a descriptor seen before finds its counter
         * by its hash (kept in the descriptor) instead of building its value and two meter ids: at most
         * {@code maxValues} descriptors, only those whose value has a counter of its own (not {@link #OTHER}), and
         * only short ones ({@link Engine#MAX_CACHED_CHARS}, as the engine keeps resolutions), so that what is kept
         * of the traffic stays small whatever its values' length.
         */
        private final ConcurrentHashMap<Descriptor, AtomicReferenceArray<Counter>> detailed = new ConcurrentHashMap<>();

        Counter detailed(String domain, Rule rule, Descriptor d, Outcome o) {
            AtomicReferenceArray<Counter> byOutcome = detailed.get(d);
            Counter c = byOutcome == null ? null : byOutcome.get(o.ordinal());
            if (c != null) {
                return c;
            }
            String value = value(domain, rule, d);
            c = counter(REQUESTS_DETAILED, domain, rule.path(), value, o);
            if (!value.equals(OTHER)) {
                if (byOutcome == null && detailed.size() < maxValues && Engine.chars(d) <= Engine.MAX_CACHED_CHARS) {
                    byOutcome = detailed.computeIfAbsent(d, k -> new AtomicReferenceArray<>(Outcome.values().length));
                }
                if (byOutcome != null) {
                    byOutcome.set(o.ordinal(), c);
                }
            }
            return c;
        }

        Counter requests(String domain, Rule rule, Outcome o) {
            Counter c = requests.get(o.ordinal());
            if (c == null) {
                c = counter(REQUESTS, domain, rule.path(), null, o);
                requests.set(o.ordinal(), c);
            }
            return c;
        }

        Counter nearLimit(String domain, Rule rule) {
            Counter c = nearLimit;
            if (c == null) {
                c = counters.computeIfAbsent(
                        NEAR_LIMIT + '\0' + domain + '\0' + rule.path(), k -> Counter.builder(NEAR_LIMIT)
                                .tag("domain", domain)
                                .tag("rule", rule.path())
                                .description("Allowed requests that left a limit at least 80% used")
                                .register(registry));
                nearLimit = c;
            }
            return c;
        }
    }

    private static boolean nearLimit(List<LimitVerdict> limits) {
        for (LimitVerdict l : limits) {
            long limit = l.limit().requestsPerUnit();
            if (l.outcome() == Outcome.ALLOWED && !l.failed() && limit > 0 && limit - l.remaining() >= NEAR * limit) {
                return true;
            }
        }
        return false;
    }

    private String value(String domain, Rule rule, Descriptor descriptor) {
        StringBuilder sb = new StringBuilder();
        for (Descriptor.Entry e : descriptor.entries()) {
            if (sb.length() > 0) {
                sb.append('/');
            }
            sb.append(e.value());
        }
        String value = label(sb.toString());
        String id = domain + '\0' + rule.path() + '\0' + value;
        if (values.containsKey(id)) {
            return value;
        }
        for (; ; ) {
            int n = valueCount.get();
            if (n >= maxValues) {
                return OTHER;
            }
            if (valueCount.compareAndSet(n, n + 1)) {
                if (values.putIfAbsent(id, Boolean.TRUE) != null) {
                    valueCount.decrementAndGet();
                }
                return value;
            }
        }
    }

    /**
     * {@code value} as a tag value of at most {@link #MAX_VALUE_LENGTH} characters: itself if it is that short, else
     * its first {@link #KEPT_PREFIX} characters, {@code …#}, and the first 16 hex digits of the SHA-256 of its UTF-8
     * bytes, so that two long values stay apart and each is still recognisable by its start.
     */
    static String label(String value) {
        if (value.length() <= MAX_VALUE_LENGTH) {
            return value;
        }
        int keep = Character.isHighSurrogate(value.charAt(KEPT_PREFIX - 1)) ? KEPT_PREFIX - 1 : KEPT_PREFIX;
        byte[] digest;
        try {
            digest = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
        return value.substring(0, keep) + "…#" + HexFormat.of().formatHex(digest, 0, 8);
    }

    private Counter counter(String name, String domain, String rule, @Nullable String value, Outcome outcome) {
        String id = name + '\0' + domain + '\0' + rule + '\0' + (value == null ? "" : value) + '\0' + outcome;
        return counters.computeIfAbsent(id, k -> {
            Counter.Builder b = Counter.builder(name)
                    .tag("domain", domain)
                    .tag("rule", rule)
                    .tag("outcome", outcome.tag());
            if (value != null) {
                b.tag("value", value);
            }
            return b.description("Requests per rule and outcome").register(registry);
        });
    }

    @Override
    public void onStoreFailure(@Nullable RateLimiter limiter, SluiceException failure) {
        storeErrors.increment();
    }

    @Override
    public void onStoreCall(@Nullable RateLimiter limiter, long nanos) {
        storeCalls.record(nanos, TimeUnit.NANOSECONDS);
    }
}
