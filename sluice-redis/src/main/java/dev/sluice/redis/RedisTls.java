package dev.sluice.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SslOptions;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The TLS files of a {@code rediss://} URI, its query parameters {@value #CA} (the CA certificates Redis's certificate
 * is checked against, PEM, instead of the JVM's trust store), {@value #CERT} and {@value #KEY} (this client's
 * certificate chain and its unencrypted PKCS#8 key, PEM, for a Redis that asks for client certificates), as Lettuce's
 * {@link SslOptions}. Lettuce's own {@code verifyPeer=CA} (check the chain, not the host name) stays in the URI for
 * Lettuce to read. The files are read and parsed once, here: a file that cannot be read or used is an
 * {@link IllegalArgumentException} naming its parameter and path, never showing what is in it.
 *
 * @param uri     the URI without these parameters, for Lettuce
 * @param options the options they ask for; null when the URI has none of them
 */
record RedisTls(String uri, @Nullable SslOptions options) {

    /** The CA certificates' parameter. */
    static final String CA = "tlsCa";
    /** The client certificate's parameter. */
    static final String CERT = "tlsCert";
    /** The client key's parameter. */
    static final String KEY = "tlsKey";

    private static final List<String> PARAMETERS = List.of(CA, CERT, KEY);

    /**
     * Takes the TLS parameters out of {@code uri} and reads their files.
     *
     * @throws IllegalArgumentException if a parameter is given twice or empty, on a URI that is not {@code rediss://},
     *                                  with a certificate but no key (or a key but no certificate), or if a file
     *                                  cannot be read or holds no usable PEM
     */
    static RedisTls of(String uri) {
        int q = uri.indexOf('?');
        if (q < 0) {
            return new RedisTls(uri, null);
        }
        int hash = uri.indexOf('#', q);
        int end = hash < 0 ? uri.length() : hash;
        Map<String, String> files = new LinkedHashMap<>();
        List<String> kept = new ArrayList<>();
        for (String pair : uri.substring(q + 1, end).split("&", -1)) {
            int eq = pair.indexOf('=');
            String name = eq < 0 ? pair : pair.substring(0, eq);
            if (!PARAMETERS.contains(name)) {
                kept.add(pair);
                continue;
            }
            String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            if (value.isEmpty()) {
                throw new IllegalArgumentException(name + " needs a file: " + name + "=/path/to/file.pem");
            }
            if (files.put(name, value) != null) {
                throw new IllegalArgumentException(name + " is given twice");
            }
        }
        String rest = uri.substring(0, q) + (kept.isEmpty() ? "" : "?" + String.join("&", kept)) + uri.substring(end);
        if (files.isEmpty()) {
            return new RedisTls(rest, null);
        }
        if (!uri.regionMatches(true, 0, "rediss://", 0, "rediss://".length())) {
            throw new IllegalArgumentException(String.join(", ", files.keySet())
                    + ": TLS files apply to rediss:// (a single server over TLS) only");
        }
        if (files.containsKey(CERT) != files.containsKey(KEY)) {
            throw new IllegalArgumentException(
                    CERT + " and " + KEY + " go together (a client certificate and its key): give both");
        }
        SslOptions.Builder b = SslOptions.builder();
        String ca = files.get(CA);
        if (ca != null) {
            byte[] bytes = read(CA, ca);
            b.trustManager(() -> new ByteArrayInputStream(bytes));
        }
        String cert = files.get(CERT);
        String key = files.get(KEY);
        if (cert != null && key != null) {
            byte[] certBytes = read(CERT, cert);
            byte[] keyBytes = read(KEY, key);
            b.keyManager(() -> new ByteArrayInputStream(certBytes), () -> new ByteArrayInputStream(keyBytes), null);
        }
        SslOptions options = b.build();
        try {
            // parses every file now, as each connection would: a bad one stops the start, not each connection
            var unusedBuilder = options.createSslContextBuilder();
        } catch (IOException | GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "cannot use " + describe(files) + " for TLS: "
                            + e.getClass().getSimpleName()
                            + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"),
                    e);
        }
        return new RedisTls(rest, options);
    }

    /** {@code options} with this URI's TLS files, if it has any. */
    ClientOptions apply(ClientOptions options) {
        return this.options == null
                ? options
                : options.mutate().sslOptions(this.options).build();
    }

    private static byte[] read(String parameter, String file) {
        try {
            return Files.readAllBytes(Path.of(file));
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException(
                    parameter + "=" + file + ": cannot read the file ("
                            + e.getClass().getSimpleName() + ")",
                    e);
        }
    }

    private static String describe(Map<String, String> files) {
        List<String> named = new ArrayList<>();
        files.forEach((name, file) -> named.add(name + "=" + file));
        return String.join(", ", named);
    }
}
