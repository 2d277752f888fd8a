package dev.sluice.http;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A real servlet container (Jetty 12, ee10) on a free loopback port: a trivial token servlet at every path, behind the
 * filters given per path, and an HTTP client to call it.
 */
final class TokenServer implements AutoCloseable {

    /** How many requests reached the servlet, past the filter. */
    final AtomicInteger served = new AtomicInteger();

    private final Server server;
    private final HttpClient client = HttpClient.newHttpClient();
    private final URI base;

    /** Starts a server with {@code filters} mapped by URL pattern (e.g. {@code /token}). */
    TokenServer(Map<String, Filter> filters) throws Exception {
        server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        filters.forEach((path, filter) ->
                context.addFilter(new FilterHolder(filter), path, EnumSet.of(DispatcherType.REQUEST)));
        context.addServlet(new ServletHolder(new TokenServlet()), "/*");
        server.setHandler(context);
        server.start();
        base = URI.create("http://127.0.0.1:" + connector.getLocalPort());
    }

    /**
     * A token endpoint stand-in: reads the form parameters after the filter (proving the filter left the body
     * readable) and answers them, with the shadow-ban attribute, as {@code key=value} lines.
     */
    final class TokenServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doPost(HttpServletRequest req, HttpServletResponse res) throws IOException {
            served.incrementAndGet();
            res.setContentType("text/plain");
            res.getWriter()
                    .print("grant_type=" + req.getParameter("grant_type") + "\nscope=" + req.getParameter("scope")
                            + "\nshadowBan=" + req.getAttribute(SluiceFilter.SHADOW_BAN_ATTRIBUTE) + "\n");
        }
    }

    /**
     * POSTs {@code form} to {@code path} as {@code application/x-www-form-urlencoded}, with HTTP Basic credentials of
     * {@code basicUser} and a secret unless it is null; a {@code basicUser} starting with {@code "Basic "} is sent as
     * the Authorization field as it is.
     */
    HttpResponse<String> post(String path, Map<String, String> form, String basicUser) throws Exception {
        String body = form.entrySet().stream()
                .map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8) + "="
                        + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (basicUser != null && basicUser.startsWith("Basic ")) {
            b.header("Authorization", basicUser);
        } else if (basicUser != null) {
            b.header(
                    "Authorization",
                    "Basic "
                            + Base64.getEncoder()
                                    .encodeToString((basicUser + ":s3cret").getBytes(StandardCharsets.UTF_8)));
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A client_credentials request of {@code clientId} in the form. */
    HttpResponse<String> clientCredentials(String path, String clientId) throws Exception {
        return post(path, form("grant_type", "client_credentials", "client_id", clientId, "scope", "read"), null);
    }

    static Map<String, String> form(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            throw new IllegalStateException("Jetty did not stop", e);
        }
    }
}
