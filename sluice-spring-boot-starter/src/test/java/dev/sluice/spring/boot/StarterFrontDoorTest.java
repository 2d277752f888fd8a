package dev.sluice.spring.boot;

import dev.sluice.assembly.StoreMode;
import dev.sluice.http.DescriptorExtractor;
import dev.sluice.http.Extraction;
import dev.sluice.http.SluiceFilter;
import dev.sluice.policy.Descriptor;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.testkit.FrontDoorContract;
import dev.sluice.testkit.HttpFrontDoor;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.web.servlet.context.ServletWebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The {@link FrontDoorContract} through the starter in a Spring Boot application on embedded Tomcat: one application
 * on the in-memory store with the starter's clock set to {@link FrontDoorContract#NOW}, and one per mode on a Redis of
 * the test's own ({@code sluice.store.mode}). The starter's filter checks domain {@code api} at {@code /api}; the
 * application adds a filter over the starter's {@link PolicyLimiter} for each other domain, since the starter
 * registers one. The request's descriptors and costs come in a header, read by the application's extractor.
 */
// Marked as a test class for Spring Boot's test type filter: its tests are inherited, and without the mark the
// component scan of the other starter tests' applications (same package) would take this class's application in.
@ExtendWith({})
class StarterFrontDoorTest extends FrontDoorContract {

    RedisServer redis;
    ConfigurableApplicationContext inMemory;
    final Map<StoreMode, ConfigurableApplicationContext> onRedis = new EnumMap<>(StoreMode.class);

    @BeforeAll
    void start() {
        redis = RedisServers.start();
        CompletableFuture<ConfigurableApplicationContext> memory = CompletableFuture.supplyAsync(() -> run(true));
        Map<StoreMode, CompletableFuture<ConfigurableApplicationContext>> starting = new EnumMap<>(StoreMode.class);
        for (StoreMode mode : StoreMode.values()) {
            starting.put(
                    mode,
                    CompletableFuture.supplyAsync(() -> run(
                            false,
                            "sluice.store.type=redis",
                            "sluice.store.uri=" + redis.uri(),
                            "sluice.store.mode=" + mode.name().toLowerCase(Locale.ROOT),
                            "sluice.store.interval=100ms",
                            // patient: a call slowed by a loaded machine must not become a failure answer
                            "sluice.store.timeout=2s")));
        }
        inMemory = memory.join();
        starting.forEach((mode, app) -> onRedis.put(mode, app.join()));
    }

    /** The application, with the policies and {@code properties}; on the clock at {@link #NOW} if {@code atNow}. */
    static ConfigurableApplicationContext run(boolean atNow, String... properties) {
        List<String> p = new ArrayList<>(List.of(
                "server.port=0",
                "server.address=127.0.0.1",
                "sluice.filter.domain=api",
                "sluice.filter.url-patterns=/api",
                "sluice.policies.watch=false"));
        int i = 0;
        for (String policy : POLICIES.values()) {
            p.add("sluice.policies.inline[" + i++ + "]=" + policy);
        }
        p.addAll(List.of(properties));
        SpringApplicationBuilder app =
                new SpringApplicationBuilder(Application.class).properties(p.toArray(String[]::new));
        if (atNow) {
            app.initializers(c -> c.getBeanFactory()
                    .registerSingleton(SluiceAutoConfiguration.CLOCK_BEAN, (Clock) new ManualClock(NOW)));
        }
        return app.run();
    }

    @AfterAll
    void stop() {
        if (inMemory != null) {
            inMemory.close();
        }
        onRedis.values().forEach(ConfigurableApplicationContext::close);
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    protected List<FrontDoor> doors() {
        return List.of(door("the starter, in memory", inMemory, true));
    }

    @Override
    protected List<FrontDoor> doorsOn(StoreMode mode) {
        return List.of(
                door("the starter, " + mode.name().toLowerCase(Locale.ROOT) + " on Redis", onRedis.get(mode), false));
    }

    @Override
    protected void stopTheStore() {
        redis.stop();
    }

    static FrontDoor door(String name, ConfigurableApplicationContext app, boolean atNow) {
        int port = ((ServletWebServerApplicationContext) app).getWebServer().getPort();
        MeterRegistry meters = app.getBean(MeterRegistry.class);
        return new HttpFrontDoor(name, URI.create("http://127.0.0.1:" + port + "/"), () -> counts(meters), atNow);
    }

    /** The counters of {@code meters} as they are now. */
    static Counts counts(MeterRegistry meters) {
        List<Counts.Sample> samples = new ArrayList<>();
        for (Meter m : meters.getMeters()) {
            if (m instanceof Counter c) {
                Map<String, String> tags = new LinkedHashMap<>();
                c.getId().getTags().forEach(t -> tags.put(t.getKey(), t.getValue()));
                samples.add(new Counts.Sample(c.getId().getName(), tags, c.count()));
            }
        }
        return new Counts(samples);
    }

    /** An application limited by the starter: it answers 200 and tells the shadow ban the filter set. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Application.Endpoint.class)
    static class Application {

        /** The descriptors and their costs from {@link FrontDoorContract#REQUEST_HEADER}. */
        @Bean
        DescriptorExtractor sluiceDescriptorExtractor() {
            return request -> {
                String header = request.getHeader(REQUEST_HEADER);
                if (header == null) {
                    return Optional.empty();
                }
                List<Part> parts = Request.parts(header);
                List<Descriptor> descriptors = new ArrayList<>();
                long[] costs = new long[parts.size()];
                for (int i = 0; i < costs.length; i++) {
                    descriptors.add(
                            Descriptor.of(parts.get(i).key(), parts.get(i).value()));
                    costs[i] = parts.get(i).cost();
                }
                return Optional.of(Extraction.withCosts(descriptors, costs));
            };
        }

        @Bean
        FilterRegistrationBean<SluiceFilter> openFilter(PolicyLimiter limiter, DescriptorExtractor extractor) {
            return filter(limiter, extractor, "open");
        }

        @Bean
        FilterRegistrationBean<SluiceFilter> closedFilter(PolicyLimiter limiter, DescriptorExtractor extractor) {
            return filter(limiter, extractor, "closed");
        }

        static FilterRegistrationBean<SluiceFilter> filter(
                PolicyLimiter limiter, DescriptorExtractor extractor, String domain) {
            FilterRegistrationBean<SluiceFilter> r = new FilterRegistrationBean<>(SluiceFilter.builder(limiter)
                    .domain(domain)
                    .extractor(extractor)
                    .build());
            r.setName(domain + "Filter");
            r.addUrlPatterns("/" + domain);
            return r;
        }

        @RestController
        static class Endpoint {
            @PostMapping({"/api", "/open", "/closed"})
            ResponseEntity<String> answer(HttpServletRequest request) {
                Object banned = request.getAttribute(SluiceFilter.SHADOW_BAN_ATTRIBUTE);
                ResponseEntity.BodyBuilder ok = ResponseEntity.ok();
                if (banned != null) {
                    ok.header(SHADOW_BAN_HEADER, banned.toString());
                }
                return ok.body("ok");
            }
        }
    }
}
