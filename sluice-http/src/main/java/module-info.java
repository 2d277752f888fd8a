/**
 * Sluice for servlet applications: {@link dev.sluice.http.SluiceFilter}, a Jakarta Servlet filter that limits requests
 * through a {@link dev.sluice.policy.PolicyLimiter}. A {@link dev.sluice.http.DescriptorExtractor} turns a request into
 * descriptors (by default {@link dev.sluice.http.OAuthTokenExtractor}, the OAuth token endpoint's scheme); a refusal is
 * a {@code 429} with {@code Retry-After}, the IETF {@code RateLimit-Policy} and {@code RateLimit} fields and an
 * {@code application/problem+json} body.
 */
@SuppressWarnings({"requires-transitive-automatic", "requires-automatic"})
module dev.sluice.http {
    requires static transitive org.jspecify;
    requires transitive dev.sluice.policy;
    requires transitive jakarta.servlet;

    exports dev.sluice.http;
}
