package dev.sluice.http;

import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** What the filters of this package do alike: which requests they take, and how they answer a refusal. */
final class Refusals {

    private Refusals() {}

    /**
     * Whether a filter takes this request: an HTTP request and response, not already marked with {@code attribute} (a
     * forward or include of a request the filter has seen is not counted again).
     */
    static boolean taken(ServletRequest request, ServletResponse response, String attribute) {
        return request instanceof HttpServletRequest
                && response instanceof HttpServletResponse
                && request.getAttribute(attribute) == null;
    }

    /**
     * Answers {@code 429} with {@code Retry-After: retryAfterSeconds} (none if negative: no wait is known to help) and
     * the {@code application/problem+json} {@code body}.
     */
    static void tooManyRequests(HttpServletResponse res, long retryAfterSeconds, String body) throws IOException {
        res.setStatus(429);
        if (retryAfterSeconds >= 0) {
            res.setHeader("Retry-After", Long.toString(retryAfterSeconds));
        }
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        res.setContentType(ProblemJson.MEDIA_TYPE);
        res.setContentLength(bytes.length);
        res.getOutputStream().write(bytes);
    }
}
