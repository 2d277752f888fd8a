package dev.sluice.http;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Optional;

/**
 * Turns an HTTP request into the descriptors a {@link dev.sluice.policy.PolicyLimiter} checks: the adapter's only
 * knowledge of the application. {@link OAuthTokenExtractor} is the default, for an OAuth token endpoint.
 *
 * <p>An implementation must be thread-safe (one instance serves every request) and must not consume the request
 * body: the servlet behind the filter reads it after. Reading request parameters ({@link
 * HttpServletRequest#getParameter(String)}) is fine, since the container keeps them for later calls. A
 * {@link RuntimeException} it throws is logged and the request passes unlimited.
 */
@FunctionalInterface
public interface DescriptorExtractor {

    /**
     * The descriptors and cost of {@code request}, or empty if the request is not limited (it is passed on untouched,
     * with no rate-limit fields).
     */
    Optional<Extraction> extract(HttpServletRequest request);
}
