package dev.sluice.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.http.SluiceFilter;
import dev.sluice.testkit.ManualClock;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * The starter's rate-limit fields for the requests, policy and time of the service's {@code SameFieldsAsTheFilterTest}
 * (sluice-server), which asserts the same values: both front doors name, count and time a limit alike.
 */
class SameFieldsAsTheServiceTest {

    static final String POLICY =
            """
            domain: api
            descriptors:
              - key: client_id
                rate_limit: {unit: minute, requests_per_unit: 3}
              - key: client_id
                value: big
                rate_limit: {unit: minute, requests_per_unit: 2, name: 'größe "2"'}
            """;

    static final Instant NOW = Instant.parse("2026-01-01T10:00:00.250Z");

    final WebApplicationContextRunner app = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
            .withBean(SluiceAutoConfiguration.CLOCK_BEAN, Clock.class, () -> new ManualClock(NOW))
            .withPropertyValues("sluice.policies.inline[0]=" + POLICY);

    /** The rate-limit fields the filter sets on a client-credentials token request of {@code client}. */
    static Map<String, String> headers(SluiceFilter filter, String client) throws Exception {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/oauth2/token");
        request.setContentType("application/x-www-form-urlencoded");
        request.addParameter("grant_type", "client_credentials");
        request.addParameter("client_id", client);
        MockHttpServletResponse response = new MockHttpServletResponse();
        filter.doFilter(request, response, new MockFilterChain());
        Map<String, String> headers = new LinkedHashMap<>();
        for (String name : new String[] {"RateLimit-Policy", "RateLimit"}) {
            String value = response.getHeader(name);
            if (value != null) {
                headers.put(name, value);
            }
        }
        return headers;
    }

    @SuppressWarnings("unchecked")
    static SluiceFilter filter(org.springframework.context.ApplicationContext context) {
        return ((FilterRegistrationBean<SluiceFilter>)
                        context.getBean("sluiceFilterRegistration", FilterRegistrationBean.class))
                .getFilter();
    }

    @Test
    void aRuleNamedByItsPathCountedDownThenRefused() {
        app.run(context -> {
            SluiceFilter filter = filter(context);
            Map<String, String> policy = Map.of("RateLimit-Policy", "\"client_id\";q=3;w=60");
            assertEquals(with(policy, "RateLimit", "\"client_id\";r=2;t=60"), headers(filter, "abc"));
            assertEquals(with(policy, "RateLimit", "\"client_id\";r=1;t=60"), headers(filter, "abc"));
            assertEquals(with(policy, "RateLimit", "\"client_id\";r=0;t=60"), headers(filter, "abc"));
            assertEquals(with(policy, "RateLimit", "\"client_id\";r=0;t=60"), headers(filter, "abc"), "refused");
        });
    }

    @Test
    void aNamedLimitIsPrintableAsciiAndQuoted() {
        app.run(context -> assertEquals(
                Map.of(
                        "RateLimit-Policy", "\"gr%C3%B6%C3%9Fe \\\"2\\\"\";q=2;w=60",
                        "RateLimit", "\"gr%C3%B6%C3%9Fe \\\"2\\\"\";r=1;t=60"),
                headers(filter(context), "big")));
    }

    static Map<String, String> with(Map<String, String> fields, String key, String value) {
        Map<String, String> m = new LinkedHashMap<>(fields);
        m.put(key, value);
        return m;
    }
}
