package dev.sluice.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.http.SluiceFilter;
import dev.sluice.testkit.FieldsScenario;
import dev.sluice.testkit.ManualClock;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ApplicationContext;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * The starter's rate-limit fields in the {@link FieldsScenario}, whose values the service's
 * {@code SameFieldsAsTheFilterTest} asserts too: both front doors name, count and time a limit alike.
 */
class SameFieldsAsTheServiceTest {

    final WebApplicationContextRunner app = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
            .withBean(SluiceAutoConfiguration.CLOCK_BEAN, Clock.class, () -> new ManualClock(FieldsScenario.NOW))
            .withPropertyValues("sluice.policies.inline[0]=" + FieldsScenario.POLICY);

    /** The rate-limit fields the filter sets on a client-credentials token request of {@code client}. */
    static Map<String, String> headers(ApplicationContext context, String client) throws Exception {
        @SuppressWarnings("unchecked")
        FilterRegistrationBean<SluiceFilter> registration =
                context.getBean("sluiceFilterRegistration", FilterRegistrationBean.class);
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/oauth2/token");
        request.setContentType("application/x-www-form-urlencoded");
        request.addParameter("grant_type", "client_credentials");
        request.addParameter("client_id", client);
        MockHttpServletResponse response = new MockHttpServletResponse();
        registration.getFilter().doFilter(request, response, new MockFilterChain());
        Map<String, String> headers = new HashMap<>();
        for (String name : new String[] {"RateLimit-Policy", "RateLimit"}) {
            String value = response.getHeader(name);
            if (value != null) {
                headers.put(name, value);
            }
        }
        return headers;
    }

    @Test
    void aRuleNamedByItsPathCountedDownThenRefused() {
        app.run(context -> {
            for (Map<String, String> expected : FieldsScenario.COUNTED_FIELDS) {
                assertEquals(expected, headers(context, FieldsScenario.COUNTED));
            }
        });
    }

    @Test
    void aNamedLimitIsPrintableAsciiAndQuoted() {
        app.run(context -> assertEquals(FieldsScenario.NAMED_FIELDS, headers(context, FieldsScenario.NAMED)));
    }
}
