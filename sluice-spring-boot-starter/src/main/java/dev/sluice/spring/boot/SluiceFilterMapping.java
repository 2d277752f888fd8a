package dev.sluice.spring.boot;

import dev.sluice.http.DescriptorExtractor;
import dev.sluice.http.OAuthTokenExtractor;
import dev.sluice.http.RequestDescriptors;
import dev.sluice.http.RequestEntry;
import java.util.List;

/**
 * What the starter can tell at start about the filter's mapping: whether the requests it will see can produce a
 * descriptor at all. A filter that cannot limits nothing and says nothing, so this says it once, at {@code WARNING}:
 *
 * <ul>
 *   <li>the OAuth token request extractor on a pattern with a wildcard ({@code /api/*}): only token requests carry a
 *       {@code grant_type} and a client id, and every other request there passes unlimited;
 *   <li>an extractor that needs the authenticated principal (the OAuth extractor's authenticated client, or
 *       descriptors each with a {@code principal} entry) ordered before Spring Security's filter chain, which has not
 *       authenticated anyone yet.
 * </ul>
 */
final class SluiceFilterMapping {

    private static final System.Logger LOG = System.getLogger(SluiceAutoConfiguration.class.getName());

    /** Spring Security's filter chain's order in a Spring Boot application ({@code spring.security.filter.order}). */
    static final int SPRING_SECURITY_ORDER = -100;

    private SluiceFilterMapping() {}

    static void warnIfNothingCanBeLimited(
            DescriptorExtractor extractor, List<String> urlPatterns, int order, boolean springSecurity) {
        if (extractor instanceof OAuthTokenExtractor) {
            List<String> wide =
                    urlPatterns.stream().filter(p -> p.contains("*")).toList();
            if (!wide.isEmpty()) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "sluice.filter.url-patterns " + wide + " map the filter to paths that are not a token endpoint,"
                                + " but its extractor (" + extractor
                                + ") finds descriptors only in OAuth token requests"
                                + " (a grant_type and a client id): every other request there passes unlimited. To"
                                + " limit them, set sluice.filter.descriptors (remote-address, header, principal,"
                                + " path) or define a DescriptorExtractor bean");
            }
        }
        if (springSecurity && order < SPRING_SECURITY_ORDER && needsPrincipal(extractor)) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "sluice.filter.order " + order + " runs the filter before Spring Security's filter chain ("
                            + SPRING_SECURITY_ORDER + "), where no request is authenticated yet, but its extractor ("
                            + extractor + ") needs the authenticated principal: no request can produce a descriptor."
                            + " Set sluice.filter.order above " + SPRING_SECURITY_ORDER + ", or set"
                            + " sluice.filter.register=false and add the filter to the security chain");
        }
    }

    /** Whether every descriptor the extractor can produce needs an authenticated principal. */
    static boolean needsPrincipal(DescriptorExtractor extractor) {
        if (extractor instanceof OAuthTokenExtractor oauth) {
            return oauth.readsAuthenticatedClient();
        }
        if (extractor instanceof RequestDescriptors request) {
            return request.descriptors().stream().allMatch(d -> d.stream().anyMatch(RequestEntry::readsPrincipal));
        }
        return false;
    }
}
