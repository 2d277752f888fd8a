package dev.sluice.http;

import dev.sluice.assembly.AssembledStore;
import dev.sluice.assembly.StoreAssembly;
import dev.sluice.assembly.StoreMode;
import dev.sluice.policy.Descriptor;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.testkit.FrontDoorContract;
import dev.sluice.testkit.HttpFrontDoor;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The {@link FrontDoorContract} through {@link SluiceFilter} in a real servlet container (Jetty, one for the class):
 * one filter per domain and limiter, at {@code /memory/<domain>} over the in-memory store on a clock set to
 * {@link FrontDoorContract#NOW}, and at {@code /<mode>-redis/<domain>} over a Redis of the test's own in each mode. The
 * request's descriptors and costs come in a header, read by the test's extractor.
 */
class FilterFrontDoorTest extends FrontDoorContract {

    /** The test's extractor: the descriptors and their costs from {@link FrontDoorContract#REQUEST_HEADER}. */
    static final DescriptorExtractor FROM_HEADER = request -> {
        String header = request.getHeader(REQUEST_HEADER);
        if (header == null) {
            return Optional.empty();
        }
        List<Part> parts = Request.parts(header);
        List<Descriptor> descriptors = new ArrayList<>();
        long[] costs = new long[parts.size()];
        for (int i = 0; i < costs.length; i++) {
            descriptors.add(Descriptor.of(parts.get(i).key(), parts.get(i).value()));
            costs[i] = parts.get(i).cost();
        }
        return Optional.of(Extraction.withCosts(descriptors, costs));
    };

    final List<AutoCloseable> resources = new ArrayList<>();
    final Map<StoreMode, FrontDoor> onRedis = new EnumMap<>(StoreMode.class);
    RedisServer redis;
    Server jetty;
    FrontDoor inMemory;

    @BeforeAll
    void start() throws Exception {
        Path dir = Files.createTempDirectory("sluice-front-door");
        for (Map.Entry<String, String> f : POLICIES.entrySet()) {
            Files.writeString(dir.resolve(f.getKey()), f.getValue());
        }
        Policies policies = Policies.load(dir);
        redis = RedisServers.start();
        jetty = new Server();
        ServerConnector connector = new ServerConnector(jetty);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        jetty.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");

        Map<String, MeterRegistry> registries = new LinkedHashMap<>();
        SimpleMeterRegistry memoryMeters = new SimpleMeterRegistry();
        registries.put("memory", memoryMeters);
        PolicyLimiter memory = PolicyLimiter.builder(policies)
                .clock(new ManualClock(NOW))
                .meterRegistry(memoryMeters)
                .build();
        resources.add(memory);
        addFilters(context, "memory", memory);
        for (StoreMode mode : StoreMode.values()) {
            AssembledStore store = StoreAssembly.builder()
                    .mode(mode)
                    .interval(Duration.ofMillis(100))
                    .timeout(Duration.ofSeconds(2))
                    .build()
                    .open(redis.uri());
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            PolicyLimiter limiter = PolicyLimiter.builder(policies)
                    .store(store.store())
                    .meterRegistry(meters)
                    .build();
            resources.add(limiter);
            resources.add(store);
            String prefix = mode.name().toLowerCase(Locale.ROOT) + "-redis";
            addFilters(context, prefix, limiter);
            registries.put(prefix, meters);
        }
        context.addServlet(new ServletHolder(new Application()), "/*");
        jetty.setHandler(context);
        jetty.start();
        registries.forEach((prefix, meters) -> {
            FrontDoor door = new HttpFrontDoor(
                    "the filter in Jetty, " + prefix,
                    URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/" + prefix + "/"),
                    () -> counts(meters),
                    prefix.equals("memory"));
            if (prefix.equals("memory")) {
                inMemory = door;
            } else {
                onRedis.put(
                        StoreMode.valueOf(
                                prefix.substring(0, prefix.indexOf('-')).toUpperCase(Locale.ROOT)),
                        door);
            }
        });
    }

    /** A filter per domain over {@code limiter}, at {@code /<prefix>/<domain>}. */
    static void addFilters(ServletContextHandler context, String prefix, PolicyLimiter limiter) {
        for (String domain : DOMAINS) {
            SluiceFilter filter = SluiceFilter.builder(limiter)
                    .domain(domain)
                    .extractor(FROM_HEADER)
                    .build();
            context.addFilter(
                    new FilterHolder(filter), "/" + prefix + "/" + domain, EnumSet.of(DispatcherType.REQUEST));
        }
    }

    @AfterAll
    void stop() throws Exception {
        if (jetty != null) {
            jetty.stop();
        }
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    protected List<FrontDoor> doors() {
        return List.of(inMemory);
    }

    @Override
    protected List<FrontDoor> doorsOn(StoreMode mode) {
        return List.of(onRedis.get(mode));
    }

    @Override
    protected void stopTheStore() {
        redis.stop();
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

    /** The application behind the filters: answers 200, and tells the shadow ban the filter set. */
    static final class Application extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doPost(HttpServletRequest req, HttpServletResponse res) throws IOException {
            Object banned = req.getAttribute(SluiceFilter.SHADOW_BAN_ATTRIBUTE);
            if (banned != null) {
                res.setHeader(SHADOW_BAN_HEADER, banned.toString());
            }
            res.getWriter().print("ok");
        }
    }
}
