package dev.sluice.http;

import dev.sluice.policy.PolicyLimiter;
import dev.sluice.policy.Verdict;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A Jakarta Servlet filter that rate-limits requests through a {@link PolicyLimiter}: the {@link DescriptorExtractor}
 * turns a request into descriptors, the limiter decides under the filter's domain, and the filter answers.
 *
 * <pre>{@code
 * SluiceFilter filter = SluiceFilter.builder(limiter)
 *         .domain("oauth-token")
 *         .build();                                  // the OAuth extractor, no legacy fields
 * servletContext.addFilter("sluice", filter).addMappingForUrlPatterns(null, false, "/oauth2/token");
 * }</pre>
 *
 * <ul>
 *   <li><b>Allowed</b>: the request goes on, with {@code RateLimit-Policy} and {@code RateLimit} (draft-ietf-httpapi-
 *       ratelimit-headers-10) on the response, and the {@link Verdict} in the request attribute
 *       {@link #VERDICT_ATTRIBUTE}.
 *   <li><b>Refused</b>: {@code 429 Too Many Requests} with the same fields, {@code Retry-After} in whole seconds
 *       (never earlier than the {@code t} of a refusing limit) and an {@code application/problem+json} body of type
 *       {@code https://iana.org/assignments/http-problem-types#quota-exceeded} naming the limits in
 *       {@code violated-policies}. The chain is not called.
 *   <li><b>Dry run</b>: a {@code dry_run} limit never refuses; it is not advertised unless
 *       {@link Builder#advertiseDryRun(boolean)}.
 *   <li><b>Shadow ban</b>: the request goes on as if allowed, never advertised, with the path of the rule that
 *       banned it in the request attribute {@link #SHADOW_BAN_ATTRIBUTE}: the application drops the work.
 *   <li><b>Not limited</b> (the extractor returned empty, or no rule matched): the request goes on with no field. The
 *       first request the extractor finds no descriptor in is logged at {@code WARNING}, later ones at {@code DEBUG} at
 *       most once a minute.
 *   <li><b>Failures</b>: a store failure is answered by the domain's {@code on_store_failure}, as the
 *       {@link Verdict} says ({@code allow} passes, {@code deny} refuses with a {@code 429}, with no
 *       {@code Retry-After} and no {@code RateLimit} count, since the store gave none); an exception of the extractor
 *       or the limiter is logged and the request passes with no field. The filter never answers {@code 500} on the
 *       limiter's account.
 * </ul>
 *
 * Thread-safe and immutable; the limiter's configuration may be reloaded under it. Requests that are not HTTP pass
 * untouched, and a request the filter has already decided (a forward or include) is not counted again.
 */
public final class SluiceFilter implements Filter {

    /** The request attribute holding the {@link Verdict} of a limited request. */
    public static final String VERDICT_ATTRIBUTE = "dev.sluice.http.verdict";

    /** The request attribute holding the path of the rule that shadow-banned the request (a {@link String}). */
    public static final String SHADOW_BAN_ATTRIBUTE = "dev.sluice.http.shadowBan";

    private static final System.Logger LOG = System.getLogger(SluiceFilter.class.getName());

    private final PolicyLimiter limiter;
    private final String domain;
    private final DescriptorExtractor extractor;
    private final boolean legacyHeaders;
    private final boolean advertiseDryRun;
    private final UnlimitedRequestLog unlimited;

    private SluiceFilter(Builder b, String domain) {
        this.limiter = b.limiter;
        this.domain = domain;
        this.extractor = b.extractor;
        this.legacyHeaders = b.legacyHeaders;
        this.advertiseDryRun = b.advertiseDryRun;
        this.unlimited = new UnlimitedRequestLog(toString());
    }

    /** A builder over {@code limiter}; the domain is required. */
    public static Builder builder(PolicyLimiter limiter) {
        return new Builder(limiter);
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (!Refusals.taken(request, response, VERDICT_ATTRIBUTE)) {
            chain.doFilter(request, response);
            return;
        }
        HttpServletRequest req = (HttpServletRequest) request;
        HttpServletResponse res = (HttpServletResponse) response;
        Verdict verdict = decide(req);
        if (verdict == null) {
            chain.doFilter(request, response);
            return;
        }
        req.setAttribute(VERDICT_ATTRIBUTE, verdict);
        RateLimitFields fields = RateLimitFields.of(verdict, limiter.dryRun(), advertiseDryRun);
        writeFields(res, fields);
        if (verdict.allowed()) {
            verdict.shadowBanRule().ifPresent(rule -> req.setAttribute(SHADOW_BAN_ATTRIBUTE, rule.path()));
            chain.doFilter(request, response);
            return;
        }
        Refusals.tooManyRequests(res, fields.retryAfter(), ProblemJson.quotaExceeded(fields));
    }

    /** The verdict on the request; null when it is not limited, or when deciding failed. */
    private @Nullable Verdict decide(HttpServletRequest req) {
        try {
            Optional<Extraction> e = extractor.extract(req);
            if (e.isEmpty()) {
                unlimited.passed(req);
                return null;
            }
            return limiter.check(domain, e.get().descriptors(), e.get().costs());
        } catch (RuntimeException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    () -> "rate limiting failed, the request passes unlimited: " + req.getMethod() + " "
                            + req.getRequestURI(),
                    e);
            return null;
        }
    }

    private void writeFields(HttpServletResponse res, RateLimitFields fields) {
        String policy = fields.policyField();
        if (policy != null) {
            res.setHeader("RateLimit-Policy", policy);
        }
        String rateLimit = fields.rateLimitField();
        if (rateLimit != null) {
            res.setHeader("RateLimit", rateLimit);
        }
        if (legacyHeaders) {
            fields.threeNumberFields("X-RateLimit-").forEach(res::setHeader);
        }
    }

    @Override
    public String toString() {
        return "SluiceFilter[domain=" + domain + ", " + extractor + "]";
    }

    /** Builds a {@link SluiceFilter}. Not thread-safe. */
    public static final class Builder {

        private final PolicyLimiter limiter;
        private @Nullable String domain;
        private DescriptorExtractor extractor = OAuthTokenExtractor.create();
        private boolean legacyHeaders;
        private boolean advertiseDryRun;

        private Builder(PolicyLimiter limiter) {
            this.limiter = Objects.requireNonNull(limiter, "limiter must not be null");
        }

        /** The domain of the configuration the requests are checked under, e.g. {@code oauth-token}. Required. */
        public Builder domain(String domain) {
            Objects.requireNonNull(domain, "domain must not be null");
            if (domain.isEmpty()) {
                throw new IllegalArgumentException("domain must not be empty");
            }
            this.domain = domain;
            return this;
        }

        /** How a request becomes descriptors; default {@link OAuthTokenExtractor#create()}. */
        public Builder extractor(DescriptorExtractor extractor) {
            this.extractor = Objects.requireNonNull(extractor, "extractor must not be null");
            return this;
        }

        /**
         * Also send {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and {@code X-RateLimit-Reset} (seconds
         * until reset, not a time) for the decisive limit, for clients written against them; default off.
         */
        public Builder legacyHeaders(boolean legacyHeaders) {
            this.legacyHeaders = legacyHeaders;
            return this;
        }

        /**
         * Advertise dry-run limits ({@code mode: dry_run}, or the limiter's global dry run) in the fields, with their
         * real counts; default off, so a dry run changes nothing a client can see.
         */
        public Builder advertiseDryRun(boolean advertiseDryRun) {
            this.advertiseDryRun = advertiseDryRun;
            return this;
        }

        /**
         * Builds the filter.
         *
         * @throws IllegalStateException if no domain was given
         */
        public SluiceFilter build() {
            String d = domain;
            if (d == null) {
                throw new IllegalStateException("a domain is required: SluiceFilter.builder(limiter).domain(...)");
            }
            return new SluiceFilter(this, d);
        }
    }
}
