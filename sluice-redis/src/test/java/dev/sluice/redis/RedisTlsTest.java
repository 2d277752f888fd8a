package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.assembly.AssembledStore;
import dev.sluice.assembly.StoreAssembly;
import dev.sluice.assembly.StoreUriException;
import dev.sluice.testkit.LogCapture;
import dev.sluice.testkit.server.Certificates;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The store over TLS ({@code rediss://} with {@code tlsCa}, {@code tlsCert}, {@code tlsKey} and Lettuce's
 * {@code verifyPeer}) against a real Redis serving TLS with certificates made here: one server for the class, its TLS
 * port beside the plain one through which each case sets whether Redis asks for client certificates. A store that
 * reaches Redis decides by it (of a limit of 2, two allowed, the third refused); one that does not is not connected and the
 * log says why.
 */
class RedisTlsTest {
    @TempDir
    static Path dir;

    private static Certificates certs;
    private static RedisServer redis;
    private static int tlsPort;

    @BeforeAll
    static void start() throws IOException {
        certs = new Certificates(dir);
        certs.ca("ca");
        certs.ca("other-ca");
        // the server's certificate names 127.0.0.1 only: reached as localhost, its host name does not match
        certs.signed("server", "ca", "subjectAltName=IP:127.0.0.1");
        certs.signed("client", "ca", "extendedKeyUsage=clientAuth");
        redis = RedisServers.startTls(certs.crt("server"), certs.key("server"), certs.crt("ca"), "no");
        tlsPort = redis.tlsPort();
    }

    @AfterAll
    static void stop() {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void aServerTheGivenCaSignedIsReached() {
        clientCertificates("no");
        assertDecidedByRedis("rediss://127.0.0.1:" + tlsPort + "?tlsCa=" + certs.crt("ca"), "ca");
    }

    @Test
    void mutualTlsNeedsTheClientCertificate() {
        clientCertificates("yes");
        assertDecidedByRedis(
                "rediss://127.0.0.1:" + tlsPort + "?tlsCa=" + certs.crt("ca") + "&tlsCert=" + certs.crt("client")
                        + "&tlsKey=" + certs.key("client"),
                "mutual");
        assertUnreachable("rediss://127.0.0.1:" + tlsPort + "?tlsCa=" + certs.crt("ca"), "SSLHandshakeException");
    }

    @Test
    void aServerAnotherCaSignedIsRefused() {
        clientCertificates("no");
        assertUnreachable(
                "rediss://127.0.0.1:" + tlsPort + "?tlsCa=" + certs.crt("other-ca"),
                "unable to find valid certification path");
    }

    @Test
    void theHostNameIsVerifiedUnlessVerifyPeerIsCa() {
        clientCertificates("no");
        assertUnreachable("rediss://localhost:" + tlsPort + "?tlsCa=" + certs.crt("ca"), "No name matching localhost");
        assertDecidedByRedis("rediss://localhost:" + tlsPort + "?tlsCa=" + certs.crt("ca") + "&verifyPeer=CA", "host");
    }

    @Test
    void aFileThatCannotBeUsedStopsTheOpenNamingIt() throws IOException {
        Path missing = dir.resolve("missing.crt");
        String m = refusal("rediss://127.0.0.1:" + tlsPort + "?tlsCa=" + missing);
        assertTrue(m.contains("tlsCa=" + missing + ": cannot read the file (NoSuchFileException)"), m);
        Path bad = Files.writeString(dir.resolve("bad.key"), "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWJ5dGVz\n");
        m = refusal("rediss://127.0.0.1:" + tlsPort + "?tlsCert=" + certs.crt("client") + "&tlsKey=" + bad);
        assertTrue(m.contains("cannot use tlsCert=" + certs.crt("client") + ", tlsKey=" + bad + " for TLS"), m);
        assertFalse(m.contains("c2VjcmV0"), m);
        m = refusal("rediss://127.0.0.1:" + tlsPort + "?tlsCert=" + certs.crt("client"));
        assertTrue(m.contains("tlsCert and tlsKey go together"), m);
        m = refusal("redis://127.0.0.1:" + redis.port() + "?tlsCa=" + certs.crt("ca"));
        assertTrue(m.contains("tlsCa: TLS files apply to rediss:// (a single server over TLS) only"), m);
    }

    private static String refusal(String uri) {
        return assertThrows(StoreUriException.class, () -> open(uri)).getMessage();
    }

    /** Whether Redis asks every TLS client for a certificate its CA signed: {@code yes} or {@code no}. */
    private static void clientCertificates(String yesOrNo) {
        redis.call("CONFIG", "SET", "tls-auth-clients", yesOrNo);
    }

    private static AssembledStore open(String uri) {
        return StoreAssembly.builder().timeout(Duration.ofSeconds(2)).build().open(uri);
    }

    /** A limit of 2 an hour on a key of its own: allowed, allowed, refused, by Redis (not by the failure policy). */
    private static void assertDecidedByRedis(String uri, String key) {
        try (AssembledStore store = open(uri);
                RateLimiter limiter = store.store().bind(config())) {
            List<Boolean> allowed = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Decision d = limiter.tryAcquire(key);
                assertFalse(d.failed(), d.toString());
                allowed.add(d.allowed());
            }
            assertEquals(List.of(true, true, false), allowed);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /**
     * The store is not connected, its decisions are the failure policy's, and its one warning says what TLS refused:
     * {@code why}, the root cause of Lettuce's "Unable to connect".
     */
    private static void assertUnreachable(String uri, String why) {
        try (LogCapture log = LogCapture.start();
                AssembledStore store = open(uri);
                RateLimiter limiter = store.store().bind(config())) {
            assertFalse(((RedisStore) store.store()).isConnected());
            assertTrue(limiter.tryAcquire("unreachable").failed());
            List<String> lines = log.messagesContaining("Sluice: not connected to Redis after");
            assertEquals(1, lines.size(), lines.toString());
            assertTrue(lines.get(0).contains(", caused by ") && lines.get(0).contains(why), lines.get(0));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static LimiterConfig config() {
        return new LimiterConfig(Algorithm.FIXED_WINDOW, 2, Duration.ofHours(1), Clock.systemUTC(), false, 1, false);
    }
}
