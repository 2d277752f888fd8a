package dev.sluice.testkit.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * TLS certificates for tests, made by {@code openssl} in a directory of the test's: CAs and certificates they sign,
 * each {@code NAME.crt} with its unencrypted PKCS#8 key {@code NAME.key} (P-256), valid for two days.
 *
 * <pre>{@code
 * Certificates certs = new Certificates(dir);
 * certs.ca("ca");
 * certs.signed("server", "ca", "subjectAltName=DNS:localhost,IP:127.0.0.1");
 * certs.signed("client", "ca", "extendedKeyUsage=clientAuth");
 * Path cert = certs.crt("server");
 * }</pre>
 */
public final class Certificates {
    private final Path dir;

    /** Certificates made in {@code dir}. */
    public Certificates(Path dir) {
        this.dir = dir;
    }

    /** Makes the self-signed CA {@code name} ({@code name.crt}, {@code name.key}); answers its certificate. */
    public Path ca(String name) {
        openssl(
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                name + ".key",
                "-out",
                name + ".crt",
                "-days",
                "2",
                "-subj",
                "/CN=" + name);
        return crt(name);
    }

    /**
     * Makes the certificate {@code name} that the CA {@code ca} signs, with the X.509 v3 {@code extensions} in
     * {@code openssl}'s extension-file form, one a line ({@code subjectAltName=IP:127.0.0.1}); answers it.
     */
    public Path signed(String name, String ca, String... extensions) {
        try {
            Files.writeString(dir.resolve(name + ".ext"), String.join("\n", extensions) + "\n");
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + name + ".ext in " + dir, e);
        }
        openssl(
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                name + ".key",
                "-out",
                name + ".csr",
                "-subj",
                "/CN=" + name);
        openssl(
                "x509",
                "-req",
                "-in",
                name + ".csr",
                "-CA",
                ca + ".crt",
                "-CAkey",
                ca + ".key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                name + ".ext",
                "-out",
                name + ".crt");
        return crt(name);
    }

    /** The certificate {@code name.crt}. */
    public Path crt(String name) {
        return dir.resolve(name + ".crt");
    }

    /** The key {@code name.key}. */
    public Path key(String name) {
        return dir.resolve(name + ".key");
    }

    private void openssl(String... args) {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
            }
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot run openssl (" + e.getMessage() + "): install it (apt-get install openssl)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + String.join(" ", command), e);
        }
    }
}
