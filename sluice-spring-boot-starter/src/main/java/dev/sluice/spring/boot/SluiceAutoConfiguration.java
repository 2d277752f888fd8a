package dev.sluice.spring.boot;

import dev.sluice.http.DescriptorExtractor;
import dev.sluice.http.OAuthTokenExtractor;
import dev.sluice.http.SluiceFilter;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.spi.RateLimitStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.util.ClassUtils;

/**
 * Sluice in a Spring Boot application, from its {@code sluice.*} properties ({@link SluiceProperties}): the
 * policies, a {@link PolicyLimiter} on the store with its metrics on the application's {@link MeterRegistry}, the
 * policies' location watched ({@link SluiceReloads}), the {@link SluiceFilter} in a servlet application, and the
 * {@code sluice} Actuator endpoint ({@link SluiceEndpoint}) when Actuator is there.
 *
 * <p>Every bean is {@code @ConditionalOnMissingBean}: an application's own {@link RateLimitStore},
 * {@link DescriptorExtractor}, {@link PolicyLimiter}, {@link SluicePolicySource} or {@code sluiceFilterRegistration}
 * replaces the starter's.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
            "org.springframework.boot.autoconfigure.mongo.MongoAutoConfiguration"
        })
@ConditionalOnClass(PolicyLimiter.class)
@ConditionalOnProperty(prefix = "sluice", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(SluiceProperties.class)
@Import({
    SluiceStoreConfigurations.Redis.class,
    SluiceStoreConfigurations.Postgres.class,
    SluiceStoreConfigurations.Mongo.class,
    SluiceStoreConfigurations.Memory.class,
    SluiceStoreConfigurations.OnConnection.class,
    // last: a store's configuration steps aside for a RateLimitStore registered before it
    SluiceStoreConfigurations.Synchronized.class,
    SluiceStoreConfigurations.Leased.class
})
public class SluiceAutoConfiguration {

    /**
     * The name of a {@link Clock} bean the limiter takes its time from, if the application defines one (a test's
     * hand-moved clock); otherwise {@link Clock#systemUTC()}.
     */
    public static final String CLOCK_BEAN = "sluiceClock";

    /** Created by Spring. */
    public SluiceAutoConfiguration() {}

    /** Where the policies come from: {@code sluice.policies.location}, else {@code sluice.policies.inline}. */
    @Bean
    @ConditionalOnMissingBean
    public SluicePolicySource sluicePolicySource(SluiceProperties properties) {
        return SluicePolicySource.of(properties.getPolicies());
    }

    /**
     * The limiter: the policies (refused at start, with every error, if they do not load), the store, the global dry
     * run, the metrics on the application's meter registry if it has one, and the {@value #CLOCK_BEAN} clock if there
     * is one.
     */
    @Bean
    @ConditionalOnMissingBean
    public PolicyLimiter sluicePolicyLimiter(
            SluiceProperties properties,
            SluicePolicySource source,
            ObjectProvider<RateLimitStore> store,
            ObjectProvider<MeterRegistry> registry,
            @Qualifier(CLOCK_BEAN) ObjectProvider<Clock> clock) {
        RateLimitStore s = store.getIfAvailable();
        if (s == null) {
            throw new IllegalStateException("sluice.store.type="
                    + properties.getStore().getType().name().toLowerCase(Locale.ROOT) + " needs its module"
                    + " (dev.sluice:sluice-" + storeModule(properties.getStore().getType()) + ") on the class path,"
                    + " or define a RateLimitStore bean");
        }
        PolicyLimiter.Builder b = PolicyLimiter.builder(source.load())
                .store(s)
                .dryRun(properties.isDryRun())
                .maxDetailedValues(properties.getMetrics().getMaxDetailedValues());
        Clock c = clock.getIfAvailable();
        if (c != null) {
            b.clock(c);
        }
        MeterRegistry r = registry.getIfAvailable();
        if (r != null) {
            b.meterRegistry(r);
        }
        return b.build();
    }

    private static String storeModule(SluiceProperties.StoreType type) {
        return switch (type) {
            case MEMORY -> "core";
            case REDIS -> "redis";
            case POSTGRESQL -> "postgres";
            case MONGODB -> "mongodb";
        };
    }

    /** Watches the policies' location and keeps the last reload. */
    @Bean
    @ConditionalOnMissingBean
    public SluiceReloads sluiceReloads(PolicyLimiter limiter, SluicePolicySource source, SluiceProperties properties) {
        return new SluiceReloads(
                limiter,
                source,
                properties.getPolicies().isWatch(),
                properties.getPolicies().getWatchInterval());
    }

    /** The filter of a servlet application. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(name = "jakarta.servlet.Filter")
    @ConditionalOnProperty(prefix = "sluice.filter", name = "enabled", matchIfMissing = true)
    public static class FilterConfiguration {

        private static final boolean SPRING_SECURITY_PRESENT = ClassUtils.isPresent(
                "org.springframework.security.web.FilterChainProxy", FilterConfiguration.class.getClassLoader());

        /** Created by Spring. */
        public FilterConfiguration() {}

        /**
         * The descriptors of {@code sluice.filter.descriptors} ({@link SluiceDescriptorProperties}); without any, the
         * OAuth token endpoint's: {@code [client_id]}, {@code [client_id, username]}.
         *
         * @throws IllegalStateException naming the property at fault if a descriptor is not complete
         */
        @Bean
        @ConditionalOnMissingBean
        public DescriptorExtractor sluiceDescriptorExtractor(SluiceProperties properties) {
            List<SluiceDescriptorProperties> descriptors =
                    properties.getFilter().getDescriptors();
            return descriptors.isEmpty()
                    ? OAuthTokenExtractor.create()
                    : SluiceDescriptorProperties.extractor("sluice.filter.descriptors", descriptors);
        }

        /**
         * The {@link SluiceFilter} on {@code sluice.filter.url-patterns}, at {@code sluice.filter.order}, checking
         * requests under {@code sluice.filter.domain} (by default the only domain loaded); built but not registered
         * when {@code sluice.filter.register} is false. Logs a warning when no request the filter sees can produce a
         * descriptor ({@link SluiceFilterMapping}).
         *
         * @throws IllegalStateException if no domain is named and the policies do not define exactly one
         */
        @Bean
        @ConditionalOnMissingBean(name = "sluiceFilterRegistration")
        public FilterRegistrationBean<SluiceFilter> sluiceFilterRegistration(
                PolicyLimiter limiter, DescriptorExtractor extractor, SluiceProperties properties) {
            SluiceProperties.Filter p = properties.getFilter();
            SluiceFilter filter = SluiceFilter.builder(limiter)
                    .domain(domain(p.getDomain(), limiter.policies().domains()))
                    .extractor(extractor)
                    .legacyHeaders(p.isLegacyHeaders())
                    .advertiseDryRun(p.isAdvertiseDryRun())
                    .build();
            FilterRegistrationBean<SluiceFilter> registration = new FilterRegistrationBean<>(filter);
            registration.setName("sluiceFilter");
            registration.setUrlPatterns(p.getUrlPatterns());
            registration.setOrder(p.getOrder());
            registration.setEnabled(p.isRegister());
            if (p.isRegister()) {
                SluiceFilterMapping.warnIfNothingCanBeLimited(
                        extractor, p.getUrlPatterns(), p.getOrder(), SPRING_SECURITY_PRESENT);
            }
            return registration;
        }

        static String domain(@org.jspecify.annotations.Nullable String configured, Set<String> loaded) {
            if (configured != null && !configured.isEmpty()) {
                return configured;
            }
            if (loaded.size() == 1) {
                return loaded.iterator().next();
            }
            throw new IllegalStateException("set sluice.filter.domain: the domain the filter checks requests under"
                    + (loaded.isEmpty()
                            ? " (no policies are loaded: set sluice.policies.location or sluice.policies.inline)"
                            : "; the policies define " + new java.util.TreeSet<>(loaded)));
        }
    }

    /** The {@code sluice} Actuator endpoint. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
    public static class EndpointConfiguration {

        /** Created by Spring. */
        public EndpointConfiguration() {}

        /** The loaded policies and the last reload. */
        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnAvailableEndpoint(endpoint = SluiceEndpoint.class) // on the method: read only with Actuator
        public SluiceEndpoint sluiceEndpoint(PolicyLimiter limiter, SluiceReloads reloads) {
            return new SluiceEndpoint(limiter, reloads);
        }
    }
}
