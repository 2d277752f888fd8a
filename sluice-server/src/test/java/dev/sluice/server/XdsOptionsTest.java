package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code serve}'s {@code --xds-*} options: what they set, and each mistake refused by name. */
class XdsOptionsTest {
    static XdsSubscription.Settings xds(String... args) {
        XdsSubscription.Settings s =
                ServeCommand.xds(Options.parse("serve", List.of(args), ServeCommand.VALUED, ServeCommand.FLAGS));
        if (s == null) {
            throw new AssertionError("no xDS settings from " + List.of(args));
        }
        return s;
    }

    static String refusal(String... args) {
        return assertThrows(UsageException.class, () -> xds(args)).getMessage();
    }

    @Test
    void defaultsAreEnvoyproxyRatelimits() {
        XdsSubscription.Settings s = xds("--xds-server", "xds:18000");
        assertEquals("xds:18000", s.target());
        assertEquals("default", s.nodeId());
        assertEquals(Map.of(), s.metadata());
        assertNull(s.tls());
        assertEquals(Duration.ofSeconds(3), s.retryInterval());
        assertEquals(Duration.ofSeconds(60), s.retryMax());
        assertNull(ServeCommand.xds(Options.parse("serve", List.of(), ServeCommand.VALUED, ServeCommand.FLAGS)));
    }

    @Test
    void everyOptionIsRead() {
        XdsSubscription.Settings s = xds(
                "--xds-server", "xds:18000",
                "--xds-node-id", "n1",
                "--xds-node-metadata", "a=1,b=x=y,c=",
                "--xds-tls-ca", "pom.xml",
                "--xds-tls-cert", "pom.xml",
                "--xds-tls-key", "pom.xml",
                "--xds-tls-san", "xds.example",
                "--xds-retry-interval", "250ms",
                "--xds-retry-max", "2s");
        assertEquals("n1", s.nodeId());
        assertEquals(Map.of("a", "1", "b", "x=y", "c", ""), s.metadata());
        assertEquals(
                new XdsSubscription.Tls(Path.of("pom.xml"), Path.of("pom.xml"), Path.of("pom.xml"), "xds.example"),
                s.tls());
        assertEquals(Duration.ofMillis(250), s.retryInterval());
        assertEquals(Duration.ofSeconds(2), s.retryMax());
        assertEquals(
                new XdsSubscription.Tls(null, null, null, null),
                xds("--xds-server", "x:1", "--xds-tls").tls());
    }

    @Test
    void mistakesAreRefusedByName() {
        assertEquals("serve: --xds-node-id needs --xds-server", refusal("--xds-node-id", "n"));
        assertEquals("serve: --xds-tls needs --xds-server", refusal("--xds-tls"));
        assertTrue(refusal("--xds-server", "x:1", "--config", "c.yaml").contains("either --config or --xds-server"));
        assertTrue(
                refusal("--xds-server", "x:1", "--xds-node-metadata", "a=1,b").contains("the entry 'b' has no '='"));
        assertTrue(refusal("--xds-server", "x:1", "--xds-node-metadata", "=1").contains("the entry '=1' has no key"));
        assertTrue(refusal("--xds-server", "x:1", "--xds-tls-cert", "pom.xml").contains("go together"));
        assertTrue(refusal("--xds-server", "x:1", "--xds-tls-ca", "no-such.pem")
                .contains("--xds-tls-ca 'no-such.pem' is not valid: expected a readable file"));
        assertTrue(refusal("--xds-server", "x:1", "--xds-retry-interval", "5s", "--xds-retry-max", "1s")
                .contains("--xds-retry-max '1s' is not valid: expected at least --xds-retry-interval"));
        assertTrue(refusal("--xds-server", "x:1", "--xds-node-id", "").contains("a non-empty node id"));
    }

    @Test
    void theBackoffDoublesUpToItsMaximumWithJitter() throws Exception {
        XdsSubscription.Settings s =
                xds("--xds-server", "127.0.0.1:1", "--xds-retry-interval", "100ms", "--xds-retry-max", "1s");
        try (var limiter = dev.sluice.policy.PolicyLimiter.builder(dev.sluice.policy.Policies.empty())
                        .store(dev.sluice.memory.InMemoryStore.create())
                        .build();
                XdsSubscription sub = new XdsSubscription(s, limiter, () -> {})) {
            long[][] bounds = {{50, 100}, {100, 200}, {200, 400}, {400, 800}, {500, 1000}, {500, 1000}};
            for (int failures = 0; failures < bounds.length; failures++) {
                for (int i = 0; i < 50; i++) {
                    long ms = sub.backoff(failures).toMillis();
                    assertTrue(
                            ms >= bounds[failures][0] && ms <= bounds[failures][1],
                            failures + " failures: " + ms + "ms");
                }
            }
            assertTrue(sub.backoff(200).toMillis() <= 1000, "no overflow");
        }
    }
}
