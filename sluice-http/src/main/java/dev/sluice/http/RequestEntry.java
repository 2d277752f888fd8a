package dev.sluice.http;

import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * One entry of a descriptor and where its value comes from in a request, as one of Envoy's rate-limit actions
 * ({@code remote_address}, {@code request_headers}, {@code generic_key}) appends one entry to a descriptor. Entries are
 * composed into descriptors by {@link RequestDescriptors}. Immutable and thread-safe.
 *
 * @param key    the descriptor key the policy's rules match, e.g. {@code api_key}
 * @param source what the value is, by its name in properties and messages: {@code remote-address}, {@code header},
 *               {@code principal}, {@code path} or {@code value}
 * @param value  reads the value from a request; null or empty when the request has none
 */
public record RequestEntry(String key, String source, Function<? super HttpServletRequest, @Nullable String> value) {

    private static final String PRINCIPAL = "principal";

    /**
     * Checks the parts.
     *
     * @throws IllegalArgumentException if {@code key} or {@code source} is empty
     */
    public RequestEntry {
        Objects.requireNonNull(key, "key must not be null");
        Objects.requireNonNull(source, "source must not be null");
        Objects.requireNonNull(value, "value must not be null");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("key must not be empty");
        }
        if (source.isEmpty()) {
            throw new IllegalArgumentException("source must not be empty");
        }
    }

    /**
     * The client's address, {@link HttpServletRequest#getRemoteAddr()}: the peer of the connection, or, behind a proxy
     * the container trusts (Tomcat's {@code RemoteIpValve}, Spring Boot's {@code server.forward-headers-strategy}),
     * the address it forwarded. Every request has one.
     */
    public static RequestEntry remoteAddress(String key) {
        return new RequestEntry(key, "remote-address", HttpServletRequest::getRemoteAddr);
    }

    /**
     * The first value of the request header {@code name}, such as an API key ({@code X-Api-Key}); a request without it
     * has no value.
     *
     * @throws IllegalArgumentException if {@code name} is empty
     */
    public static RequestEntry header(String key, String name) {
        Objects.requireNonNull(name, "header name must not be null");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("header name must not be empty for key '" + key + "'");
        }
        return new RequestEntry(key, "header " + name, r -> r.getHeader(name));
    }

    /**
     * The name of the authenticated principal, {@link HttpServletRequest#getUserPrincipal()}; an unauthenticated
     * request has none. Only a filter that runs after authentication sees one (with Spring Security: ordered after its
     * chain, or placed inside it).
     */
    public static RequestEntry principal(String key) {
        return new RequestEntry(key, PRINCIPAL, RequestEntry::principalName);
    }

    /**
     * The path within the application, decoded and normalized by the container, without the context path or the query:
     * {@code /api/orders/42}. Match it with a wildcard value in the policy ({@code value: /api/orders/*}).
     */
    public static RequestEntry path(String key) {
        return new RequestEntry(key, "path", RequestEntry::pathWithinApplication);
    }

    /**
     * The same value for every request, as Envoy's {@code generic_key}: a constant first entry that names what is
     * limited, e.g. {@code value("api", "orders")} before a per-key entry.
     *
     * @throws IllegalArgumentException if {@code value} is empty
     */
    public static RequestEntry value(String key, String value) {
        Objects.requireNonNull(value, "value must not be null");
        if (value.isEmpty()) {
            throw new IllegalArgumentException("value must not be empty for key '" + key + "'");
        }
        return new RequestEntry(key, "value", r -> value);
    }

    /** Whether this is a {@link #principal(String)} entry, which only an authenticated request has a value for. */
    public boolean readsPrincipal() {
        return source.equals(PRINCIPAL);
    }

    /** The name of the request's authenticated principal; null if it has none. */
    static @Nullable String principalName(HttpServletRequest request) {
        Principal p = request.getUserPrincipal();
        return p == null ? null : p.getName();
    }

    private static String pathWithinApplication(HttpServletRequest request) {
        String info = request.getPathInfo();
        return info == null ? request.getServletPath() : request.getServletPath() + info;
    }

    @Override
    public String toString() {
        return key + "=" + source;
    }
}
