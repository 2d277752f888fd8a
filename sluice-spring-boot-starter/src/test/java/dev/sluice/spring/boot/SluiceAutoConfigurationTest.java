package dev.sluice.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.http.DescriptorExtractor;
import dev.sluice.http.Extraction;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.policy.Descriptor;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testkit.LogCapture;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.RedisServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What the auto-configuration sets up from properties, and that an application's own beans replace it. Contexts
 * without a server (the web test starts one); the Redis store on a real server. (Not here: MongoDB, whose driver of
 * Spring Boot 3.5 needs a newer wire version than the in-JVM test server speaks, and PostgreSQL, whose embedded server
 * costs seconds to start; both stores are tested in their own modules, and their wiring is the Redis one's.)
 */
class SluiceAutoConfigurationTest {

    static final String TWO_PER_DAY =
            """
            domain: api
            descriptors:
              - key: client_id
                rate_limit: {unit: day, requests_per_unit: 2}
            """;

    final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class));

    final WebApplicationContextRunner webRunner =
            new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class));

    /** Three checks of one client: two allowed, the third refused (the limit is two a day). */
    static void twoAllowedThenRefused(PolicyLimiter limiter) {
        List<Descriptor> client =
                List.of(Descriptor.of("client_id", UUID.randomUUID().toString()));
        assertTrue(limiter.check("api", client, 1).allowed());
        assertTrue(limiter.check("api", client, 1).allowed());
        assertFalse(limiter.check("api", client, 1).allowed());
    }

    @Test
    void withNoPropertiesThereIsAnInMemoryStoreAndNoLimit() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(RateLimitStore.class)).isInstanceOf(InMemoryStore.class);
            PolicyLimiter limiter = context.getBean(PolicyLimiter.class);
            assertTrue(limiter.policies().domains().isEmpty());
            assertFalse(limiter.dryRun());
            assertEquals("none", context.getBean(SluiceReloads.class).source().description());
            assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
        });
    }

    @Test
    void inlinePoliciesAreEnforcedAndTheFilterChecksTheirOnlyDomain() {
        webRunner.withPropertyValues("sluice.policies.inline[0]=" + TWO_PER_DAY).run(context -> {
            twoAllowedThenRefused(context.getBean(PolicyLimiter.class));
            FilterRegistrationBean<?> registration =
                    context.getBean("sluiceFilterRegistration", FilterRegistrationBean.class);
            assertEquals(List.of("/oauth2/token"), List.copyOf(registration.getUrlPatterns()));
            assertEquals(-110, registration.getOrder());
            assertTrue(registration.getFilter().toString().startsWith("SluiceFilter[domain=api, OAuthTokenExtractor"));
            assertEquals(
                    "sluice.policies.inline",
                    context.getBean(SluiceReloads.class).source().description());
        });
    }

    @Test
    void theFiltersPatternsOrderAndDomainComeFromProperties() {
        webRunner
                .withPropertyValues(
                        "sluice.policies.inline[0]=" + TWO_PER_DAY,
                        "sluice.policies.inline[1]=domain: other\ndescriptors: []\n",
                        "sluice.filter.domain=other",
                        "sluice.filter.url-patterns=/api/*,/token",
                        "sluice.filter.order=5")
                .run(context -> {
                    FilterRegistrationBean<?> registration =
                            context.getBean("sluiceFilterRegistration", FilterRegistrationBean.class);
                    assertEquals(List.of("/api/*", "/token"), List.copyOf(registration.getUrlPatterns()));
                    assertEquals(5, registration.getOrder());
                    assertTrue(registration.getFilter().toString().startsWith("SluiceFilter[domain=other,"));
                });
    }

    @Test
    void aFilterMappedWhereNoRequestCanProduceADescriptorIsAWarningAtStart() {
        try (LogCapture log = LogCapture.start()) {
            webRunner
                    .withPropertyValues("sluice.policies.inline[0]=" + TWO_PER_DAY, "sluice.filter.url-patterns=/api/*")
                    .run(context -> assertThat(context).hasNotFailed());
            List<String> warnings = log.messagesContaining("sluice.filter.url-patterns [/api/*]");
            assertEquals(1, warnings.size(), warnings.toString());
            assertTrue(warnings.get(0).contains("every other request there passes unlimited"), warnings.get(0));
            assertTrue(warnings.get(0).contains("set sluice.filter.descriptors"), warnings.get(0));

            webRunner
                    .withPropertyValues(
                            "sluice.policies.inline[0]=" + TWO_PER_DAY,
                            "sluice.filter.url-patterns=/api/*",
                            "sluice.filter.descriptors[0].entries[0].key=api_key",
                            "sluice.filter.descriptors[0].entries[0].source=header",
                            "sluice.filter.descriptors[0].entries[0].header=X-Api-Key")
                    .run(context -> assertTrue(context.getBean("sluiceFilterRegistration", FilterRegistrationBean.class)
                            .getFilter()
                            .toString()
                            .endsWith("RequestDescriptors[[api_key=header X-Api-Key]]]")));
            assertEquals(1, log.messagesContaining("sluice.filter.url-patterns").size(), "none for descriptors");
        }
    }

    @Test
    void anIncompleteDescriptorEntryFailsTheStartNamingTheProperty() {
        webRunner
                .withPropertyValues(
                        "sluice.policies.inline[0]=" + TWO_PER_DAY,
                        "sluice.filter.descriptors[0].entries[0].key=remote_address",
                        "sluice.filter.descriptors[0].entries[0].source=remote-address",
                        "sluice.filter.descriptors[1].entries[0].key=api_key",
                        "sluice.filter.descriptors[1].entries[0].source=header")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessage("sluice.filter.descriptors[1].entries[0].header: required by source header"));
    }

    @Test
    void severalDomainsAndNoFilterDomainFailTheStartWithWhatToSet() {
        webRunner
                .withPropertyValues(
                        "sluice.policies.inline[0]=" + TWO_PER_DAY,
                        "sluice.policies.inline[1]=domain: other\ndescriptors: []\n")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessage("set sluice.filter.domain: the domain the filter checks requests under; the"
                                + " policies define [api, other]"));
    }

    @Test
    void aBadPolicyFailsTheStartWithEveryErrorAndWhere() {
        runner.withPropertyValues("sluice.policies.inline[0]=domain: api\ndescriptors:\n  - key: client_id\n"
                        + "    rate_limit: {unit: fortnight, requests_per_unit: 2}\n")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("sluice.policies.inline[0]:4:")
                        .hasMessageContaining("invalid rate limit unit 'fortnight'"));
    }

    @Test
    void theGlobalDryRunRefusesNothing() {
        runner.withPropertyValues("sluice.policies.inline[0]=" + TWO_PER_DAY, "sluice.dry-run=true")
                .run(context -> {
                    PolicyLimiter limiter = context.getBean(PolicyLimiter.class);
                    assertTrue(limiter.dryRun());
                    List<Descriptor> client = List.of(Descriptor.of("client_id", "c"));
                    for (int i = 0; i < 5; i++) {
                        assertTrue(limiter.check("api", client, 1).allowed());
                    }
                });
    }

    @Test
    void aSluiceClockBeanIsTheLimitersTime() {
        ManualClock clock = new ManualClock(Instant.parse("2026-01-01T10:00:00.250Z"));
        runner.withBean(SluiceAutoConfiguration.CLOCK_BEAN, Clock.class, () -> clock)
                .withPropertyValues("sluice.policies.inline[0]=domain: api\ndescriptors:\n  - key: client_id\n"
                        + "    rate_limit: {unit: second, requests_per_unit: 2}\n")
                .run(context -> {
                    PolicyLimiter limiter = context.getBean(PolicyLimiter.class);
                    List<Descriptor> client = List.of(Descriptor.of("client_id", "c"));
                    assertTrue(limiter.check("api", client, 1).allowed());
                    assertTrue(limiter.check("api", client, 1).allowed());
                    assertEquals(
                            Duration.ofMillis(750),
                            limiter.check("api", client, 1).retryAfter());
                    clock.advance(Duration.ofMillis(750));
                    assertTrue(limiter.check("api", client, 1).allowed(), "a new second on the hand-moved clock");
                });
    }

    /** An application's store, counting the limiters bound on it. */
    @Configuration(proxyBeanMethods = false)
    static class OwnBeans {
        final AtomicInteger bound = new AtomicInteger();

        @Bean
        RateLimitStore myStore() {
            InMemoryStore memory = InMemoryStore.create();
            return config -> {
                bound.incrementAndGet();
                return memory.bind(config);
            };
        }

        @Bean
        DescriptorExtractor myExtractor() {
            return new DescriptorExtractor() {
                @Override
                public Optional<Extraction> extract(jakarta.servlet.http.HttpServletRequest request) {
                    return Optional.of(Extraction.of(Descriptor.of("client_id", request.getRemoteAddr())));
                }

                @Override
                public String toString() {
                    return "MyExtractor";
                }
            };
        }
    }

    @Test
    void anApplicationsOwnStoreAndExtractorReplaceTheStarters() {
        webRunner
                .withUserConfiguration(OwnBeans.class)
                .withPropertyValues("sluice.policies.inline[0]=" + TWO_PER_DAY, "sluice.store.type=redis")
                .run(context -> {
                    assertThat(context).hasSingleBean(RateLimitStore.class);
                    assertThat(context).doesNotHaveBean("sluiceRedisClient");
                    twoAllowedThenRefused(context.getBean(PolicyLimiter.class));
                    assertEquals(1, context.getBean(OwnBeans.class).bound.get(), "one limit shape, bound once");
                    assertEquals(
                            "SluiceFilter[domain=api, MyExtractor]",
                            context.getBean("sluiceFilterRegistration", FilterRegistrationBean.class)
                                    .getFilter()
                                    .toString());
                });
    }

    @Test
    void aRedisStoreOnTheUri() {
        runner.withPropertyValues(
                        "sluice.policies.inline[0]=" + TWO_PER_DAY,
                        "sluice.store.type=redis",
                        "sluice.store.uri=" + RedisServers.shared().uri())
                .run(context -> {
                    assertThat(context.getBean(RateLimitStore.class)).isInstanceOf(RedisStore.class);
                    twoAllowedThenRefused(context.getBean(PolicyLimiter.class));
                });
    }

    @Test
    void withoutActuatorThereIsNoEndpointAndTheRestWorks() {
        webRunner
                .withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
                .withPropertyValues("sluice.policies.inline[0]=" + TWO_PER_DAY)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(SluiceEndpoint.class);
                    assertThat(context).hasBean("sluiceFilterRegistration");
                    twoAllowedThenRefused(context.getBean(PolicyLimiter.class));
                });
    }

    @Test
    void withoutTheServletApiTheLimiterIsThereForTheApplicationToCall() {
        runner.withClassLoader(new FilteredClassLoader("jakarta.servlet"))
                .withPropertyValues("sluice.policies.inline[0]=" + TWO_PER_DAY)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean("sluiceFilterRegistration");
                    twoAllowedThenRefused(context.getBean(PolicyLimiter.class));
                });
    }

    @Test
    void withActuatorTheEndpointIsThere() {
        runner.withPropertyValues(
                        "sluice.policies.inline[0]=" + TWO_PER_DAY, "management.endpoints.web.exposure.include=sluice")
                .run(context -> {
                    SluiceEndpoint.Report report =
                            context.getBean(SluiceEndpoint.class).report();
                    assertEquals("sluice.policies.inline", report.source());
                    assertFalse(report.watched(), "inline policies are not watched");
                    assertEquals("sluice.policies.inline", report.lastReload().source());
                    assertEquals(
                            "version 1 in force, loaded at start",
                            report.lastReload().message());
                    assertEquals(
                            2,
                            report.domains().get("api").get(0).limits().get(0).requestsPerUnit());
                });
    }

    @Test
    void aFileChangedWhileTheContextIsStoppedIsInForceWhenItStartsAgain(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("api.yaml");
        Files.writeString(file, TWO_PER_DAY);
        runner.withPropertyValues("sluice.policies.location=" + file).run(context -> {
            PolicyLimiter limiter = context.getBean(PolicyLimiter.class);
            SluiceReloads reloads = context.getBean(SluiceReloads.class);
            assertTrue(reloads.watching());
            context.stop();
            assertFalse(reloads.watching());
            Files.writeString(file, TWO_PER_DAY.replace("requests_per_unit: 2", "requests_per_unit: 7"));
            context.start();
            assertEquals(2, limiter.version(), "reloaded on start");
            assertEquals(
                    7, limiter.policies().rules("api").get(0).limits().get(0).requestsPerUnit());
            assertTrue(reloads.watching());
        });
    }

    @Test
    void aStoreWhoseModuleIsMissingIsNamed() {
        runner.withClassLoader(new FilteredClassLoader("dev.sluice.redis"))
                .withPropertyValues("sluice.store.type=redis", "sluice.store.uri=redis://localhost:1")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessage("sluice.store.type=redis needs its module (dev.sluice:sluice-redis) on the class"
                                + " path, or define a RateLimitStore bean"));
    }
}
