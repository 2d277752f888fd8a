package dev.sluice.server;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import org.jspecify.annotations.Nullable;

/**
 * The gRPC port's TLS: {@code --grpc-tls-cert} and {@code --grpc-tls-key} (PEM files) serve gRPC over TLS only; with
 * {@code --grpc-tls-ca} every client must present a certificate that CA signed (mutual TLS). The files are read once,
 * at start; an unreadable or unusable one stops the start with a message naming it. Key material is never printed.
 */
final class GrpcTls {

    private GrpcTls() {}

    /**
     * The server's TLS context from the options, or null when they ask for none.
     *
     * @throws UsageException when only one of the certificate and the key is given, or a CA without them
     * @throws IOException    naming the file that cannot be read or used
     */
    static @Nullable SslContext fromOptions(Options o) throws IOException {
        String cert = o.string("grpc-tls-cert");
        String key = o.string("grpc-tls-key");
        String ca = o.string("grpc-tls-ca");
        if (cert == null && key == null) {
            if (ca != null) {
                throw new UsageException("serve: --grpc-tls-ca needs --grpc-tls-cert and --grpc-tls-key");
            }
            return null;
        }
        if (cert == null || key == null) {
            throw new UsageException("serve: --grpc-tls-cert and --grpc-tls-key go together: give both");
        }
        return load(Path.of(cert), Path.of(key), ca == null ? null : Path.of(ca));
    }

    static SslContext load(Path cert, Path key, @Nullable Path ca) throws IOException {
        checkCertificates(cert, "certificate (--grpc-tls-cert)");
        readable(key, "key (--grpc-tls-key)");
        if (ca != null) {
            checkCertificates(ca, "client CA (--grpc-tls-ca)");
        }
        SslContextBuilder builder;
        try {
            builder = GrpcSslContexts.forServer(cert.toFile(), key.toFile());
        } catch (IllegalArgumentException e) {
            // the certificate was read above, so it is the key; its message is not shown, it may quote the file
            throw new IOException("the gRPC TLS key (--grpc-tls-key) " + key
                    + " holds no usable private key: an unencrypted PEM key (PKCS#8, BEGIN PRIVATE KEY) is expected");
        }
        if (ca != null) {
            builder.trustManager(ca.toFile()).clientAuth(ClientAuth.REQUIRE);
        }
        try {
            return builder.build();
        } catch (IOException | RuntimeException e) {
            throw new IOException("the gRPC TLS certificate " + cert + " and key " + key
                    + " cannot be used together (is the key the certificate's?)");
        }
    }

    private static void readable(Path file, String what) throws IOException {
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw new IOException("cannot read the gRPC TLS " + what + " " + file
                    + (Files.exists(file) ? ": not a readable file" : ": no such file"));
        }
    }

    private static void checkCertificates(Path file, String what) throws IOException {
        readable(file, what);
        try (InputStream in = Files.newInputStream(file)) {
            if (CertificateFactory.getInstance("X.509").generateCertificates(in).isEmpty()) {
                throw new CertificateException("none found");
            }
        } catch (CertificateException e) {
            throw new IOException(
                    "the gRPC TLS " + what + " " + file + " holds no PEM certificate (BEGIN CERTIFICATE)");
        }
    }
}
